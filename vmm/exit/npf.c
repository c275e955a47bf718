/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Nested page faults outside the VM's RAM (the exit fast path takes the
 * xAPIC page's itself): the vCPU's own xAPIC page, else a device's page
 * through the VM's device table, else the VM's unbacked= policy
 * (vmm/exit/unbacked.h).
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/vlapic_dev.h"
#include "vmm/exit/exits.h"
#include "vmm/exit/guest_access.h"
#include "vmm/exit/mmio.h"
#include "vmm/exit/unbacked.h"

/*
 * A nested page fault at d's MMIO range: decode the instruction (the VM
 * stops, bad-state, if it cannot be), run d's callback, give a load its
 * value and step past it.
 */
static void device_mmio(struct vcpu *v, const struct exit_record *e, struct dev_entry *d)
{
    v->npf_slot = (uint8_t)d->index;
    v->stats.npf_exits[d->index]++;
    struct mmio_op op;
    if (!mmio_fetch(v, e, d->dev->what, &op))
        return;
    struct dev_access a = {.addr = e->npf.gpa, .size = op.size, .op = &op};
    if (op.write)
        a.value = mmio_store_data(v, &op);
    /* A load nobody answers reads all ones. */
    if (dev_mmio(d, v, op.write, &a) != DEV_DONE)
        a.value = ~0ull;
    if (!op.write)
        mmio_load_done(v, &op, a.value);
    vcpu_advance(v, op.len);
}

void vlapic_dev_mmio(struct vcpu *v, const struct exit_record *e)
{
    /* The direct way in (no lookup): the vCPU's own entry, as the table has it. */
    struct dev_entry d = {&lapic_device, v->vm, v, &v->lapic, BUILTIN_LAPIC, 0};
    device_mmio(v, e, &d);
}

void handle_npf(struct vcpu *v, const struct exit_record *e)
{
    /* The vCPU's own xAPIC page, wherever IA32_APIC_BASE put it, before any other device's. */
    if (xapic_page_access(v, e)) {
        vlapic_dev_mmio(v, e);
        return;
    }
    /* A device's page (the I/O APIC's, virtio's): through the table. Never a fetch. */
    struct dev_entry *d = e->npf.fetch ? 0 : vm_devices_find_mmio(v->vm, v, e->npf.gpa);
    if (d) {
        device_mmio(v, e, d);
        return;
    }
    bool emulated = unbacked_emulated(v->vm->cfg.unbacked, e->npf.fetch);
    v->npf_slot = emulated ? NPF_UNBACKED : NPF_OUTSIDE;
    v->stats.npf_exits[v->npf_slot]++;
    if (emulated) {
        struct mmio_op op;
        if (!mmio_fetch(v, e, "unbacked memory", &op))
            return;
        uint64_t value = unbacked_access(&v->vm->unbacked, &op);
        if (!op.write)
            mmio_load_done(v, &op, value);
        vcpu_advance(v, op.len);
        return;
    }
    vm_fail_access(v, e->npf.gpa, "%s guest-physical 0x%lx, outside the VM's memory",
                   e->npf.fetch   ? "instruction fetch from"
                   : e->npf.write ? "write to"
                                  : "read from",
                   e->npf.gpa);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The I/O APIC device (vmm/dev/vioapic.c has its registers): the MMIO window at
 * IOAPIC_BASE in PC VMs, under the VM's devices lock, and the messages its
 * pins send, to the local APICs once the lock is dropped. Every VM has it,
 * as every KVM VM has the in-kernel irqchip's and every PC one, unless its
 * ioapic=off: then it has none, and the pins the 16550 and virtio drive go
 * nowhere (vm_ioapic is NULL), as they did when they were masked for good
 * with no window to program them.
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/dev/vlapic_dev.h"
#include "vmm/dev/vm_devices.h"

#define IOAPIC_MMIO_SIZE 0x20 /* IOREGSEL and IOWIN; the rest of the page reads 0 */

void vm_ioapic_send(struct vm *vm, const struct ioapic_msg *m)
{
    struct vlapic_ipi ipi = {.vector = m->vector,
                             .mode = (enum apic_delivery)m->mode,
                             .shorthand = APIC_DEST_NONE,
                             .logical = m->logical,
                             .level = true,
                             .trigger_level = m->level,
                             .dest = m->dest};
    vlapic_dev_interrupt(vm, &ipi);
}

/* Registers take aligned 32-bit accesses; others are dropped (reads give all ones). */
static bool is_register(const struct dev_access *a)
{
    return a->size == 4 && !(a->offset & 3) && a->offset < IOAPIC_MMIO_SIZE;
}

static enum dev_result mmio_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    struct vm *vm = d->vm;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    a->value = is_register(a) ? ioapic_read(d->state, (uint32_t)a->offset) : ~0ull;
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    return DEV_DONE;
}

static enum dev_result mmio_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    struct vm *vm = d->vm;
    struct ioapic_msg m;
    bool fire = false;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    if (is_register(a))
        fire = ioapic_write(d->state, (uint32_t)a->offset, (uint32_t)a->value, &m);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    if (fire)
        vm_ioapic_send(vm, &m);
    return DEV_DONE;
}

void vm_devices_eoi(struct vm *vm, uint8_t vector)
{
    struct ioapic *io = vm_ioapic(vm);
    if (!io)
        return;
    struct ioapic_msg m[IOAPIC_PINS];
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    unsigned n = ioapic_eoi(io, vector, m);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    for (unsigned i = 0; i < n; i++)
        vm_ioapic_send(vm, &m[i]);
}

static void reset(struct dev_entry *d)
{
    ioapic_reset(d->state);
}

static bool present(const struct vm *vm)
{
    return vm->cfg.ioapic;
}

static const struct dev_range page[] = {{IOAPIC_BASE, IOAPIC_BASE + 0xfff}};

const struct device ioapic_device = {
    .name = "ioapic",
    .what = "the I/O APIC",
    .present = present,
    .mmio = {page, 1, mmio_read, mmio_write},
    .state_size = sizeof(struct ioapic),
    .reset = reset,
};

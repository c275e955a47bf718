/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 8254 as a device of a legacy_pic=on VM (vmm/dev/vpit.c has its
 * counters): ports 0x40-0x43 and 0x61, byte accesses, under the VM's
 * devices lock. Its clock is the host TSC, the local APIC timer's time base
 * less the vCPU's offset: a guest's write of its own TSC must not move the
 * PIT. Channel 0's next IRQ 0 edge is its entry's deadline, which vCPU 0's
 * own host timer serves (vm_devices_deadline, folded in by
 * vcpu_timer_update), so it lives and moves with vCPU 0 as the local APIC
 * timer does; its expiry (the expire hook, from vmm/vcpu/vcpu.c's
 * timer_expired) pulses IRQ 0 through the PIC's line (vm_pic_set_irq).
 */
#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/vm_devices.h"
#include "vmm/dev/vpit.h"

#define PIT_IRQ 0

/* Under devices_lock: the entry's deadline follows the PIT; true if it changed. */
static bool deadline_changed(struct dev_entry *d)
{
    return dev_set_deadline(d, vpit_irq_deadline(d->state));
}

/* Its deadline came (vm_devices_expire): true if the PIC's INT rose. */
static bool expire(struct dev_entry *d, uint64_t now)
{
    struct vm *vm = d->vm;
    bool rose = false;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    if (vpit_expire(d->state, now)) {
        /* IRQ 0 is edge-triggered (the ELCR cannot make it level): the rising edge is all. */
        rose = vm_pic_set_irq(vm, PIT_IRQ, true);
        rose |= vm_pic_set_irq(vm, PIT_IRQ, false);
    }
    deadline_changed(d);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    return rose;
}

static enum dev_result port_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->size != 1)
        return DEV_NOT_MINE;
    struct vm *vm = d->vm;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    a->value = vpit_read(d->state, (uint16_t)a->addr, rdtsc());
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    return DEV_DONE;
}

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->size != 1)
        return DEV_NOT_MINE;
    struct vm *vm = d->vm;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    vpit_write(d->state, (uint16_t)a->addr, (uint8_t)a->value, rdtsc());
    bool moved = deadline_changed(d);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    if (moved)
        vm_devices_deadline_moved(vm);
    return DEV_DONE;
}

/* Power-on: ticking at 18.2 Hz as the firmware leaves it (vmm/dev/pic.c's reset: IRQ 0 unmasked).
 */
static void reset(struct dev_entry *d)
{
    vpit_reset(d->state, tsc_khz * 1000);
    vpit_bios_state(d->state, rdtsc());
    deadline_changed(d);
}

static bool present(const struct vm *vm)
{
    return vm->cfg.legacy_pic;
}

static const struct dev_range ports[] = {
    {PIT_PORT_CHANNEL0, PIT_PORT_MODE},
    {PIT_PORT_B, PIT_PORT_B},
};

const struct device pit_device = {
    .name = "pit",
    .present = present,
    .ports = {ports, 2, port_read, port_write},
    .state_size = sizeof(struct vpit),
    .reset = reset,
    .expire = expire,
    .stats = &vpit_stats_table,
};

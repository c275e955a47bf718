/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 8259 pair as a device of a legacy_pic=on VM (vmm/dev/vpic.c has its
 * registers): ports 0x20-0x21, 0xa0-0xa1 and the ELCR at 0x4d0-0x4d1, byte
 * accesses, under the VM's devices lock. Its INT goes to vCPU 0 only, as a
 * PC wires it to the BSP's LINT0: vm->extint follows it for vCPU 0's entry
 * and halt (vcpu_extint_pending), and a rise tells vCPU 0 (vcpu_notify).
 * vCPU 0's entry then takes the vector with the interrupt acknowledge (the
 * intack hook, vm_devices_intack) and injects it itself (vmm/vcpu/vcpu.c,
 * prepare_entry).
 * A legacy_pic=off VM has the masks only (vmm/dev/pic_masks.c) instead.
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/vm_devices.h"
#include "vmm/dev/vpic.h"
#include "vmm/vcpu/vcpu.h"

/* The 8259s' registers, in the table's storage (legacy_pic=on VMs only). */
static struct vpic *pic_of(struct vm *vm)
{
    return vm_devices_entry(&vm->devices, BUILTIN_PIC)->state;
}

bool vm_pic_changed(struct vm *vm)
{
    bool was = vm->extint, output = pic_of(vm)->output;
    __atomic_store_n(&vm->extint, output, __ATOMIC_RELEASE);
    return output && !was;
}

bool vm_pic_set_irq(struct vm *vm, unsigned irq, bool level)
{
    vpic_set_irq(pic_of(vm), irq, level);
    return vm_pic_changed(vm);
}

void vm_pic_kick(struct vm *vm)
{
    struct vcpu *v = vm->vcpus[0];
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    vcpu_notify(v, TRACE_WAKE_DEVICE, NULL);
    spin_unlock_irqrestore(&v->se.lock, flags);
}

/*
 * vCPU 0's interrupt acknowledge, at the entry that injects it (under its
 * lock): the vector, IRR to ISR. KVM's kvm_cpu_get_extint.
 */
static uint8_t intack(struct dev_entry *d)
{
    struct vm *vm = d->vm;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    uint8_t vector = vpic_ack(d->state);
    vm_pic_changed(vm); /* it can only have fallen: the caller sees it again */
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    return vector;
}

static enum dev_result port_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->size != 1)
        return DEV_NOT_MINE;
    struct vm *vm = d->vm;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    a->value = vpic_read(d->state, (uint16_t)a->addr);
    /* A poll acknowledges: the INT may fall. */
    vm_pic_changed(vm);
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
    vpic_write(d->state, (uint16_t)a->addr, (uint8_t)a->value);
    bool rose = vm_pic_changed(vm);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    if (rose)
        vm_pic_kick(vm);
    return DEV_DONE;
}

/* Power-on: as the firmware leaves them to a boot loader and its kernel (KVM's VMs boot SeaBIOS).
 */
static void reset(struct dev_entry *d)
{
    vpic_reset(d->state);
    vpic_bios_state(d->state);
    d->vm->extint = false;
}

static bool present(const struct vm *vm)
{
    return vm->cfg.legacy_pic;
}

static const struct dev_range ports[] = {
    {PIC_MASTER, PIC_MASTER + 1},
    {PIC_SLAVE, PIC_SLAVE + 1},
    {PIC_ELCR_MASTER, PIC_ELCR_SLAVE},
};

const struct device pic_device = {
    .name = "pic",
    .present = present,
    .ports = {ports, 3, port_read, port_write},
    .state_size = sizeof(struct vpic),
    .reset = reset,
    .intack = intack,
    .stats = &vpic_stats_table,
};

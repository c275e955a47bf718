/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM's side of its virtio-mmio devices (virtio_vm.h). An interrupt is
 * an edge on the slot's pin (edge-triggered, active high, as the VM's ACPI
 * tables declare it): the line goes up and down under the VM's devices lock
 * and the message goes out after it is dropped, as COM1's does
 * (vmm/dev/com1.c).
 */
#include "vmm/dev/virtio/virtio_vm.h"

#include "drivers/console.h"
#include "lib/json.h"
#include "sched/sched.h"
#include "vmm/dev/vm_devices.h"

static void pulse(struct virtio_mmio *t)
{
    struct vm *vm = t->owner;
    unsigned pin = VIRTIO_GSI_FIRST + t->slot;
    struct ioapic_msg m, fall;
    struct ioapic *io = vm_ioapic(vm);
    if (!io)
        return;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    bool fire = ioapic_set_line(io, pin, true, &m);
    ioapic_set_line(io, pin, false, &fall); /* an edge pin's fall sends nothing */
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    if (fire)
        vm_ioapic_send(vm, &m);
}

/* A broken queue: the guest's driver (Linux 6.1) never reads DEVICE_NEEDS_RESET; this says why. */
static void report_fault(struct virtio_mmio *t, unsigned queue, enum virtq_fault f)
{
    struct vm *vm = t->owner;
    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "kind", "virtio");
    json_str(&j, "vm", vm->cfg.name);
    json_str(&j, "device", t->ops->name);
    json_u64(&j, "queue", queue);
    json_str(&j, "fault", virtq_fault_name(f));
    console_event("warning", &j);
    kprintf("pollux: vm %s: virtio-%s queue %u: %s fault: the device stops until the guest "
            "resets it\n",
            vm->cfg.name, t->ops->name, queue, virtq_fault_name(f));
}

/* On the notifying vCPU's CPU: its scheduler loop runs the rest between entries. */
static void defer(struct virtio_mmio *t)
{
    sched_defer(&t->work);
}

static const struct virtio_env vm_env = {pulse, report_fault, defer};

struct guest_ram virtio_vm_ram(struct vm *vm)
{
    uint8_t *base = vm_gpa_ptr(vm, 0, vm->cfg.mem);
    /* No block at 0 (never for a pollux VM): an empty RAM, in which every ring is a fault. */
    return (struct guest_ram){base, base ? vm->cfg.mem : 0};
}

void virtio_vm_init(struct virtio_mmio *t, struct vm *vm, const struct virtio_device_ops *ops,
                    unsigned slot)
{
    virtio_mmio_init(t, ops, &vm_env, vm, slot, virtio_vm_ram(vm));
    vm->virtio[slot] = t;
}

void virtio_vm_cancel(struct vm *vm)
{
    for (unsigned slot = 0; slot < VIRTIO_SLOTS; slot++)
        if (vm->virtio[slot])
            sched_defer_cancel(&vm->virtio[slot]->work);
}

enum dev_result virtio_vm_mmio_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    a->value = virtio_mmio_read(d->state, a->offset, a->size);
    return DEV_DONE;
}

enum dev_result virtio_vm_mmio_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    virtio_mmio_write(d->state, a->offset, a->size, (uint32_t)a->value);
    return DEV_DONE;
}

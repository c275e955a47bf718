/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's side of its virtio-mmio devices (vmm/dev/virtio/virtio_mmio.h is
 * the pure transport): the env (pulse the slot's I/O APIC pin, report a
 * queue's fault as @warning {"kind":"virtio"}), the VM's RAM as the walker
 * sees it, and the MMIO callbacks a device's `struct device` uses. A
 * device (vmm/dev/virtio/net.c, blk.c) calls virtio_vm_init from its reset,
 * claims VIRTIO_VM_RANGE(slot) with virtio_vm_mmio_read/write, and its
 * `state` hook returns the transport, which the callbacks find in d->state.
 */
#ifndef POLLUX_VMM_DEV_VIRTIO_VIRTIO_VM_H
#define POLLUX_VMM_DEV_VIRTIO_VIRTIO_VM_H

#include "vmm/dev/device.h"
#include "vmm/dev/virtio/virtio_mmio.h"

struct vm;

/* The MMIO claim of slot's page (abi/virtio.h), as a struct dev_range initialiser. */
#define VIRTIO_VM_RANGE(slot)                                                                      \
    {                                                                                              \
        VIRTIO_MMIO_BASE + (slot) * (uint64_t)VIRTIO_MMIO_SIZE,                                    \
            VIRTIO_MMIO_BASE + ((slot) + 1) * (uint64_t)VIRTIO_MMIO_SIZE - 1                       \
    }

/* The VM's RAM block at guest-physical 0 (all of cfg.mem). */
struct guest_ram virtio_vm_ram(struct vm *vm);

/* Power-on: t becomes vm->virtio[slot], with the VM's env and RAM. */
void virtio_vm_init(struct virtio_mmio *t, struct vm *vm, const struct virtio_device_ops *ops,
                    unsigned slot);

/*
 * The VM is going: its devices' deferred work is cancelled, and waited for
 * where it runs, before their state and the VM's RAM are freed.
 */
void virtio_vm_cancel(struct vm *vm);

/*
 * The page's accesses (d->state: the transport): 1, 2 or 4 bytes; the
 * registers take aligned 4-byte ones, the configuration space any of them;
 * anything else reads 0 and writes nothing.
 */
enum dev_result virtio_vm_mmio_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a);
enum dev_result virtio_vm_mmio_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a);

#endif

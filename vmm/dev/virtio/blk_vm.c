/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk as a VM's device (vmm/dev/virtio/blk.h): the `struct device`
 * of slot VIRTIO_SLOT_BLK, its page of the virtio window reaching the
 * transport through vmm/dev/virtio/virtio_vm.h. The device itself, its disk
 * in host RAM, is vm->blk, made with the VM (vmm/vmm.c: disk=).
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/virtio/blk.h"
#include "vmm/dev/virtio/virtio_vm.h"
#include "vmm/vm.h"

static bool present(const struct vm *vm)
{
    return vm->cfg.disk[0] != '\0';
}

static void *state(struct vm *vm, struct vcpu *v)
{
    (void)v;
    return &vm->blk->transport;
}

/* Power-on: the transport at Status 0 (the disk keeps what it holds). */
static void reset(struct dev_entry *d)
{
    virtio_vm_init(d->state, d->vm, &virtio_blk_ops, VIRTIO_SLOT_BLK);
}

static const struct dev_range mmio[] = {VIRTIO_VM_RANGE(VIRTIO_SLOT_BLK)};

const struct device virtio_blk_device = {
    .name = "virtio-blk",
    .what = "the virtio-blk device",
    .present = present,
    .mmio = {mmio, 1, virtio_vm_mmio_read, virtio_vm_mmio_write},
    .state = state,
    .reset = reset,
    .stats = &virtio_blk_stats_table,
};

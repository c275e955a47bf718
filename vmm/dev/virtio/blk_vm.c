/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk as a VM's device (vmm/dev/virtio/blk.h): the `struct device`
 * of slot VIRTIO_SLOT_BLK, its page of the virtio window reaching the
 * transport through vmm/dev/virtio/virtio_vm.h. The device itself, its disk
 * in host RAM, is vm->blk, made with the VM (vmm/vmm.c: disk=).
 */
#include "lib/json.h"
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

/* Read without the queue's lock: each counter is one aligned word, a snapshot is enough. */
static void stats(const struct dev_entry *d, struct json *j)
{
    const struct virtio_blk *b = d->vm->blk;
    const struct virtio_blk_stats *s = &b->stats;
    json_u64(j, "reads", s->reads);
    json_u64(j, "writes", s->writes);
    json_u64(j, "flushes", s->flushes);
    json_u64(j, "get_ids", s->get_ids);
    json_u64(j, "read_bytes", s->read_bytes);
    json_u64(j, "write_bytes", s->write_bytes);
    json_u64(j, "errors", s->errors);
    virtio_vm_stats(&b->transport, j);
}

static const struct dev_range mmio[] = {VIRTIO_VM_RANGE(VIRTIO_SLOT_BLK)};

const struct device virtio_blk_device = {
    .name = "virtio-blk",
    .what = "the virtio-blk device",
    .present = present,
    .mmio = {mmio, 1, virtio_vm_mmio_read, virtio_vm_mmio_write},
    .state = state,
    .reset = reset,
    .stats = stats,
};

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-net as a VM's device (vmm/dev/virtio/net.h): its state and its
 * switch port made when the VM is created, gone with the VM; the `struct
 * device` of slot VIRTIO_SLOT_NET (its page of the virtio window, through
 * the transport's MMIO callbacks of vmm/dev/virtio/virtio_vm.h).
 */
#include "vmm/dev/virtio/net_vm.h"

#include "arch/x86/mm.h"
#include "lib/format.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/virtio/virtio_vm.h"

static uint64_t net_pages(void)
{
    return (sizeof(struct virtio_net) + PAGE_SIZE - 1) / PAGE_SIZE;
}

int virtio_net_create(struct vm *vm, char *err, size_t errlen)
{
    struct virtio_net *n = page_alloc_zeroed(net_pages());
    if (!n) {
        snprintf(err, errlen, "net=%s: out of host memory for its device", vm->cfg.net);
        return -1;
    }
    uint8_t mac[NET_ETH_ALEN];
    virtio_net_mac(vm->number, mac);
    char why[128];
    /* The port's lock is the receive queue's: zero, unlocked, until the transport starts. */
    if (virtio_net_join(n, mac, vm->cfg.net, why, sizeof(why))) {
        snprintf(err, errlen, "net=%s: %s", vm->cfg.net, why);
        pmm_free(&host_pmm, (uint64_t)n, net_pages());
        return -1;
    }
    vm->net = n;
    return 0;
}

void virtio_net_free(struct vm *vm)
{
    struct virtio_net *n = vm->net;
    if (!n)
        return;
    virtio_net_leave(n);
    pmm_free(&host_pmm, (uint64_t)n, net_pages());
    vm->net = NULL;
    vm->virtio[VIRTIO_SLOT_NET] = NULL;
}

static bool present(const struct vm *vm)
{
    return vm->cfg.net[0] != '\0';
}

static void *state(struct vm *vm, struct vcpu *v)
{
    (void)v;
    return &vm->net->transport;
}

/*
 * Power-on: the transport at Status 0. At creation, before any VM runs, so
 * no sender holds the receive queue's lock (the port's) that this rewrites.
 */
static void reset(struct dev_entry *d)
{
    virtio_vm_init(d->state, d->vm, &virtio_net_ops, VIRTIO_SLOT_NET);
}

static const struct dev_range mmio[] = {VIRTIO_VM_RANGE(VIRTIO_SLOT_NET)};

const struct device virtio_net_device = {
    .name = "virtio-net",
    .what = "the virtio-net device",
    .present = present,
    .mmio = {mmio, 1, virtio_vm_mmio_read, virtio_vm_mmio_write},
    .state = state,
    .reset = reset,
    .stats = &virtio_net_stats_table,
};

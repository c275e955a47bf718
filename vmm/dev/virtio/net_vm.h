/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's virtio-net (vmm/dev/virtio/net.h) from its net= option: the device
 * is virtio_net_device (vmm/dev/builtin.h), its port on the switch of that
 * name (vmm/net/switch.h), its MAC from the VM's index (abi/virtio.h).
 */
#ifndef POLLUX_VMM_DEV_VIRTIO_NET_VM_H
#define POLLUX_VMM_DEV_VIRTIO_NET_VM_H

#include <stddef.h>

#include "vmm/dev/virtio/net.h"
#include "vmm/vm.h"

/*
 * vm->net, joined to the switch vm->cfg.net, once vm->index is set and
 * before any VM runs; its transport (vm->virtio[VIRTIO_SLOT_NET]) starts
 * with the device table (vm_devices_create). 0, or -1 with why in err,
 * naming net= (out of host memory, the switch full, no room for a switch).
 */
int virtio_net_create(struct vm *vm, char *err, size_t errlen);

/*
 * Leave the switch and give back what virtio_net_create took (nothing if it
 * did not run). Before the VM's RAM goes: until the port has left, another
 * VM may be copying a frame into it.
 */
void virtio_net_free(struct vm *vm);

#endif

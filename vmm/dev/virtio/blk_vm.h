/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's virtio-blk (vmm/dev/virtio/blk.h) from its disk= module: the module
 * after the VM's (after its initramfs, with initrd=) whose command line is
 * the word VIRTIO_BLK_MODULE. The device is virtio_blk_device
 * (vmm/dev/builtin.h).
 */
#ifndef POLLUX_VMM_DEV_VIRTIO_BLK_VM_H
#define POLLUX_VMM_DEV_VIRTIO_BLK_VM_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/dev/virtio/blk.h"
#include "vmm/vm.h"

#define VIRTIO_BLK_MODULE "disk" /* the disk module's command line (tools/run.py writes it) */

/*
 * Copy the disk (size bytes, zero-padded to whole sectors) into host RAM
 * and give the VM its device: vm->blk and vm->virtio[VIRTIO_SLOT_BLK].
 * Once the VM's RAM exists. 0, or -1 with why in err (out of host memory).
 */
int virtio_blk_create(struct vm *vm, const uint8_t *bytes, uint64_t size, char *err, size_t errlen);

/* Give back what virtio_blk_create took (nothing if it did not run). */
void virtio_blk_free(struct vm *vm);

#endif

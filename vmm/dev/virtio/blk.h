/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk (virtio 1.x, 5.2) over the virtio-mmio transport, served from
 * host RAM (docs/virtio.md): the disk= module's bytes, copied in when the VM
 * is created and rounded up to whole sectors with zeros. Writes stay in that
 * copy and are gone when the VM stops. Pure: it sees the disk as a buffer
 * and the guest through the transport, so the host unit tests and the
 * fuzzer drive it with plain buffers. The VM's side: vmm/vmm.c makes it
 * from the disk module (disk=), vmm/dev/virtio/blk_vm.c is its `struct
 * device`.
 *
 * Features: VERSION_1 (the transport's), SIZE_MAX, SEG_MAX, BLK_SIZE, FLUSH.
 * One queue. A request is a 16-byte readable header (le32 type, le32
 * reserved, le64 sector), its data, and a status byte, the last byte of the
 * chain's writable part. IN reads into the writable bytes before the status,
 * OUT writes the readable bytes after the header; both must be whole sectors
 * inside the disk, else VIRTIO_BLK_S_IOERR. A chain with a buffer over
 * SIZE_MAX is answered VIRTIO_BLK_S_IOERR whatever its type. FLUSH answers OK (RAM has
 * nothing to flush), GET_ID writes the 20-byte id, any other type answers
 * VIRTIO_BLK_S_UNSUPP. A chain without a whole header or a writable status
 * byte is a fault: the device breaks (DEVICE_NEEDS_RESET).
 */
#ifndef POLLUX_VMM_DEV_VIRTIO_BLK_H
#define POLLUX_VMM_DEV_VIRTIO_BLK_H

#include <stdint.h>

#include "vmm/dev/virtio/virtio_mmio.h"

/* The command line of a VM's disk module: the module after the VM's (and its initramfs's). */
#define VIRTIO_BLK_MODULE "disk"

#define VIRTIO_BLK_HDR_LEN 16 /* le32 type, le32 reserved, le64 sector */
/*
 * Without INDIRECT_DESC a request's descriptors must fit the ring: header,
 * data segments and status, so seg_max is QueueNumMax - 2 (Linux 6.1's
 * virtio_blk does not clamp it, and a larger request stalls). The walker
 * refuses a longer chain (a `loop` fault), so no request has more.
 */
#define VIRTIO_BLK_SEG_MAX (VIRTQ_NUM_MAX - 2)
/*
 * The longest buffer of a request, enforced: a chain with a longer one is
 * answered IOERR, nothing copied. With the walker's VIRTQ_NUM_MAX buffers
 * it bounds a request at 1 MiB, the most one pass can copy past its budget
 * (VIRTIO_PASS_BYTES; docs/robustness.md). A page: Linux's block layer
 * takes no smaller segment, and its requests stay at seg_max pages.
 */
#define VIRTIO_BLK_SIZE_MAX 4096u
#define VIRTIO_BLK_CONFIG_LEN                                                                      \
    24 /* capacity, size_max, seg_max, geometry (unused), blk_size (5.2.4) */

/* Statistics (virtio_blk_stats_table), under the queue's lock. */
struct virtio_blk_stats {
    uint64_t reads, writes, flushes, get_ids, read_bytes, write_bytes, errors;
};

struct virtio_blk {
    struct virtio_mmio transport; /* first: the transport's callbacks find the device */
    uint8_t *data;                /* sectors * VIRTIO_BLK_SECTOR bytes */
    uint64_t sectors;             /* the capacity, in 512-byte sectors */
    uint64_t bytes;               /* the disk module's size (data beyond it is zeros) */
    char id[VIRTIO_BLK_ID_BYTES]; /* GET_ID's answer: NUL-padded, not terminated at 20 */
    struct virtio_blk_stats stats;
};

/*
 * Set up b over its disk: data holds sectors whole sectors (bytes of them
 * the module's); id is cut to VIRTIO_BLK_ID_BYTES. The transport is the
 * caller's to set up next, with virtio_blk_ops (virtio_vm_init in a VM).
 */
void virtio_blk_init(struct virtio_blk *b, uint8_t *data, uint64_t sectors, uint64_t bytes,
                     const char *id);

/*
 * Serve one request chain: the data moved, the status byte written.
 * 0 and the bytes written into the chain (data and status: the used
 * length), or -1 and the fault in *fault: the chain has no whole header
 * (VIRTQ_FAULT_LENGTH; none at all: VIRTQ_FAULT_DIRECTION) or no writable
 * status byte (VIRTQ_FAULT_DIRECTION); nothing then was read or written.
 * Under the queue's lock.
 */
int virtio_blk_request(struct virtio_blk *b, const struct virtq_chain *c, uint32_t *written,
                       enum virtq_fault *fault);

/*
 * The device's ops: QueueNotify serves the queue (virtio_blk_request each
 * chain) within a pass's budget (virtio_mmio.h), and the rest as deferred
 * work.
 */
extern const struct virtio_device_ops virtio_blk_ops;

extern const struct stats_table virtio_blk_stats_table; /* its rows, its transport's */

#endif

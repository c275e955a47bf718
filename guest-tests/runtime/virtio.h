/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A minimal polled virtio-mmio driver for the bundled guests (abi/virtio.h,
 * docs/virtio.md): probe (magic, version 2, device ID), reset, the status
 * handshake (ACKNOWLEDGE, DRIVER, FEATURES_OK read back, DRIVER_OK) with
 * VERSION_1 and whatever else the caller asks for, split queues of a small
 * size in one 4 KiB page of guest memory each, chains published in the
 * avail ring, used elements polled for with a bounded wait, and
 * InterruptStatus read and acknowledged (no interrupt handler: the guest
 * never unmasks the device's I/O APIC pin). The guests run with paging off,
 * so the device window at VIRTIO_MMIO_BASE is reached as it is, and every
 * buffer address is the guest-physical one. The rings are plain memory:
 * virtiocheck writes hostile ones through the same structures.
 *
 * The bounded waits count TSC time: timing_init() (timing.h) comes first.
 */
#ifndef POLLUX_GUEST_VIRTIO_H
#define POLLUX_GUEST_VIRTIO_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/virtio.h"

/* The largest queue one ring page holds: the descriptors, then the avail and used rings. */
#define VQ_NUM_MAX   64
#define VQ_PAGE_SIZE 4096u
#define VQ_USED_OFF  2048u /* the used ring's offset in the page (4-byte aligned) */

struct vdev {
    uintptr_t base;    /* the device's page in the MMIO window */
    uint64_t features; /* negotiated */
};

struct vq_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[]; /* num entries, then used_event */
};

struct vq_used {
    uint16_t flags;
    uint16_t idx;
    struct virtq_used_elem ring[]; /* num entries, then avail_event */
};

struct vq {
    struct vdev *dev;
    unsigned index;
    uint16_t num;
    struct virtq_desc *desc;
    volatile struct vq_avail *avail;
    volatile struct vq_used *used;
    uint16_t next_avail; /* the avail->idx the next publish writes */
    uint16_t last_used;  /* the used entries taken so far */
};

static inline uint32_t vdev_read(const struct vdev *d, uint32_t off)
{
    uint32_t v;
    /* One MOV, which pollux's MMIO decoder knows (vmm/exit/mmio_decode.h). */
    __asm__ volatile("movl (%1), %0" : "=r"(v) : "r"(d->base + off) : "memory");
    return v;
}

static inline void vdev_write(const struct vdev *d, uint32_t off, uint32_t v)
{
    __asm__ volatile("movl %0, (%1)" : : "r"(v), "r"(d->base + off) : "memory");
}

static inline uint8_t vdev_config8(const struct vdev *d, uint32_t off)
{
    uint8_t v;
    __asm__ volatile("movb (%1), %0"
                     : "=q"(v)
                     : "r"(d->base + VIRTIO_MMIO_CONFIG + off)
                     : "memory");
    return v;
}

static inline uint32_t vdev_config32(const struct vdev *d, uint32_t off)
{
    return vdev_read(d, VIRTIO_MMIO_CONFIG + off);
}

static inline uint32_t vdev_status(const struct vdev *d)
{
    return vdev_read(d, VIRTIO_MMIO_STATUS);
}

/*
 * Slot `slot` of the window holds a version 2 device of this ID: fills d.
 * false (d unusable) otherwise, with what was found printed.
 */
bool vdev_probe(struct vdev *d, unsigned slot, uint32_t device_id);

/* Status 0: the device forgets its queues and features. Whether Status then reads 0. */
bool vdev_reset(struct vdev *d);

/* The features the device offers (both DeviceFeatures words). */
uint64_t vdev_offered(const struct vdev *d);

/* Reset, then ACKNOWLEDGE and DRIVER: whether the reset took. */
bool vdev_begin(struct vdev *d);

/*
 * After vdev_begin: DriverFeatures = features exactly, then FEATURES_OK:
 * whether the device kept it (it must refuse a set without VERSION_1).
 * d->features is what was written.
 */
bool vdev_features_ok(struct vdev *d, uint64_t features);

/* vdev_begin, then vdev_features_ok with VERSION_1 and those of `want` the device offers. */
bool vdev_negotiate(struct vdev *d, uint64_t want);

/*
 * Queue `index` with num entries (a power of two up to VQ_NUM_MAX) in
 * `page` (VQ_PAGE_SIZE bytes, 4 KiB aligned, zeroed here), made ready:
 * false if the device offers fewer or the queue was ready already.
 */
bool vq_setup(struct vq *q, struct vdev *d, unsigned index, uint16_t num, void *page);

/*
 * Queue `index` with num entries (a power of two up to QueueNumMax) at the
 * given rings, which the caller has zeroed, made ready: false if the device
 * offers fewer or the queue was ready already.
 */
bool vq_setup_at(struct vq *q, struct vdev *d, unsigned index, uint16_t num, void *desc,
                 void *avail, void *used);

/* Set DRIVER_OK: the device is live. */
void vdev_driver_ok(struct vdev *d);

/* Put head in the avail ring and advance avail->idx past it (no notify). */
void vq_publish(struct vq *q, uint16_t head);

/* QueueNotify with the queue's index. */
void vq_notify(const struct vq *q);

/* Read InterruptStatus and acknowledge what it holds; returns it. */
uint32_t vdev_ack_interrupt(const struct vdev *d);

/*
 * Wait up to timeout_us for used->idx to pass last_used; take that element
 * into *e (if e is not NULL). false if none came.
 */
bool vq_wait_used(struct vq *q, struct virtq_used_elem *e, uint32_t timeout_us);

/* Descriptor i: addr (a guest-physical address: paging is off), len, flags, next. */
static inline void vq_desc(struct vq *q, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
                           uint16_t next)
{
    q->desc[i] = (struct virtq_desc){.addr = addr, .len = len, .flags = flags, .next = next};
}

#endif

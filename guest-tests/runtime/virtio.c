/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bundled guests' polled virtio-mmio driver (virtio.h). x86 keeps
 * stores in order and loads in order, so a compiler barrier is all the
 * ring protocol needs between the driver's own accesses; the MMIO writes
 * exit to the hypervisor, which orders everything before them.
 */
#include "guest-tests/runtime/virtio.h"

#include <stddef.h>

#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

static inline void compiler_barrier(void)
{
    __asm__ volatile("" ::: "memory");
}

bool vdev_probe(struct vdev *d, unsigned slot, uint32_t device_id)
{
    d->base = (uintptr_t)(VIRTIO_MMIO_BASE + slot * VIRTIO_MMIO_SIZE);
    d->features = 0;
    uint32_t magic = vdev_read(d, VIRTIO_MMIO_MAGIC_VALUE);
    uint32_t version = vdev_read(d, VIRTIO_MMIO_VERSION);
    uint32_t id = vdev_read(d, VIRTIO_MMIO_DEVICE_ID);
    if (magic == VIRTIO_MMIO_MAGIC && version == VIRTIO_MMIO_VERSION_2 && id == device_id)
        return true;
    printf("virtio slot %u: magic 0x%x version %u device %u, want device %u\n", slot, magic,
           version, id, device_id);
    return false;
}

bool vdev_reset(struct vdev *d)
{
    vdev_write(d, VIRTIO_MMIO_STATUS, 0);
    d->features = 0;
    return vdev_status(d) == 0;
}

uint64_t vdev_offered(const struct vdev *d)
{
    vdev_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
    uint64_t lo = vdev_read(d, VIRTIO_MMIO_DEVICE_FEATURES);
    vdev_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
    uint64_t hi = vdev_read(d, VIRTIO_MMIO_DEVICE_FEATURES);
    return hi << 32 | lo;
}

bool vdev_begin(struct vdev *d)
{
    if (!vdev_reset(d))
        return false;
    vdev_write(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    vdev_write(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    return true;
}

bool vdev_features_ok(struct vdev *d, uint64_t features)
{
    d->features = features;
    vdev_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
    vdev_write(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)d->features);
    vdev_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
    vdev_write(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(d->features >> 32));
    uint32_t status = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK;
    vdev_write(d, VIRTIO_MMIO_STATUS, status);
    return vdev_status(d) & VIRTIO_STATUS_FEATURES_OK;
}

bool vdev_negotiate(struct vdev *d, uint64_t want)
{
    return vdev_begin(d) &&
           vdev_features_ok(d, vdev_offered(d) & (want | VIRTIO_BIT(VIRTIO_F_VERSION_1)));
}

bool vq_setup(struct vq *q, struct vdev *d, unsigned index, uint16_t num, void *page)
{
    if (num > VQ_NUM_MAX)
        return false;
    uint8_t *p = page;
    for (unsigned i = 0; i < VQ_PAGE_SIZE; i++)
        p[i] = 0;
    return vq_setup_at(q, d, index, num, page, p + num * sizeof(struct virtq_desc),
                       p + VQ_USED_OFF);
}

bool vq_setup_at(struct vq *q, struct vdev *d, unsigned index, uint16_t num, void *desc_ring,
                 void *avail_ring, void *used_ring)
{
    vdev_write(d, VIRTIO_MMIO_QUEUE_SEL, index);
    if (vdev_read(d, VIRTIO_MMIO_QUEUE_READY) != 0 || vdev_read(d, VIRTIO_MMIO_QUEUE_NUM_MAX) < num)
        return false;
    *q = (struct vq){.dev = d,
                     .index = index,
                     .num = num,
                     .desc = desc_ring,
                     .avail = avail_ring,
                     .used = used_ring};
    uint32_t desc = (uint32_t)(uintptr_t)q->desc, avail = (uint32_t)(uintptr_t)q->avail,
             used = (uint32_t)(uintptr_t)q->used;
    vdev_write(d, VIRTIO_MMIO_QUEUE_NUM, num);
    vdev_write(d, VIRTIO_MMIO_QUEUE_DESC_LOW, desc);
    vdev_write(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
    vdev_write(d, VIRTIO_MMIO_QUEUE_DRIVER_LOW, avail);
    vdev_write(d, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0);
    vdev_write(d, VIRTIO_MMIO_QUEUE_DEVICE_LOW, used);
    vdev_write(d, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
    vdev_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
    return vdev_read(d, VIRTIO_MMIO_QUEUE_READY) == 1;
}

void vdev_driver_ok(struct vdev *d)
{
    vdev_write(d, VIRTIO_MMIO_STATUS, vdev_status(d) | VIRTIO_STATUS_DRIVER_OK);
}

void vq_publish(struct vq *q, uint16_t head)
{
    q->avail->ring[q->next_avail % q->num] = head;
    compiler_barrier(); /* the entry before the index that covers it */
    q->avail->idx = ++q->next_avail;
}

void vq_notify(const struct vq *q)
{
    vdev_write(q->dev, VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
}

uint32_t vdev_ack_interrupt(const struct vdev *d)
{
    uint32_t pending = vdev_read(d, VIRTIO_MMIO_INTERRUPT_STATUS);
    if (pending != 0)
        vdev_write(d, VIRTIO_MMIO_INTERRUPT_ACK, pending);
    return pending;
}

bool vq_wait_used(struct vq *q, struct virtq_used_elem *e, uint32_t timeout_us)
{
    uint64_t end = rdtsc() + us_to_tsc(timeout_us);
    while (q->used->idx == q->last_used) {
        if (rdtsc() >= end)
            return false;
    }
    compiler_barrier(); /* the element after the index that covers it */
    if (e != NULL)
        *e = q->used->ring[q->last_used % q->num];
    q->last_used++;
    return true;
}

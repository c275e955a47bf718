/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-blk from host RAM (vmm/dev/virtio/blk.h). */
#include "vmm/dev/virtio/blk.h"

#include "lib/bytes.h"
#include "lib/string.h"
#include "stats/stats.h"

static struct virtio_blk *blk_of(struct virtio_mmio *t)
{
    return (struct virtio_blk *)t; /* the transport is the device's first member */
}

void virtio_blk_init(struct virtio_blk *b, uint8_t *data, uint64_t sectors, uint64_t bytes,
                     const char *id)
{
    memset(b, 0, sizeof(*b));
    b->data = data;
    b->sectors = sectors;
    b->bytes = bytes;
    for (unsigned i = 0; i < VIRTIO_BLK_ID_BYTES && id[i]; i++)
        b->id[i] = id[i];
}

/* The configuration space (5.2.4), little-endian: capacity, size_max, seg_max, blk_size. */
static void config_read(struct virtio_mmio *t, unsigned off, uint8_t *buf, unsigned len)
{
    const struct virtio_blk *b = blk_of(t);
    uint8_t config[VIRTIO_BLK_CONFIG_LEN] = {0};
    put_le64(config + 0, b->sectors);
    put_le32(config + 8, VIRTIO_BLK_SIZE_MAX);
    put_le32(config + 12, VIRTIO_BLK_SEG_MAX);
    put_le32(config + 20, VIRTIO_BLK_SECTOR);
    memcpy(buf, config + off, len);
}

/* An IN's used length, data and status, is a u32: SIZE_MAX keeps a chain far below 4 GiB. */
_Static_assert((uint64_t)VIRTQ_NUM_MAX *VIRTIO_BLK_SIZE_MAX < UINT32_MAX, "a chain's bytes fit");

/* Is the data of an IN or OUT, `len` bytes at `sector`, whole sectors inside the disk? Else IOERR.
 */
static bool in_disk(const struct virtio_blk *b, uint64_t sector, uint64_t len)
{
    if (len % VIRTIO_BLK_SECTOR)
        return false;
    return sector <= b->sectors && len / VIRTIO_BLK_SECTOR <= b->sectors - sector;
}

/* Every buffer within SIZE_MAX, as offered (the walker keeps SEG_MAX: see blk.h). */
static bool within_size_max(const struct virtq_chain *c)
{
    for (unsigned i = 0; i < c->nread + c->nwrite; i++)
        if (c->segs[i].len > VIRTIO_BLK_SIZE_MAX)
            return false;
    return true;
}

/*
 * Do a request of a chain within SIZE_MAX: its status; *data is what it
 * wrote before the status byte.
 */
static uint8_t execute(struct virtio_blk *b, const struct virtq_chain *c, uint32_t type,
                       uint64_t sector, uint64_t in_len, uint64_t out_len, uint64_t *data)
{
    switch (type) {
    case VIRTIO_BLK_T_IN:
        if (!in_disk(b, sector, in_len))
            return VIRTIO_BLK_S_IOERR;
        /* No data, no copy: an empty disk has no buffer to point into. */
        *data = in_len ? virtq_chain_write(c, 0, b->data + sector * VIRTIO_BLK_SECTOR, in_len) : 0;
        b->stats.reads++;
        b->stats.read_bytes += in_len;
        return VIRTIO_BLK_S_OK;
    case VIRTIO_BLK_T_OUT:
        if (!in_disk(b, sector, out_len))
            return VIRTIO_BLK_S_IOERR;
        if (out_len)
            virtq_chain_read(c, VIRTIO_BLK_HDR_LEN, b->data + sector * VIRTIO_BLK_SECTOR, out_len);
        b->stats.writes++;
        b->stats.write_bytes += out_len;
        return VIRTIO_BLK_S_OK;
    case VIRTIO_BLK_T_FLUSH:
        b->stats.flushes++; /* the disk is RAM: nothing waits to be written */
        return VIRTIO_BLK_S_OK;
    case VIRTIO_BLK_T_GET_ID:
        *data = virtq_chain_write(c, 0, b->id,
                                  in_len < VIRTIO_BLK_ID_BYTES ? in_len : VIRTIO_BLK_ID_BYTES);
        b->stats.get_ids++;
        return VIRTIO_BLK_S_OK;
    default:
        return VIRTIO_BLK_S_UNSUPP;
    }
}

int virtio_blk_request(struct virtio_blk *b, const struct virtq_chain *c, uint32_t *written,
                       enum virtq_fault *fault)
{
    if (c->read_bytes < VIRTIO_BLK_HDR_LEN || !c->write_bytes) {
        *fault = !c->nread || !c->write_bytes ? VIRTQ_FAULT_DIRECTION : VIRTQ_FAULT_LENGTH;
        return -1;
    }
    uint8_t hdr[VIRTIO_BLK_HDR_LEN];
    virtq_chain_read(c, 0, hdr, sizeof(hdr));
    /* Everything writable before the status byte, everything readable after the header. */
    uint64_t in_len = c->write_bytes - 1, out_len = c->read_bytes - VIRTIO_BLK_HDR_LEN;
    uint64_t data = 0; /* bytes written before the status */
    /* A buffer over SIZE_MAX: refused whatever the type (5.2.6.1 lets a device), nothing copied. */
    uint8_t status = within_size_max(c)
                         ? execute(b, c, get_le32(hdr), get_le64(hdr + 8), in_len, out_len, &data)
                         : VIRTIO_BLK_S_IOERR;
    if (status != VIRTIO_BLK_S_OK)
        b->stats.errors++;
    virtq_chain_write(c, in_len, &status, 1);
    *written = (uint32_t)(data + 1); /* data < 4 GiB - 1: in_disk, or the 20-byte id */
    return 0;
}

/*
 * One pass over the queue, within its budget (VIRTIO_PASS_CHAINS chains,
 * VIRTIO_PASS_BYTES bytes): true if chains are left for a later pass, with
 * the driver's notifications off until then (it need not notify: the
 * deferred work takes them). An empty ring turns them back on (with
 * EVENT_IDX: avail_event at the next buffer) and serves what came
 * meanwhile, so that no buffer waits for a notify that will not come.
 */
static bool serve(struct virtio_blk *b)
{
    struct virtio_mmio *t = &b->transport;
    struct virtio_queue *q = &t->queues[0];
    enum virtq_fault fault = VIRTQ_OK;
    unsigned chains = 0;
    uint64_t bytes = 0;
    bool more = false;
    uint64_t flags = spin_lock_irqsave(&q->lock);
    /* A reset (which takes this lock) may have come between the transport's check and here. */
    if (!q->vq.ready || !virtio_mmio_live(t))
        goto out;
    for (;;) {
        if (chains == VIRTIO_PASS_CHAINS || bytes >= VIRTIO_PASS_BYTES) {
            virtq_set_notify(&q->vq, &t->ram, false);
            more = true;
            break;
        }
        int r = virtq_pop(&q->vq, &t->ram, &q->chain, &fault);
        if (r == 0 && virtq_set_notify(&q->vq, &t->ram, true))
            continue;
        if (r <= 0)
            break;
        uint32_t written;
        if (virtio_blk_request(b, &q->chain, &written, &fault))
            break;
        virtq_push(&q->vq, &t->ram, q->chain.head, written);
        chains++;
        bytes += q->chain.read_bytes + q->chain.write_bytes;
    }
    if (chains)
        virtio_mmio_used(t, 0);
    if (fault != VIRTQ_OK)
        virtio_mmio_fail(t, 0, fault);
out:
    spin_unlock_irqrestore(&q->lock, flags);
    return more;
}

/* QueueNotify: a pass, and what is left as deferred work. */
static void notify(struct virtio_mmio *t, unsigned queue)
{
    (void)queue; /* the only one */
    if (serve(blk_of(t)))
        virtio_mmio_defer(t);
}

static bool deferred(struct virtio_mmio *t)
{
    return serve(blk_of(t));
}

/*
 * Status 0: nothing to drop, every request is answered inside the pass that
 * took it; a pass still deferred finds the queue not ready and stops.
 */
static void reset(struct virtio_mmio *t)
{
    (void)t;
}

const struct virtio_device_ops virtio_blk_ops = {
    .name = "blk",
    .device_id = VIRTIO_ID_BLOCK,
    .features = VIRTIO_BIT(VIRTIO_BLK_F_SIZE_MAX) | VIRTIO_BIT(VIRTIO_BLK_F_SEG_MAX) |
                VIRTIO_BIT(VIRTIO_BLK_F_BLK_SIZE) | VIRTIO_BIT(VIRTIO_BLK_F_FLUSH),
    .nqueues = 1,
    .config_len = VIRTIO_BLK_CONFIG_LEN,
    .config_read = config_read,
    .notify = notify,
    .reset = reset,
    .deferred = deferred,
};

#define ROW(key, doc)                                                                              \
    STATS_ROW(key, COUNTER, NONE, S_DEVICES, struct virtio_blk, stats.key, "`virtio-blk`: " doc)
static const struct stats_desc rows[] = {
    ROW(reads, "IN requests answered OK"),
    ROW(writes, "OUT requests answered OK"),
    ROW(flushes, "FLUSH requests answered OK"),
    ROW(get_ids, "GET_ID requests answered OK"),
    ROW(read_bytes, "bytes the reads moved"),
    ROW(write_bytes, "bytes the writes moved"),
    ROW(errors, "requests answered IOERR or UNSUPP"),
    STATS_ROW(transport, INLINE, NONE, S_DEVICES, struct virtio_blk, transport, 0,
              .sub = &virtio_mmio_stats_table),
};
const struct stats_table virtio_blk_stats_table = STATS_TABLE(rows, 0);

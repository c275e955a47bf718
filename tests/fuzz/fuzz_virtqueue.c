/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The split-ring walker (vmm/dev/virtio/virtqueue.c) on a guest-chosen RAM
 * image and queue. Input: le16 num, u8 flags (bit 0 EVENT_IDX, bit 1
 * INDIRECT_DESC), u8 written (bytes the device writes per chain), le32 desc,
 * avail, used (guest-physical), then the RAM image from guest-physical 0,
 * held in an exactly sized heap block so that AddressSanitizer catches any
 * access past it. The harness takes chains and returns them, as a device
 * does, until none is left or the queue faults; every segment must lie
 * inside RAM, and a chain must be within the queue size.
 */
#include "tests/fuzz/fuzz.h"

#include "abi/virtio.h"
#include "vmm/dev/virtio/virtqueue.h"

#define HEADER    16
#define MAX_POPS  1024 /* the device's writes may move an overlapping avail->idx */
#define BOUNCE_SZ 256

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | (uint32_t)le16(p + 2) << 16;
}

static void check_chain(const struct virtq *q, const struct guest_ram *ram,
                        const struct virtq_chain *c)
{
    FUZZ_REQUIRE(c->head < q->num);
    FUZZ_REQUIRE(c->nread + c->nwrite >= 1 && c->nread + c->nwrite <= q->num);
    uint64_t read = 0, write = 0;
    for (unsigned i = 0; i < c->nread + c->nwrite; i++) {
        const struct virtq_seg *s = &c->segs[i];
        FUZZ_REQUIRE(s->len > 0);
        FUZZ_REQUIRE(s->host >= ram->base && s->host <= ram->base + ram->size);
        FUZZ_REQUIRE(s->len <= (uint64_t)(ram->base + ram->size - s->host));
        *(i < c->nread ? &read : &write) += s->len;
    }
    FUZZ_REQUIRE(read == c->read_bytes && write == c->write_bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER)
        return 0;
    struct fuzz_mem m = fuzz_mem_new(0, data + HEADER, size - HEADER);
    const struct guest_ram ram = {m.bytes, m.size};
    struct virtq q = {
        .num = le16(data),
        .event_idx = data[2] & 1,
        .indirect = data[2] & 2,
        .desc = le32(data + 4),
        .avail = le32(data + 8),
        .used = le32(data + 12),
    };
    const uint8_t written = data[3];
    static struct virtq_chain c;
    if (virtq_start(&q, &ram) == VIRTQ_OK) {
        q.ready = true;
        uint8_t bounce[BOUNCE_SZ] = {0};
        enum virtq_fault f = VIRTQ_OK;
        for (unsigned pops = 0; pops < MAX_POPS; pops++) {
            int r = virtq_pop(&q, &ram, &c, &f);
            if (r < 0) {
                FUZZ_REQUIRE(f > VIRTQ_OK && f < VIRTQ_FAULT_COUNT);
                FUZZ_REQUIRE(virtq_pop(&q, &ram, &c, &f) == 0); /* broken until restarted */
                break;
            }
            if (r == 0) {
                /* As a device does when it runs dry: notifications on, and look again. */
                if (!virtq_set_notify(&q, &ram, true))
                    break;
                continue;
            }
            check_chain(&q, &ram, &c);
            size_t got = virtq_chain_read(&c, c.read_bytes / 2, bounce, sizeof(bounce));
            FUZZ_REQUIRE(got <= sizeof(bounce) && got <= c.read_bytes);
            size_t put = virtq_chain_write(&c, 0, bounce, written);
            FUZZ_REQUIRE(put == (written < c.write_bytes ? written : c.write_bytes));
            virtq_push(&q, &ram, c.head, (uint32_t)put);
            virtq_should_interrupt(&q, &ram);
            virtq_set_notify(&q, &ram, pops & 1);
        }
    }
    fuzz_mem_free(&m);
    return 0;
}

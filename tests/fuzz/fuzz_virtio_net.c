/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-net's transmit path (vmm/dev/virtio/net.c) on a guest-chosen RAM
 * image: device A's queues are wherever the input puts them (both on the
 * same rings, which may overlap), its descriptors and avail ring are the
 * input's bytes. Input: u8 flags (bit 0 EVENT_IDX, bit 1 INDIRECT_DESC),
 * u8 log2 of the queue size (mod 9), u8 kicks (1-4), u8 unused, le32 desc,
 * avail, used (guest-physical), then A's RAM from guest-physical 0, held in
 * an exactly sized heap block so that AddressSanitizer catches any access
 * past it. A transmits on each kick (and in up to DEFERRED_PASSES deferred
 * passes after it, where a pass stopped at its budget) to device B on the
 * same switch, whose rings the harness keeps sane; B then sends A one frame, into A's hostile
 * receive ring, and A is reset. Every frame B gets carries the header with
 * num_buffers 1 and a length an Ethernet frame has, the counters add up,
 * and a fault is reported and stops A.
 */
#include "tests/fuzz/fuzz.h"

#include "abi/virtio.h"
#include "vmm/dev/virtio/net.h"

#define HEADER     16
#define B_RAM      0x10000
#define B_QNUM     8
#define B_RING     0x1000 /* B's queue q: desc at B_RING + q * 0x400, avail +0x100, used +0x200 */
#define B_BUF      0x2000
#define RX_BUF_LEN (VIRTIO_NET_HDR_LEN + NET_FRAME_MAX)

struct guest {
    uint8_t *ram;
    struct virtio_net net;
    unsigned faults;
    bool deferred; /* a transmit pass left work (virtio_mmio_defer) */
};

static void env_interrupt(struct virtio_mmio *t)
{
    (void)t;
}

static void env_fault(struct virtio_mmio *t, unsigned queue, enum virtq_fault f)
{
    struct guest *g = t->owner;
    FUZZ_REQUIRE(queue < 2 && f > VIRTQ_OK && f < VIRTQ_FAULT_COUNT);
    g->faults++;
}

static void env_defer(struct virtio_mmio *t)
{
    ((struct guest *)t->owner)->deferred = true;
}

static const struct virtio_env env = {
    .interrupt = env_interrupt, .fault = env_fault, .defer = env_defer};

/* The deferred passes a kick leaves, as a CPU's scheduler loop runs them, a few at most. */
#define DEFERRED_PASSES 4

static void run_deferred(struct guest *g)
{
    for (unsigned i = 0; i < DEFERRED_PASSES && g->deferred; i++)
        g->deferred = virtio_mmio_deferred_pass(&g->net.transport);
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | (uint32_t)le16(p + 2) << 16;
}

static void reg(struct guest *g, unsigned off, uint32_t v)
{
    virtio_mmio_write(&g->net.transport, off, 4, v);
}

/* Linux's probe, up to DRIVER_OK: queue q's rings at desc[q], avail[q], used[q]. */
static void driver_up(struct guest *g, uint64_t features, uint16_t num, const uint32_t desc[2],
                      const uint32_t avail[2], const uint32_t used[2])
{
    reg(g, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    for (unsigned sel = 0; sel < 2; sel++) {
        reg(g, VIRTIO_MMIO_DRIVER_FEATURES_SEL, sel);
        reg(g, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> (32 * sel)));
    }
    uint32_t status = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK;
    reg(g, VIRTIO_MMIO_STATUS, status);
    for (unsigned q = 0; q < 2; q++) {
        reg(g, VIRTIO_MMIO_QUEUE_SEL, q);
        reg(g, VIRTIO_MMIO_QUEUE_NUM, num);
        reg(g, VIRTIO_MMIO_QUEUE_DESC_LOW, desc[q]);
        reg(g, VIRTIO_MMIO_QUEUE_DRIVER_LOW, avail[q]);
        reg(g, VIRTIO_MMIO_QUEUE_DEVICE_LOW, used[q]);
        reg(g, VIRTIO_MMIO_QUEUE_READY, 1);
    }
    reg(g, VIRTIO_MMIO_STATUS, status | VIRTIO_STATUS_DRIVER_OK);
}

static void join(struct guest *g, uint8_t *ram, uint64_t size, unsigned index)
{
    uint8_t mac[NET_ETH_ALEN];
    char err[128];
    virtio_net_mac(index, mac);
    g->ram = ram;
    virtio_mmio_init(&g->net.transport, &virtio_net_ops, &env, g, VIRTIO_SLOT_NET,
                     (struct guest_ram){ram, size});
    FUZZ_REQUIRE(virtio_net_join(&g->net, mac, "fuzz", err, sizeof(err)) == 0);
}

/* B's receive ring: B_QNUM buffers posted, none used yet. */
static void b_post_all(struct guest *b)
{
    uint8_t *ram = b->ram;
    for (uint16_t i = 0; i < B_QNUM; i++) {
        struct virtq_desc d = {
            .addr = B_BUF + i * 0x800, .len = RX_BUF_LEN, .flags = VIRTQ_DESC_F_WRITE};
        memcpy(ram + B_RING + i * sizeof(d), &d, sizeof(d));
        memcpy(ram + B_RING + 0x100 + 4 + 2 * i, &i, 2);
    }
    uint16_t idx = B_QNUM;
    memcpy(ram + B_RING + 0x100 + 2, &idx, 2);
}

/* B's frames: each a header with num_buffers 1 and a length an Ethernet frame has. */
static unsigned b_check_received(struct guest *b)
{
    const uint8_t *used = b->ram + B_RING + 0x200;
    uint16_t n = le16(used + 2);
    FUZZ_REQUIRE(n <= B_QNUM);
    unsigned frames = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t id = le32(used + 4 + 8 * i), len = le32(used + 8 + 8 * i);
        FUZZ_REQUIRE(id < B_QNUM);
        if (!len)
            continue;
        FUZZ_REQUIRE(len >= VIRTIO_NET_HDR_LEN + NET_FRAME_MIN && len <= RX_BUF_LEN);
        const uint8_t *hdr = b->ram + B_BUF + id * 0x800;
        for (unsigned k = 0; k < VIRTIO_NET_HDR_LEN; k++)
            FUZZ_REQUIRE(hdr[k] == (k == VIRTIO_NET_HDR_NUM_BUFFERS ? 1 : 0));
        frames++;
    }
    return frames;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER)
        return 0;
    static uint8_t b_ram[B_RAM];
    memset(b_ram, 0, sizeof(b_ram));
    struct fuzz_mem m = fuzz_mem_new(0, data + HEADER, size - HEADER);
    static struct guest a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    join(&a, m.bytes, m.size, 0);
    join(&b, b_ram, sizeof(b_ram), 1);

    uint64_t features = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |
                        VIRTIO_BIT(VIRTIO_NET_F_STATUS);
    if (data[0] & 1)
        features |= VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX);
    if (data[0] & 2)
        features |= VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC);
    const uint32_t a_desc[2] = {le32(data + 4), le32(data + 4)},
                   a_avail[2] = {le32(data + 8), le32(data + 8)},
                   a_used[2] = {le32(data + 12), le32(data + 12)};
    driver_up(&a, features, (uint16_t)(1u << (data[1] % 9)), a_desc, a_avail, a_used);
    const uint32_t b_desc[2] = {B_RING, B_RING + 0x400},
                   b_avail[2] = {B_RING + 0x100, B_RING + 0x500},
                   b_used[2] = {B_RING + 0x200, B_RING + 0x600};
    driver_up(&b, features, B_QNUM, b_desc, b_avail, b_used);
    b_post_all(&b);

    unsigned kicks = 1 + data[2] % 4;
    for (unsigned i = 0; i < kicks; i++) {
        reg(&a, VIRTIO_MMIO_QUEUE_NOTIFY, VIRTIO_NET_TXQ);
        run_deferred(&a);
    }
    reg(&b, VIRTIO_MMIO_QUEUE_NOTIFY, VIRTIO_NET_RXQ);

    const struct net_port_stats *as = &a.net.port.stats, *bs = &b.net.port.stats;
    FUZZ_REQUIRE(b_check_received(&b) == bs->rx_packets);
    FUZZ_REQUIRE(bs->rx_packets + bs->rx_drops + b.net.port.held_count <= as->tx_packets);
    FUZZ_REQUIRE(as->tx_bytes <= as->tx_packets * NET_FRAME_MAX);
    FUZZ_REQUIRE(as->tx_bytes >= as->tx_packets * NET_FRAME_MIN);
    if (a.faults)
        FUZZ_REQUIRE(!virtio_mmio_live(&a.net.transport));

    /* B answers with a broadcast into A's receive ring, then both are reset. */
    uint8_t *tx = b_ram + B_BUF + B_QNUM * 0x800;
    memset(tx, 0xff, VIRTIO_NET_HDR_LEN + 64);
    memset(tx, 0, VIRTIO_NET_HDR_LEN);
    struct virtq_desc d = {.addr = B_BUF + B_QNUM * 0x800, .len = VIRTIO_NET_HDR_LEN + 64};
    memcpy(b_ram + B_RING + 0x400, &d, sizeof(d));
    uint16_t one = 1;
    memcpy(b_ram + B_RING + 0x500 + 2, &one, 2);
    reg(&b, VIRTIO_MMIO_QUEUE_NOTIFY, VIRTIO_NET_TXQ);
    FUZZ_REQUIRE(bs->tx_packets == 1);
    FUZZ_REQUIRE(b.faults == 0);
    reg(&a, VIRTIO_MMIO_QUEUE_NOTIFY, VIRTIO_NET_RXQ);
    reg(&a, VIRTIO_MMIO_STATUS, 0);
    FUZZ_REQUIRE(a.net.port.held_count == 0);

    virtio_net_leave(&a.net);
    virtio_net_leave(&b.net);
    fuzz_mem_free(&m);
    return 0;
}

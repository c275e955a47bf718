/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-net (vmm/dev/virtio/net.c) on the real transport and walker, as
 * three guests drive it: each device has its own RAM (a plain buffer) with
 * split rings in it, set up through the registers as Linux's virtio_mmio and
 * virtio_net do, all on one switch. A frame from A reaches B with its
 * header; a frame for B without buffers waits and goes out when B posts
 * some, with avail_event asking for that notify and, once nothing waits,
 * no longer; a frame too long for the wire or for B's buffer is dropped and
 * counted; a chain in the wrong direction breaks only its own device; a
 * reset drains what waited.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "abi/virtio.h"
#include "lib/json.h"
#include "stats/stats.h"
#include "vmm/dev/virtio/net.h"

#define RAM_SIZE   0x40000
#define QNUM       8
#define RING_GPA   0x1000 /* queue q's desc at RING_GPA + q * 0x2000, avail +0x800, used +0x1000 */
#define BUF_GPA    0x10000
#define BUF_STRIDE 0x800 /* one buffer per descriptor: BUF_GPA + (q * QNUM + i) * BUF_STRIDE */
#define RX_BUF_LEN (VIRTIO_NET_HDR_LEN + NET_FRAME_MAX)

struct guest {
    _Alignas(4096) uint8_t ram[RAM_SIZE];
    struct virtio_net net;
    uint16_t avail_idx[2], used_seen[2];
    unsigned interrupts;
    unsigned faults;
    unsigned defers; /* virtio_mmio_defer: a pass left work */
    uint16_t qnum;   /* QueueNum of both queues: QNUM but where a test says */
    unsigned fault_queue;
    enum virtq_fault fault;
};

static struct guest guests[3];
uint64_t tsc_khz = 1000000; /* stats/stats.c's; no row here converts cycles */

static void env_interrupt(struct virtio_mmio *t)
{
    ((struct guest *)t->owner)->interrupts++;
}

static void env_fault(struct virtio_mmio *t, unsigned queue, enum virtq_fault f)
{
    struct guest *g = t->owner;
    g->faults++;
    g->fault_queue = queue;
    g->fault = f;
}

static void env_defer(struct virtio_mmio *t)
{
    ((struct guest *)t->owner)->defers++;
}

static const struct virtio_env env = {
    .interrupt = env_interrupt, .fault = env_fault, .defer = env_defer};

static uint32_t reg_read(struct guest *g, unsigned off)
{
    return virtio_mmio_read(&g->net.transport, off, 4);
}

static void reg_write(struct guest *g, unsigned off, uint32_t v)
{
    virtio_mmio_write(&g->net.transport, off, 4, v);
}

static uint64_t desc_gpa(unsigned q)
{
    return RING_GPA + q * 0x2000;
}

static uint64_t avail_gpa(unsigned q)
{
    return desc_gpa(q) + 0x800;
}

static uint64_t used_gpa(unsigned q)
{
    return desc_gpa(q) + 0x1000;
}

static uint64_t buf_gpa(unsigned q, unsigned i)
{
    return BUF_GPA + (q * QNUM + i) * BUF_STRIDE;
}

static uint16_t *ram16(struct guest *g, uint64_t gpa)
{
    return (uint16_t *)(g->ram + gpa);
}

/* What Linux's virtio_mmio and virtio_net do at probe and open, up to DRIVER_OK. */
static void driver_up(struct guest *g)
{
    reg_write(g, VIRTIO_MMIO_STATUS, 0);
    reg_write(g, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    reg_write(g, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    uint64_t offered = 0;
    for (unsigned sel = 0; sel < 2; sel++) {
        reg_write(g, VIRTIO_MMIO_DEVICE_FEATURES_SEL, sel);
        offered |= (uint64_t)reg_read(g, VIRTIO_MMIO_DEVICE_FEATURES) << (32 * sel);
    }
    uint64_t wanted = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |
                      VIRTIO_BIT(VIRTIO_NET_F_STATUS) | VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX);
    assert_int_equal(offered & wanted, wanted);
    for (unsigned sel = 0; sel < 2; sel++) {
        reg_write(g, VIRTIO_MMIO_DRIVER_FEATURES_SEL, sel);
        reg_write(g, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(wanted >> (32 * sel)));
    }
    uint32_t status = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK;
    reg_write(g, VIRTIO_MMIO_STATUS, status);
    assert_true(reg_read(g, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
    for (unsigned q = 0; q < 2; q++) {
        memset(g->ram + desc_gpa(q), 0, 0x2000);
        g->avail_idx[q] = g->used_seen[q] = 0;
        reg_write(g, VIRTIO_MMIO_QUEUE_SEL, q);
        assert_true(reg_read(g, VIRTIO_MMIO_QUEUE_NUM_MAX) >= g->qnum);
        reg_write(g, VIRTIO_MMIO_QUEUE_NUM, g->qnum);
        reg_write(g, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc_gpa(q));
        reg_write(g, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
        reg_write(g, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)avail_gpa(q));
        reg_write(g, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0);
        reg_write(g, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)used_gpa(q));
        reg_write(g, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
        reg_write(g, VIRTIO_MMIO_QUEUE_READY, 1);
    }
    reg_write(g, VIRTIO_MMIO_STATUS, status | VIRTIO_STATUS_DRIVER_OK);
    assert_true(virtio_mmio_live(&g->net.transport));
}

/* Put descriptor `head` (len bytes at its buffer, flags) in queue q's avail ring. */
static void post(struct guest *g, unsigned q, uint16_t head, uint32_t len, uint16_t flags)
{
    struct virtq_desc d = {.addr = buf_gpa(q, head), .len = len, .flags = flags};
    memcpy(g->ram + desc_gpa(q) + head * sizeof(d), &d, sizeof(d));
    *ram16(g, avail_gpa(q) + 4 + 2 * (g->avail_idx[q] % g->qnum)) = head;
    g->avail_idx[q]++;
    __atomic_store_n(ram16(g, avail_gpa(q) + 2), g->avail_idx[q], __ATOMIC_RELEASE);
}

static void kick(struct guest *g, unsigned q)
{
    reg_write(g, VIRTIO_MMIO_QUEUE_NOTIFY, q);
}

/* vring_need_event: would the driver notify after moving avail->idx from old to new? */
static bool driver_would_notify(struct guest *g, unsigned q, uint16_t old, uint16_t new_idx)
{
    uint16_t event = *ram16(g, used_gpa(q) + 4 + 8 * g->qnum);
    return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old);
}

static uint16_t used_idx(struct guest *g, unsigned q)
{
    return __atomic_load_n(ram16(g, used_gpa(q) + 2), __ATOMIC_ACQUIRE);
}

/* The next used element of queue q (the test fails if there is none). */
static struct virtq_used_elem take_used(struct guest *g, unsigned q)
{
    assert_int_not_equal(used_idx(g, q), g->used_seen[q]);
    struct virtq_used_elem e;
    memcpy(&e, g->ram + used_gpa(q) + 4 + 8 * (g->used_seen[q] % g->qnum), sizeof(e));
    g->used_seen[q]++;
    return e;
}

static const uint8_t broadcast[NET_ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* Transmit a frame of `len` bytes (header first) to dst from g's MAC, its bytes from `tag`. */
static void transmit(struct guest *g, uint16_t head, const uint8_t *dst, unsigned len, uint8_t tag)
{
    uint8_t *buf = g->ram + buf_gpa(VIRTIO_NET_TXQ, head);
    memset(buf, 0, VIRTIO_NET_HDR_LEN);
    memcpy(buf + VIRTIO_NET_HDR_LEN, dst, NET_ETH_ALEN);
    memcpy(buf + VIRTIO_NET_HDR_LEN + NET_ETH_ALEN, g->net.mac, NET_ETH_ALEN);
    for (unsigned i = 2 * NET_ETH_ALEN; i < len; i++)
        buf[VIRTIO_NET_HDR_LEN + i] = (uint8_t)(tag + i);
    post(g, VIRTIO_NET_TXQ, head, VIRTIO_NET_HDR_LEN + len, 0);
    kick(g, VIRTIO_NET_TXQ);
}

static int setup(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 3; i++) {
        struct guest *g = &guests[i];
        memset(g, 0, sizeof(*g));
        g->qnum = QNUM;
        uint8_t mac[NET_ETH_ALEN];
        virtio_net_mac(i, mac);
        char err[128];
        virtio_mmio_init(&g->net.transport, &virtio_net_ops, &env, g, VIRTIO_SLOT_NET,
                         (struct guest_ram){g->ram, RAM_SIZE});
        assert_int_equal(virtio_net_join(&g->net, mac, "lan0", err, sizeof(err)), 0);
        driver_up(g);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 3; i++)
        virtio_net_leave(&guests[i].net);
    return 0;
}

static void test_config_space_has_mac_and_link_up(void **state)
{
    (void)state;
    struct guest *b = &guests[1];
    uint8_t config[VIRTIO_NET_CONFIG_LEN];
    for (unsigned i = 0; i < sizeof(config); i++)
        config[i] = (uint8_t)virtio_mmio_read(&b->net.transport, VIRTIO_MMIO_CONFIG + i, 1);
    const uint8_t mac[] = {0x02, 0x50, 0x4c, 0x58, 0x00, 0x01};
    assert_memory_equal(config, mac, sizeof(mac));
    assert_int_equal(config[6] | config[7] << 8, VIRTIO_NET_S_LINK_UP);
    /* F_MTU's mtu: the switch's 1500, after max_virtqueue_pairs (no F_MQ: 0). */
    assert_int_equal(config[8] | config[9] << 8, 0);
    assert_int_equal(config[10] | config[11] << 8, 1500);
    assert_int_equal(reg_read(b, VIRTIO_MMIO_DEVICE_ID), VIRTIO_ID_NET);
    char text[18];
    virtio_net_mac_text(mac, text);
    assert_string_equal(text, "02:50:4c:58:00:01");
}

static void test_frame_from_a_reaches_b_with_its_header(void **state)
{
    (void)state;
    struct guest *a = &guests[0], *b = &guests[1];
    for (uint16_t i = 0; i < 4; i++)
        post(b, VIRTIO_NET_RXQ, i, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
    kick(b, VIRTIO_NET_RXQ);
    unsigned b_interrupts = b->interrupts, a_interrupts = a->interrupts;
    transmit(a, 0, b->net.mac, 60, 7);
    struct virtq_used_elem e = take_used(b, VIRTIO_NET_RXQ);
    assert_int_equal(e.len, VIRTIO_NET_HDR_LEN + 60);
    const uint8_t *got = b->ram + buf_gpa(VIRTIO_NET_RXQ, e.id);
    uint8_t hdr[VIRTIO_NET_HDR_LEN] = {0};
    hdr[VIRTIO_NET_HDR_NUM_BUFFERS] = 1; /* le16 num_buffers 1, flags and offload fields 0 */
    assert_memory_equal(got, hdr, sizeof(hdr));
    assert_memory_equal(got + VIRTIO_NET_HDR_LEN,
                        a->ram + buf_gpa(VIRTIO_NET_TXQ, 0) + VIRTIO_NET_HDR_LEN, 60);
    assert_true(b->interrupts > b_interrupts);
    /* A's transmit buffer came back used, and A was interrupted for it (Firecracker #1436). */
    e = take_used(a, VIRTIO_NET_TXQ);
    assert_int_equal(e.id, 0);
    assert_true(a->interrupts > a_interrupts);
    assert_true(reg_read(a, VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_VRING);
    assert_int_equal(a->net.port.stats.tx_packets, 1);
    assert_int_equal(a->net.port.stats.tx_bytes, 60);
    assert_int_equal(b->net.port.stats.rx_packets, 1);
    assert_int_equal(b->net.port.stats.rx_bytes, 60);
    /* Unknown to the switch then, B's MAC flooded to C too, whose ring had no buffer. */
    assert_int_equal(guests[2].net.port.held_count, 1);
}

static void test_held_frame_goes_out_when_b_posts_buffers(void **state)
{
    (void)state;
    struct guest *a = &guests[0], *b = &guests[1];
    /* B posted once and its refills stopped notifying; now its ring is empty. */
    post(b, VIRTIO_NET_RXQ, 0, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
    kick(b, VIRTIO_NET_RXQ);
    assert_false(driver_would_notify(b, VIRTIO_NET_RXQ, 1, 2)); /* a buffer suffices */
    transmit(a, 0, broadcast, 60, 1);
    take_used(b, VIRTIO_NET_RXQ);
    transmit(a, 1, broadcast, 80, 2);
    assert_int_equal(used_idx(b, VIRTIO_NET_RXQ), 1);
    assert_int_equal(b->net.port.held_count, 1);
    assert_int_equal(b->net.port.stats.rx_held, 1);
    /* A was not made to wait: its frame is out of its ring. */
    take_used(a, VIRTIO_NET_TXQ);
    take_used(a, VIRTIO_NET_TXQ);
    /* A frame waits: B's next refill notifies (avail_event), and the notify sends it. */
    assert_true(driver_would_notify(b, VIRTIO_NET_RXQ, 1, 2));
    post(b, VIRTIO_NET_RXQ, 1, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
    kick(b, VIRTIO_NET_RXQ);
    struct virtq_used_elem e = take_used(b, VIRTIO_NET_RXQ);
    assert_int_equal(e.id, 1);
    assert_int_equal(e.len, VIRTIO_NET_HDR_LEN + 80);
    assert_int_equal(b->ram[buf_gpa(VIRTIO_NET_RXQ, 1) + VIRTIO_NET_HDR_LEN + 20], 2 + 20);
    assert_int_equal(b->net.port.held_count, 0);
    assert_int_equal(b->net.port.stats.rx_packets, 2);
    assert_int_equal(b->net.port.stats.rx_drops, 0);
    /* Nothing waits any more: refills are quiet again. */
    assert_false(driver_would_notify(b, VIRTIO_NET_RXQ, 2, 3));
}

static void test_too_long_frames_are_dropped_and_counted(void **state)
{
    (void)state;
    struct guest *a = &guests[0], *b = &guests[1];
    post(b, VIRTIO_NET_RXQ, 0, VIRTIO_NET_HDR_LEN + 59, VIRTQ_DESC_F_WRITE);
    post(b, VIRTIO_NET_RXQ, 1, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
    kick(b, VIRTIO_NET_RXQ);
    /* Longer than any Ethernet frame: A's drop, nobody gets it. */
    transmit(a, 0, broadcast, NET_FRAME_MAX + 1, 0);
    take_used(a, VIRTIO_NET_TXQ);
    assert_int_equal(a->net.port.stats.tx_drops, 1);
    assert_int_equal(a->net.port.stats.tx_packets, 0);
    assert_int_equal(used_idx(b, VIRTIO_NET_RXQ), 0);
    /* A 60-byte frame for B's 59-byte buffer: the buffer comes back empty, B's drop. */
    transmit(a, 1, broadcast, 60, 0);
    struct virtq_used_elem e = take_used(b, VIRTIO_NET_RXQ);
    assert_int_equal(e.id, 0);
    assert_int_equal(e.len, 0);
    assert_int_equal(b->net.port.stats.rx_drops, 1);
    assert_int_equal(b->net.port.stats.rx_drops_device, 1);
    assert_int_equal(b->net.port.stats.rx_packets, 0);
    /* The longest frame fits the buffer Linux posts. */
    transmit(a, 2, broadcast, NET_FRAME_MAX, 0);
    e = take_used(b, VIRTIO_NET_RXQ);
    assert_int_equal(e.len, RX_BUF_LEN);
    assert_int_equal(b->net.port.stats.rx_packets, 1);
}

static void test_wrong_direction_breaks_only_its_device(void **state)
{
    (void)state;
    struct guest *a = &guests[0], *b = &guests[1], *c = &guests[2];
    post(c, VIRTIO_NET_RXQ, 0, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
    post(c, VIRTIO_NET_RXQ, 1, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
    kick(c, VIRTIO_NET_RXQ);
    /* A transmits from a device-writable buffer. */
    post(a, VIRTIO_NET_TXQ, 0, 72, VIRTQ_DESC_F_WRITE);
    kick(a, VIRTIO_NET_TXQ);
    assert_int_equal(a->faults, 1);
    assert_int_equal(a->fault_queue, VIRTIO_NET_TXQ);
    assert_int_equal(a->fault, VIRTQ_FAULT_DIRECTION);
    assert_true(reg_read(a, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    assert_false(virtio_mmio_live(&a->net.transport));
    assert_int_equal(c->net.port.stats.rx_packets, 0);
    /* B posts a device-readable receive buffer: B breaks when a frame comes. */
    post(b, VIRTIO_NET_RXQ, 0, RX_BUF_LEN, 0);
    kick(b, VIRTIO_NET_RXQ);
    transmit(c, 0, broadcast, 60, 0);
    assert_int_equal(b->faults, 1);
    assert_int_equal(b->fault_queue, VIRTIO_NET_RXQ);
    assert_int_equal(b->fault, VIRTQ_FAULT_DIRECTION);
    assert_int_equal(used_idx(b, VIRTIO_NET_RXQ), 0);
    /* Neither stops C: its frame went out, the broken ones count it dropped. */
    take_used(c, VIRTIO_NET_TXQ);
    assert_int_equal(c->net.port.stats.tx_packets, 1);
    assert_int_equal(a->net.port.stats.rx_drops_device, 1);
    assert_int_equal(b->net.port.stats.rx_drops_device, 1);
    assert_int_equal(c->faults, 0);
    /* A fault stops its whole device, until the driver resets it; then A works again. */
    transmit(b, 0, c->net.mac, 60, 0);
    assert_int_equal(b->net.port.stats.tx_packets, 0);
    driver_up(a);
    transmit(a, 0, c->net.mac, 60, 0);
    take_used(a, VIRTIO_NET_TXQ);
    assert_int_equal(c->net.port.stats.rx_packets, 1);
    take_used(c, VIRTIO_NET_RXQ);
    assert_int_equal(a->faults, 1);
}

static void test_reset_drains_held_frames(void **state)
{
    (void)state;
    struct guest *a = &guests[0], *b = &guests[1];
    transmit(a, 0, broadcast, 60, 0);
    transmit(a, 1, broadcast, 60, 0);
    assert_int_equal(b->net.port.held_count, 2);
    reg_write(b, VIRTIO_MMIO_STATUS, 0);
    assert_int_equal(b->net.port.held_count, 0);
    assert_int_equal(b->net.port.stats.rx_drops_reset, 2);
    /* Frames for a device that is not running are dropped, not held. */
    transmit(a, 2, broadcast, 60, 0);
    assert_int_equal(b->net.port.held_count, 0);
    assert_int_equal(b->net.port.stats.rx_drops_device, 1);
    /* Started again, B gets nothing from before. */
    driver_up(b);
    post(b, VIRTIO_NET_RXQ, 0, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
    kick(b, VIRTIO_NET_RXQ);
    assert_int_equal(used_idx(b, VIRTIO_NET_RXQ), 0);
}

/*
 * More frames than a pass takes (VIRTIO_PASS_CHAINS), with EVENT_IDX: the
 * notify's pass stops at its budget with notifications off (avail_event
 * behind the driver, which need not notify for its next frame), the rest
 * is deferred work, and the pass that finds the ring empty asks for the
 * next notify. The old cap turned notifications on and dropped the
 * re-check's "frames still there", leaving avail_event behind for good.
 */
static void test_tx_budget_defers_the_rest(void **state)
{
    (void)state;
    struct guest *a = &guests[0];
    a->qnum = 128;
    driver_up(a);
    enum { FRAMES = 100 };
    /* Every avail entry names descriptor 0: one 60-byte frame, sent FRAMES times. */
    transmit(a, 0, broadcast, 60, 1);
    for (unsigned i = 1; i < FRAMES; i++)
        post(a, VIRTIO_NET_TXQ, 0, VIRTIO_NET_HDR_LEN + 60, 0);
    assert_int_equal(used_idx(a, VIRTIO_NET_TXQ), 1); /* the notify came with the first */
    assert_int_equal(a->defers, 0);
    kick(a, VIRTIO_NET_TXQ);
    assert_int_equal(used_idx(a, VIRTIO_NET_TXQ), 1 + VIRTIO_PASS_CHAINS);
    assert_int_equal(a->defers, 1);
    assert_false(driver_would_notify(a, VIRTIO_NET_TXQ, FRAMES, FRAMES + 1));
    assert_false(virtio_mmio_deferred_pass(&a->net.transport));
    assert_int_equal(used_idx(a, VIRTIO_NET_TXQ), FRAMES);
    assert_int_equal(a->net.port.stats.tx_packets, FRAMES);
    assert_true(driver_would_notify(a, VIRTIO_NET_TXQ, FRAMES, FRAMES + 1));
    assert_int_equal(a->net.transport.budget_stops, 1);
    assert_int_equal(a->net.transport.deferred_passes, 1);
}

static void test_stats_keys(void **state)
{
    (void)state;
    struct guest *a = &guests[0], *b = &guests[1];
    post(b, VIRTIO_NET_RXQ, 0, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
    kick(b, VIRTIO_NET_RXQ);
    transmit(a, 0, b->net.mac, 100, 0);
    char buf[1024];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    stats_event_json(&j, &virtio_net_stats_table, &b->net);
    const char *text = json_end(&j);
    assert_non_null(strstr(text, "\"rx_packets\":1,\"rx_bytes\":100,\"rx_drops\":0"));
    assert_non_null(strstr(text, "\"tx_packets\":0"));
    assert_non_null(strstr(text, "\"rx_held\":0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_config_space_has_mac_and_link_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frame_from_a_reaches_b_with_its_header, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_held_frame_goes_out_when_b_posts_buffers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_too_long_frames_are_dropped_and_counted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wrong_direction_breaks_only_its_device, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reset_drains_held_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tx_budget_defers_the_rest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_keys, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

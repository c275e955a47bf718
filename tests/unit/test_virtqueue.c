/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The split-ring walker, driven as a driver would through a plain buffer of
 * "guest RAM": chains, the wrap of the 16-bit indices, each fault, and the
 * interrupt and notification suppression of EVENT_IDX.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "abi/virtio.h"
#include "vmm/dev/virtio/virtqueue.h"

#define RAM_SIZE 0x10000u
#define DESC     0x1000u
#define AVAIL    0x2000u
#define USED     0x3000u
#define DATA     0x8000u

static _Alignas(4096) uint8_t mem[RAM_SIZE];
static const struct guest_ram ram = {mem, RAM_SIZE};
static struct virtq q;
static struct virtq_chain chain;
static uint16_t driver_avail; /* the driver's avail->idx */

static void put16(uint64_t at, uint16_t v)
{
    memcpy(mem + at, &v, sizeof(v));
}

static uint16_t get16(uint64_t at)
{
    uint16_t v;
    memcpy(&v, mem + at, sizeof(v));
    return v;
}

static uint32_t get32(uint64_t at)
{
    uint32_t v;
    memcpy(&v, mem + at, sizeof(v));
    return v;
}

static void set_desc_at(uint64_t table, unsigned i, uint64_t addr, uint32_t len, uint16_t flags,
                        uint16_t next)
{
    struct virtq_desc d = {addr, len, flags, next};
    memcpy(mem + table + 16 * (uint64_t)i, &d, sizeof(d));
}

static void set_desc(unsigned i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
    set_desc_at(DESC, i, addr, len, flags, next);
}

/* The driver makes chain `head` available. */
static void offer(uint16_t head)
{
    put16(AVAIL + 4 + 2 * (driver_avail & (q.num - 1)), head);
    driver_avail++;
    put16(AVAIL + 2, driver_avail);
}

static void start(uint16_t num, bool event_idx, bool indirect)
{
    memset(mem, 0, sizeof(mem));
    driver_avail = 0;
    q = (struct virtq){.num = num, .desc = DESC, .avail = AVAIL, .used = USED};
    q.event_idx = event_idx;
    q.indirect = indirect;
    assert_int_equal(virtq_start(&q, &ram), VIRTQ_OK);
    q.ready = true;
}

static int pop(enum virtq_fault *f)
{
    *f = VIRTQ_OK;
    return virtq_pop(&q, &ram, &chain, f);
}

/* Pop expecting fault `want`, then check the queue stays broken and untouched. */
static void expect_fault(enum virtq_fault want)
{
    enum virtq_fault f;
    uint16_t last = q.last_avail;
    assert_int_equal(pop(&f), -1);
    assert_string_equal(virtq_fault_name(f), virtq_fault_name(want));
    assert_int_equal(q.last_avail, last);
    assert_int_equal(pop(&f), 0); /* broken: nothing more until virtq_start */
    assert_false(virtq_has_avail(&q, &ram));
    virtq_push(&q, &ram, 0, 1);
    assert_int_equal(get16(USED + 2), 0);
}

static void test_chain_read_and_written(void **state)
{
    (void)state;
    start(8, false, false);
    memcpy(mem + DATA, "hello ", 6);
    memcpy(mem + DATA + 0x100, "world", 5);
    set_desc(3, DATA, 6, VIRTQ_DESC_F_NEXT, 5);
    set_desc(5, DATA + 0x100, 5, VIRTQ_DESC_F_NEXT, 0);
    set_desc(0, DATA + 0x200, 4, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 7);
    set_desc(7, DATA + 0x300, 8, VIRTQ_DESC_F_WRITE, 0);
    enum virtq_fault f;
    assert_false(virtq_has_avail(&q, &ram));
    assert_int_equal(pop(&f), 0);
    offer(3);
    assert_true(virtq_has_avail(&q, &ram));
    assert_int_equal(pop(&f), 1);
    assert_int_equal(chain.head, 3);
    assert_int_equal(chain.nread, 2);
    assert_int_equal(chain.nwrite, 2);
    assert_int_equal(chain.read_bytes, 11);
    assert_int_equal(chain.write_bytes, 12);
    assert_ptr_equal(chain.segs[2].host, mem + DATA + 0x200);

    char text[16] = {0};
    assert_int_equal(virtq_chain_read(&chain, 0, text, sizeof(text)), 11);
    assert_string_equal(text, "hello world");
    memset(text, 0, sizeof(text));
    assert_int_equal(virtq_chain_read(&chain, 4, text, 4), 4); /* across the segments */
    assert_string_equal(text, "o wo");
    assert_int_equal(virtq_chain_read(&chain, 11, text, 4), 0);
    assert_int_equal(virtq_chain_write(&chain, 2, "ABCDEFGHIJKLMNOP", 16), 10);
    assert_memory_equal(mem + DATA + 0x200, "\0\0AB", 4);
    assert_memory_equal(mem + DATA + 0x300, "CDEFGHIJ", 8);

    virtq_push(&q, &ram, chain.head, 12);
    assert_int_equal(get16(USED + 2), 1);
    assert_int_equal(get32(USED + 4), 3);
    assert_int_equal(get32(USED + 8), 12);
    assert_true(virtq_should_interrupt(&q, &ram));
    put16(AVAIL, VIRTQ_AVAIL_F_NO_INTERRUPT);
    assert_false(virtq_should_interrupt(&q, &ram));
    assert_int_equal(pop(&f), 0);
    assert_false(virtq_has_avail(&q, &ram));
}

static void test_indices_wrap(void **state)
{
    (void)state;
    start(4, false, false);
    for (unsigned i = 0; i < 4; i++)
        set_desc(i, DATA + 16 * i, 16, VIRTQ_DESC_F_WRITE, 0);
    enum virtq_fault f;
    /* 70000 chains, two in flight at a time: both indices wrap past 65535. */
    for (unsigned n = 0; n < 70000; n += 2) {
        offer(n & 3);
        offer((n + 1) & 3);
        assert_int_equal(pop(&f), 1);
        assert_int_equal(chain.head, n & 3);
        assert_int_equal(pop(&f), 1);
        assert_int_equal(chain.head, (n + 1) & 3);
        assert_int_equal(pop(&f), 0);
        virtq_push(&q, &ram, (n + 1) & 3, 1);
        virtq_push(&q, &ram, n & 3, 2);
        uint16_t used = (uint16_t)(n + 2);
        assert_int_equal(get16(USED + 2), used);
        assert_int_equal(get32(USED + 4 + 8 * ((used - 1) & 3)), n & 3);
    }
    assert_int_equal(q.last_avail, (uint16_t)70000);
}

static void test_ring_placement(void **state)
{
    (void)state;
    struct virtq bad = {.num = 8, .desc = DESC + 8, .avail = AVAIL, .used = USED};
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS); /* desc: 16-aligned */
    bad = (struct virtq){.num = 8, .desc = DESC, .avail = AVAIL + 1, .used = USED};
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS); /* avail: 2 */
    bad = (struct virtq){.num = 8, .desc = DESC, .avail = AVAIL, .used = USED + 2};
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS); /* used: 4 */
    /* The used ring with its avail_event: 6 + 8 * 8 bytes, which 68 before RAM's end lack. */
    bad = (struct virtq){.num = 8, .desc = DESC, .avail = AVAIL, .used = RAM_SIZE - 68};
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS);
    bad.used = RAM_SIZE - 72;
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_OK);
    bad = (struct virtq){.num = 8, .desc = DESC, .avail = RAM_SIZE - 20, .used = USED};
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS); /* 22 bytes */
    bad = (struct virtq){.num = 8, .desc = RAM_SIZE - 112, .avail = AVAIL, .used = USED};
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS); /* 128 bytes */
    bad = (struct virtq){.num = 8, .desc = ~0ull - 15, .avail = AVAIL, .used = USED};
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS); /* wraps */
    bad = (struct virtq){.num = 6, .desc = DESC, .avail = AVAIL, .used = USED};
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS); /* not a power of 2 */
    bad.num = 512;
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS);
    bad.num = 0;
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_FAULT_RING_ADDRESS);
    bad.num = 256;
    assert_int_equal(virtq_start(&bad, &ram), VIRTQ_OK);
}

static void test_avail_advance(void **state)
{
    (void)state;
    start(8, false, false);
    set_desc(0, DATA, 16, 0, 0);
    offer(0);
    enum virtq_fault f;
    assert_int_equal(pop(&f), 1);
    put16(AVAIL + 2, 1 + 8); /* a full ring's worth: allowed */
    assert_true(virtq_has_avail(&q, &ram));
    start(8, false, false);
    put16(AVAIL + 2, 9);                    /* more than the queue size */
    assert_true(virtq_has_avail(&q, &ram)); /* so the caller pops, which reports it */
    expect_fault(VIRTQ_FAULT_AVAIL_ADVANCE);
    start(8, false, false);
    put16(AVAIL + 2, 0xffff); /* backwards */
    expect_fault(VIRTQ_FAULT_AVAIL_ADVANCE);
}

static void test_avail_idx_read_once_per_pass(void **state)
{
    (void)state;
    start(8, false, false);
    for (unsigned i = 0; i < 3; i++)
        set_desc(i, DATA, 16, 0, 0);
    offer(0);
    offer(1);
    enum virtq_fault f;
    assert_int_equal(pop(&f), 1);
    /* Mid-pass the driver's idx is not read again: a bad one shows only after the pass. */
    put16(AVAIL + 2, 100);
    assert_int_equal(pop(&f), 1);
    assert_int_equal(chain.head, 1);
    expect_fault(VIRTQ_FAULT_AVAIL_ADVANCE);
}

static void test_head_and_next_bounds(void **state)
{
    (void)state;
    start(8, false, false);
    offer(8);
    expect_fault(VIRTQ_FAULT_HEAD);
    start(8, false, false);
    set_desc(2, DATA, 16, VIRTQ_DESC_F_NEXT, 8);
    offer(2);
    expect_fault(VIRTQ_FAULT_NEXT);
}

static void test_loop(void **state)
{
    (void)state;
    start(8, false, false);
    set_desc(0, DATA, 16, VIRTQ_DESC_F_NEXT, 1);
    set_desc(1, DATA, 16, VIRTQ_DESC_F_NEXT, 0);
    offer(0);
    expect_fault(VIRTQ_FAULT_LOOP);
    /* The longest chain is the whole table. */
    start(8, false, false);
    for (unsigned i = 0; i < 8; i++)
        set_desc(i, DATA, 16, i < 7 ? VIRTQ_DESC_F_NEXT : 0, (uint16_t)(i + 1));
    offer(0);
    enum virtq_fault f;
    assert_int_equal(pop(&f), 1);
    assert_int_equal(chain.nread, 8);
}

static void test_buffer_faults(void **state)
{
    (void)state;
    start(8, false, false);
    set_desc(0, DATA, 16, VIRTQ_DESC_F_NEXT, 1);
    set_desc(1, DATA, 0, 0, 0);
    offer(0);
    expect_fault(VIRTQ_FAULT_ZERO_LENGTH);

    start(8, false, false);
    set_desc(0, DATA, 16, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
    set_desc(1, DATA, 16, 0, 0);
    offer(0);
    expect_fault(VIRTQ_FAULT_DIRECTION);

    start(8, false, false);
    set_desc(0, RAM_SIZE - 15, 16, 0, 0); /* one byte past RAM */
    offer(0);
    expect_fault(VIRTQ_FAULT_ADDRESS);

    start(8, false, false);
    set_desc(0, ~0ull - 7, 16, VIRTQ_DESC_F_WRITE, 0); /* addr + len wraps */
    offer(0);
    expect_fault(VIRTQ_FAULT_ADDRESS);

    start(8, false, false);
    set_desc(0, RAM_SIZE - 16, 16, VIRTQ_DESC_F_WRITE, 0); /* RAM's last bytes: fine */
    offer(0);
    enum virtq_fault f;
    assert_int_equal(pop(&f), 1);
    assert_int_equal(chain.nwrite, 1);
}

static void test_indirect(void **state)
{
    (void)state;
    const uint64_t table = 0x4008; /* an indirect table need not be aligned */
    start(8, false, true);
    set_desc_at(table, 0, DATA, 10, VIRTQ_DESC_F_NEXT, 2);
    set_desc_at(table, 2, DATA + 0x100, 20, VIRTQ_DESC_F_NEXT, 1);
    set_desc_at(table, 1, DATA + 0x200, 30, VIRTQ_DESC_F_WRITE, 0);
    set_desc(4, table, 3 * 16, VIRTQ_DESC_F_INDIRECT | VIRTQ_DESC_F_WRITE, 0);
    offer(4);
    enum virtq_fault f;
    assert_int_equal(pop(&f), 1);
    assert_int_equal(chain.head, 4);
    assert_int_equal(chain.nread, 2);
    assert_int_equal(chain.nwrite, 1);
    assert_int_equal(chain.read_bytes, 30);
    assert_ptr_equal(chain.segs[2].host, mem + DATA + 0x200);

    /* Direct descriptors, then the table as the last. */
    set_desc(5, DATA + 0x300, 5, VIRTQ_DESC_F_NEXT, 4);
    offer(5);
    assert_int_equal(pop(&f), 1);
    assert_int_equal(chain.nread, 3);
    assert_int_equal(chain.read_bytes, 35);
}

static void indirect_fault(bool negotiated, uint64_t addr, uint32_t len, uint16_t flags,
                           enum virtq_fault want)
{
    start(8, false, negotiated);
    set_desc(0, addr, len, flags | VIRTQ_DESC_F_INDIRECT, 1);
    offer(0);
    expect_fault(want);
}

static void test_indirect_faults(void **state)
{
    (void)state;
    const uint64_t table = 0x4000;
    indirect_fault(false, table, 16, 0, VIRTQ_FAULT_INDIRECT);                /* not negotiated */
    indirect_fault(true, table, 24, 0, VIRTQ_FAULT_INDIRECT);                 /* 1.5 descriptors */
    indirect_fault(true, table, 0, 0, VIRTQ_FAULT_INDIRECT);                  /* empty */
    indirect_fault(true, table, 16, VIRTQ_DESC_F_NEXT, VIRTQ_FAULT_INDIRECT); /* with NEXT */
    indirect_fault(true, RAM_SIZE - 16, 32, 0, VIRTQ_FAULT_ADDRESS);          /* past RAM */
    indirect_fault(true, table, 257 * 16, 0, VIRTQ_FAULT_INDIRECT);           /* too long */

    /* Nested. */
    start(8, false, true);
    set_desc_at(table, 0, table + 0x100, 16, VIRTQ_DESC_F_INDIRECT, 0);
    set_desc(0, table, 16, VIRTQ_DESC_F_INDIRECT, 0);
    offer(0);
    expect_fault(VIRTQ_FAULT_INDIRECT);

    /* The table's own `next` bound, and a loop inside it. */
    start(8, false, true);
    set_desc_at(table, 0, DATA, 16, VIRTQ_DESC_F_NEXT, 2);
    set_desc(0, table, 2 * 16, VIRTQ_DESC_F_INDIRECT, 0);
    offer(0);
    expect_fault(VIRTQ_FAULT_NEXT);
    start(8, false, true);
    set_desc_at(table, 0, DATA, 16, VIRTQ_DESC_F_NEXT, 1);
    set_desc_at(table, 1, DATA, 16, VIRTQ_DESC_F_NEXT, 0);
    set_desc(0, table, 2 * 16, VIRTQ_DESC_F_INDIRECT, 0);
    offer(0);
    expect_fault(VIRTQ_FAULT_LOOP);

    /* A table longer than the queue, all chained: a chain longer than the queue. */
    start(8, false, true);
    for (unsigned i = 0; i < 9; i++)
        set_desc_at(table, i, DATA, 16, i < 8 ? VIRTQ_DESC_F_NEXT : 0, (uint16_t)(i + 1));
    set_desc(0, table, 9 * 16, VIRTQ_DESC_F_INDIRECT, 0);
    offer(0);
    expect_fault(VIRTQ_FAULT_LOOP);
}

/* The driver's side of EVENT_IDX (2.7.7.2): does moving avail->idx from old to now notify? */
static bool driver_must_notify(uint16_t old, uint16_t now)
{
    uint16_t event = get16(USED + 4 + 8 * q.num);
    return (uint16_t)(now - event - 1) < (uint16_t)(now - old);
}

static void push_one(uint16_t head)
{
    enum virtq_fault f;
    offer(head);
    assert_int_equal(pop(&f), 1);
    virtq_push(&q, &ram, chain.head, 0);
}

static void test_event_idx_interrupts(void **state)
{
    (void)state;
    start(8, true, false);
    for (unsigned i = 0; i < 8; i++)
        set_desc(i, DATA, 16, VIRTQ_DESC_F_WRITE, 0);
    put16(AVAIL, VIRTQ_AVAIL_F_NO_INTERRUPT); /* ignored with EVENT_IDX */
    push_one(0);                              /* used->idx 1 */
    assert_true(virtq_should_interrupt(&q, &ram));
    assert_false(virtq_should_interrupt(&q, &ram)); /* nothing new since */
    put16(AVAIL + 4 + 2 * 8, 2);                    /* used_event: after used entry 2 */
    push_one(1);                                    /* 2 */
    assert_false(virtq_should_interrupt(&q, &ram));
    push_one(2); /* 3: the entry at index 2 is used */
    assert_true(virtq_should_interrupt(&q, &ram));
    /* A batch that steps over used_event still interrupts once. */
    put16(AVAIL + 4 + 2 * 8, 4);
    push_one(3);
    push_one(4);
    push_one(5); /* 3 -> 6 */
    assert_true(virtq_should_interrupt(&q, &ram));
    push_one(6); /* 7: used_event 4 left behind */
    assert_false(virtq_should_interrupt(&q, &ram));
    put16(AVAIL, 0); /* with used_event behind, clearing NO_INTERRUPT changes nothing */
    push_one(7);
    assert_false(virtq_should_interrupt(&q, &ram));
}

static void test_event_idx_notifications(void **state)
{
    (void)state;
    start(8, true, false);
    for (unsigned i = 0; i < 8; i++)
        set_desc(i, DATA, 16, VIRTQ_DESC_F_WRITE, 0);
    assert_true(driver_must_notify(0, 1)); /* avail_event 0 from the start */
    offer(0);
    enum virtq_fault f;
    assert_int_equal(pop(&f), 1);
    assert_false(virtq_set_notify(&q, &ram, false));
    assert_false(driver_must_notify(1, 2));
    offer(1);
    assert_false(driver_must_notify(2, 8));
    /* On again with a buffer already there: no notify comes for it, so take it. */
    assert_true(virtq_set_notify(&q, &ram, true));
    assert_int_equal(pop(&f), 1);
    assert_int_equal(pop(&f), 0);
    assert_false(virtq_set_notify(&q, &ram, true));
    assert_true(driver_must_notify(2, 3));
    assert_int_equal(get16(USED), 0); /* flags untouched with EVENT_IDX */
}

static void test_no_notify_flag(void **state)
{
    (void)state;
    start(8, false, false);
    set_desc(0, DATA, 16, 0, 0);
    assert_false(virtq_set_notify(&q, &ram, false));
    assert_int_equal(get16(USED), VIRTQ_USED_F_NO_NOTIFY);
    offer(0);
    assert_true(virtq_set_notify(&q, &ram, true));
    assert_int_equal(get16(USED), 0);
    assert_int_equal(get16(USED + 4 + 8 * 8), 0); /* no avail_event without EVENT_IDX */
}

static void test_not_ready_is_left_alone(void **state)
{
    (void)state;
    start(8, false, false);
    set_desc(0, DATA, 16, 0, 0);
    offer(0);
    q.ready = false;
    enum virtq_fault f;
    assert_false(virtq_has_avail(&q, &ram));
    assert_int_equal(pop(&f), 0);
    assert_false(virtq_set_notify(&q, &ram, false));
    assert_int_equal(get16(USED), 0);
}

static void test_fault_names(void **state)
{
    (void)state;
    assert_string_equal(virtq_fault_name(VIRTQ_FAULT_HEAD), "head");
    assert_string_equal(virtq_fault_name(VIRTQ_FAULT_LOOP), "loop");
    assert_string_equal(virtq_fault_name(VIRTQ_FAULT_COUNT), "unknown");
    for (unsigned i = 0; i < VIRTQ_FAULT_COUNT; i++)
        for (unsigned j = 0; j < i; j++)
            assert_true(strcmp(virtq_fault_name(i), virtq_fault_name(j)) != 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_read_and_written),
        cmocka_unit_test(test_indices_wrap),
        cmocka_unit_test(test_ring_placement),
        cmocka_unit_test(test_avail_advance),
        cmocka_unit_test(test_avail_idx_read_once_per_pass),
        cmocka_unit_test(test_head_and_next_bounds),
        cmocka_unit_test(test_loop),
        cmocka_unit_test(test_buffer_faults),
        cmocka_unit_test(test_indirect),
        cmocka_unit_test(test_indirect_faults),
        cmocka_unit_test(test_event_idx_interrupts),
        cmocka_unit_test(test_event_idx_notifications),
        cmocka_unit_test(test_no_notify_flag),
        cmocka_unit_test(test_not_ready_is_left_alone),
        cmocka_unit_test(test_fault_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk (vmm/dev/virtio/blk.c) as a driver sees it: the transport's
 * registers set up as Linux does, real split rings in a plain buffer of
 * "guest RAM", requests posted and notified. Reads, writes read back, flush,
 * get-id, the configuration space, IOERR out of range or off whole sectors,
 * UNSUPP for unknown types, the status byte at the end of the last writable
 * descriptor however the chain is split, avail_event kept up with EVENT_IDX,
 * and chains without a header or status breaking the device.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "lib/bytes.h"
#include "vmm/dev/virtio/blk.h"

void kprintf(const char *fmt, ...)
{
    (void)fmt;
}

#define RAM_SIZE  (1u << 20)
#define QSIZE     16
#define DESC_GPA  0x1000u
#define AVAIL_GPA 0x2000u
#define USED_GPA  0x3000u
#define BUF_GPA   0x10000u /* request buffers from here */
#define SECTORS   64

static _Alignas(4096) uint8_t ram[RAM_SIZE];
static uint8_t disk[SECTORS * VIRTIO_BLK_SECTOR];
static struct virtio_blk blk;
static struct virtio_mmio *t = &blk.transport;

/* The VM's side: interrupts and faults counted. */
static unsigned interrupts, faults;
static unsigned fault_queue;
static enum virtq_fault last_fault;

static void env_interrupt(struct virtio_mmio *tr)
{
    (void)tr;
    interrupts++;
}

static void env_fault(struct virtio_mmio *tr, unsigned queue, enum virtq_fault f)
{
    (void)tr;
    faults++;
    fault_queue = queue;
    last_fault = f;
}

/* Deferred work asked for (the VM's side queues it; the tests run its passes themselves). */
static unsigned defers;

static void env_defer(struct virtio_mmio *tr)
{
    (void)tr;
    defers++;
}

static const struct virtio_env env = {env_interrupt, env_fault, env_defer};

/* The driver's side of the queue; qsize is QueueNum (QSIZE but where a test says). */
static uint16_t avail_idx, next_desc, used_seen, qsize;

static uint32_t reg_read(unsigned off)
{
    return virtio_mmio_read(t, off, 4);
}

static void reg_write(unsigned off, uint32_t v)
{
    virtio_mmio_write(t, off, 4, v);
}

/* Linux's virtio_mmio probe and virtio_blk's queue setup; features: the device's, bits 0-31. */
static void driver_start(uint64_t features)
{
    reg_write(VIRTIO_MMIO_STATUS, 0);
    reg_write(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    reg_write(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    for (unsigned sel = 0; sel < 2; sel++) {
        reg_write(VIRTIO_MMIO_DRIVER_FEATURES_SEL, sel);
        reg_write(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> (32 * sel)));
    }
    uint32_t status = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK;
    reg_write(VIRTIO_MMIO_STATUS, status);
    assert_true(reg_read(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
    reg_write(VIRTIO_MMIO_QUEUE_SEL, 0);
    assert_int_equal(reg_read(VIRTIO_MMIO_QUEUE_NUM_MAX), VIRTQ_NUM_MAX);
    reg_write(VIRTIO_MMIO_QUEUE_NUM, qsize);
    reg_write(VIRTIO_MMIO_QUEUE_DESC_LOW, DESC_GPA);
    reg_write(VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
    reg_write(VIRTIO_MMIO_QUEUE_DRIVER_LOW, AVAIL_GPA);
    reg_write(VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0);
    reg_write(VIRTIO_MMIO_QUEUE_DEVICE_LOW, USED_GPA);
    reg_write(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
    reg_write(VIRTIO_MMIO_QUEUE_READY, 1);
    reg_write(VIRTIO_MMIO_STATUS, status | VIRTIO_STATUS_DRIVER_OK);
    assert_true(virtio_mmio_live(t));
}

static const uint64_t version_1 = VIRTIO_BIT(VIRTIO_F_VERSION_1);

/* The device over the disk, its transport at power-on (as virtio_vm_init sets it up in a VM). */
static void start(uint64_t bytes, const char *id)
{
    virtio_blk_init(&blk, disk, SECTORS, bytes, id);
    virtio_mmio_init(t, &virtio_blk_ops, &env, NULL, VIRTIO_SLOT_BLK,
                     (struct guest_ram){ram, RAM_SIZE});
}

static int setup(void **state)
{
    (void)state;
    memset(ram, 0, sizeof(ram));
    for (unsigned i = 0; i < sizeof(disk); i++)
        disk[i] = (uint8_t)(i * 7 + i / VIRTIO_BLK_SECTOR);
    start(sizeof(disk) - 100, "disk.img");
    interrupts = faults = defers = 0;
    last_fault = VIRTQ_OK;
    avail_idx = next_desc = used_seen = 0;
    qsize = QSIZE;
    driver_start(version_1);
    return 0;
}

/* One descriptor of a request: its buffer's guest-physical address and length, its direction. */
struct seg {
    uint32_t gpa, len;
    bool write;
};

/* Post a chain of n descriptors and notify the device. */
static void post(const struct seg *segs, unsigned n)
{
    uint16_t head = next_desc;
    for (unsigned i = 0; i < n; i++) {
        uint16_t d = (uint16_t)((head + i) % qsize);
        uint8_t *p = ram + DESC_GPA + 16u * d;
        put_le64(p, segs[i].gpa);
        put_le32(p + 8, segs[i].len);
        uint16_t flags = (uint16_t)((segs[i].write ? VIRTQ_DESC_F_WRITE : 0) |
                                    (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0));
        put_le16(p + 12, flags);
        put_le16(p + 14, (uint16_t)((d + 1) % qsize));
    }
    next_desc = (uint16_t)((head + n) % qsize);
    put_le16(ram + AVAIL_GPA + 4 + 2 * (avail_idx % qsize), head);
    avail_idx++;
    put_le16(ram + AVAIL_GPA + 2, avail_idx);
    reg_write(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

static uint16_t used_idx(void)
{
    return get_le16(ram + USED_GPA + 2);
}

/* The next used element's length. */
static uint32_t take_used_any(void)
{
    const uint8_t *e = ram + USED_GPA + 4 + 8 * (used_seen % qsize);
    used_seen++;
    return get_le32(e + 4);
}

/* The next used element's length, asserting it is the only one, for the chain posted last. */
static uint32_t take_used(void)
{
    assert_int_equal(used_idx(), (uint16_t)(used_seen + 1));
    return take_used_any();
}

/* A request header at gpa. */
static void header(uint32_t gpa, uint32_t type, uint64_t sector)
{
    put_le32(ram + gpa, type);
    put_le32(ram + gpa + 4, 0);
    put_le64(ram + gpa + 8, sector);
}

#define HDR    BUF_GPA
#define DATA   (BUF_GPA + 0x1000)
#define STATUS (BUF_GPA + 0x100)
#define POISON 0xee

/* A three-descriptor request: header, data of len bytes at DATA, status; the used length. */
static uint32_t request(uint32_t type, uint64_t sector, uint32_t len, bool data_writable)
{
    header(HDR, type, sector);
    ram[STATUS] = POISON;
    const struct seg segs[] = {
        {HDR, VIRTIO_BLK_HDR_LEN, false}, {DATA, len, data_writable}, {STATUS, 1, true}};
    post(segs, 3);
    return take_used();
}

static void test_config_space(void **state)
{
    (void)state;
    assert_int_equal(reg_read(VIRTIO_MMIO_DEVICE_ID), VIRTIO_ID_BLOCK);
    reg_write(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
    uint32_t f = reg_read(VIRTIO_MMIO_DEVICE_FEATURES);
    uint32_t want = VIRTIO_BIT(VIRTIO_BLK_F_SIZE_MAX) | VIRTIO_BIT(VIRTIO_BLK_F_SEG_MAX) |
                    VIRTIO_BIT(VIRTIO_BLK_F_BLK_SIZE) | VIRTIO_BIT(VIRTIO_BLK_F_FLUSH);
    assert_int_equal(f & want, want);
    assert_false(f & VIRTIO_BIT(VIRTIO_BLK_F_RO));
    reg_write(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
    assert_true(reg_read(VIRTIO_MMIO_DEVICE_FEATURES) & 1); /* VERSION_1 */
    assert_int_equal(reg_read(VIRTIO_MMIO_CONFIG + 0), SECTORS);
    assert_int_equal(reg_read(VIRTIO_MMIO_CONFIG + 4), 0);
    assert_int_equal(reg_read(VIRTIO_MMIO_CONFIG + 8), VIRTIO_BLK_SIZE_MAX);
    assert_int_equal(reg_read(VIRTIO_MMIO_CONFIG + 12), VIRTQ_NUM_MAX - 2);
    assert_int_equal(reg_read(VIRTIO_MMIO_CONFIG + 20), VIRTIO_BLK_SECTOR);
    /* Byte reads see the same little-endian field. */
    assert_int_equal(virtio_mmio_read(t, VIRTIO_MMIO_CONFIG + 21, 1), VIRTIO_BLK_SECTOR >> 8);
}

static void test_read(void **state)
{
    (void)state;
    memset(ram + DATA, POISON, 3 * VIRTIO_BLK_SECTOR);
    assert_int_equal(request(VIRTIO_BLK_T_IN, 5, 2 * VIRTIO_BLK_SECTOR, true),
                     2 * VIRTIO_BLK_SECTOR + 1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
    assert_memory_equal(ram + DATA, disk + 5 * VIRTIO_BLK_SECTOR, 2 * VIRTIO_BLK_SECTOR);
    assert_int_equal(ram[DATA + 2 * VIRTIO_BLK_SECTOR], POISON);
    assert_int_equal(interrupts, 1);
    assert_true(reg_read(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_VRING);
    assert_int_equal(blk.stats.reads, 1);
    assert_int_equal(blk.stats.read_bytes, 2 * VIRTIO_BLK_SECTOR);
    /* The last sector, whole. */
    assert_int_equal(request(VIRTIO_BLK_T_IN, SECTORS - 1, VIRTIO_BLK_SECTOR, true),
                     VIRTIO_BLK_SECTOR + 1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
    assert_memory_equal(ram + DATA, disk + (SECTORS - 1) * VIRTIO_BLK_SECTOR, VIRTIO_BLK_SECTOR);
}

static void test_write_then_read_back(void **state)
{
    (void)state;
    uint8_t pattern[3 * VIRTIO_BLK_SECTOR];
    for (unsigned i = 0; i < sizeof(pattern); i++)
        pattern[i] = (uint8_t)(0xa5 ^ i);
    memcpy(ram + DATA, pattern, sizeof(pattern));
    uint8_t before = disk[10 * VIRTIO_BLK_SECTOR - 1], after = disk[13 * VIRTIO_BLK_SECTOR];
    assert_int_equal(request(VIRTIO_BLK_T_OUT, 10, sizeof(pattern), false), 1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
    assert_memory_equal(disk + 10 * VIRTIO_BLK_SECTOR, pattern, sizeof(pattern));
    assert_int_equal(disk[10 * VIRTIO_BLK_SECTOR - 1], before);
    assert_int_equal(disk[13 * VIRTIO_BLK_SECTOR], after);
    memset(ram + DATA, 0, sizeof(pattern));
    assert_int_equal(request(VIRTIO_BLK_T_IN, 10, sizeof(pattern), true), sizeof(pattern) + 1);
    assert_memory_equal(ram + DATA, pattern, sizeof(pattern));
    assert_int_equal(blk.stats.writes, 1);
    assert_int_equal(blk.stats.write_bytes, sizeof(pattern));
    assert_int_equal(interrupts, 2);
}

static void test_flush(void **state)
{
    (void)state;
    header(HDR, VIRTIO_BLK_T_FLUSH, 0);
    ram[STATUS] = POISON;
    const struct seg segs[] = {{HDR, VIRTIO_BLK_HDR_LEN, false}, {STATUS, 1, true}};
    post(segs, 2);
    assert_int_equal(take_used(), 1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
    assert_int_equal(blk.stats.flushes, 1);
    assert_int_equal(blk.stats.errors, 0);
}

static void test_get_id(void **state)
{
    (void)state;
    memset(ram + DATA, POISON, 32);
    assert_int_equal(request(VIRTIO_BLK_T_GET_ID, 0, VIRTIO_BLK_ID_BYTES, true),
                     VIRTIO_BLK_ID_BYTES + 1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
    uint8_t want[VIRTIO_BLK_ID_BYTES] = "disk.img";
    assert_memory_equal(ram + DATA, want, sizeof(want));
    assert_int_equal(ram[DATA + VIRTIO_BLK_ID_BYTES], POISON);
    /* A longer id is cut at 20 bytes, unterminated. */
    start(sizeof(disk), "a-disk-name-of-30-characters-x");
    avail_idx = next_desc = used_seen = 0;
    memset(ram + USED_GPA, 0, 0x1000);
    driver_start(version_1);
    request(VIRTIO_BLK_T_GET_ID, 0, VIRTIO_BLK_ID_BYTES, true);
    assert_memory_equal(ram + DATA, "a-disk-name-of-30-ch", VIRTIO_BLK_ID_BYTES);
    assert_int_equal(ram[DATA + VIRTIO_BLK_ID_BYTES], POISON);
}

static void test_out_of_range_is_ioerr(void **state)
{
    (void)state;
    memset(ram + DATA, POISON, 2 * VIRTIO_BLK_SECTOR);
    /* Starting past the end, running past it, a sector whose byte offset wraps, a partial sector.
     */
    const struct {
        uint32_t type;
        uint64_t sector;
        uint32_t len;
    } bad[] = {
        {VIRTIO_BLK_T_IN, SECTORS, VIRTIO_BLK_SECTOR},
        {VIRTIO_BLK_T_IN, SECTORS - 1, 2 * VIRTIO_BLK_SECTOR},
        {VIRTIO_BLK_T_IN, UINT64_MAX, VIRTIO_BLK_SECTOR},
        {VIRTIO_BLK_T_IN, UINT64_MAX / VIRTIO_BLK_SECTOR + 1, VIRTIO_BLK_SECTOR},
        {VIRTIO_BLK_T_IN, 0, VIRTIO_BLK_SECTOR + 1},
        {VIRTIO_BLK_T_OUT, SECTORS, VIRTIO_BLK_SECTOR},
        {VIRTIO_BLK_T_OUT, SECTORS - 1, 2 * VIRTIO_BLK_SECTOR},
        {VIRTIO_BLK_T_OUT, 0, 100},
    };
    uint8_t disk_copy[sizeof(disk)];
    memcpy(disk_copy, disk, sizeof(disk));
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            request(bad[i].type, bad[i].sector, bad[i].len, bad[i].type == VIRTIO_BLK_T_IN), 1);
        assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
        assert_int_equal(ram[DATA], POISON); /* nothing read */
    }
    assert_memory_equal(disk, disk_copy, sizeof(disk)); /* nothing written */
    assert_int_equal(blk.stats.errors, sizeof(bad) / sizeof(bad[0]));
    assert_int_equal(blk.stats.reads + blk.stats.writes, 0);
    assert_true(virtio_mmio_live(t)); /* a bad request is the guest's answer, not a fault */
}

static void test_unknown_type_is_unsupp(void **state)
{
    (void)state;
    const uint32_t types[] = {2, 3, 11 /* DISCARD */, 13 /* WRITE_ZEROES */, 0xffffffffu};
    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        assert_int_equal(request(types[i], 0, VIRTIO_BLK_SECTOR, true), 1);
        assert_int_equal(ram[STATUS], VIRTIO_BLK_S_UNSUPP);
    }
    assert_int_equal(blk.stats.errors, sizeof(types) / sizeof(types[0]));
}

/*
 * The status is the last byte of the last writable descriptor, wherever the
 * chain splits: the header over two descriptors, the data and the status
 * sharing the last one, which is not the data's whole length.
 */
static void test_status_byte_placement(void **state)
{
    (void)state;
    header(HDR, VIRTIO_BLK_T_IN, 3);
    memset(ram + DATA, POISON, 0x2000);
    /* Header 7 + 9 bytes; data 300 + 724 bytes; the last writable piece ends in the status. */
    const struct seg segs[] = {
        {HDR, 7, false},
        {HDR + 7, 9, false},
        {DATA, 300, true},
        {DATA + 0x1000, 2 * VIRTIO_BLK_SECTOR - 300 + 1, true},
    };
    post(segs, 4);
    assert_int_equal(take_used(), 2 * VIRTIO_BLK_SECTOR + 1);
    assert_memory_equal(ram + DATA, disk + 3 * VIRTIO_BLK_SECTOR, 300);
    assert_int_equal(ram[DATA + 300], POISON);
    assert_memory_equal(ram + DATA + 0x1000, disk + 3 * VIRTIO_BLK_SECTOR + 300,
                        2 * VIRTIO_BLK_SECTOR - 300);
    uint32_t status_at = DATA + 0x1000 + 2 * VIRTIO_BLK_SECTOR - 300;
    assert_int_equal(ram[status_at], VIRTIO_BLK_S_OK);
    assert_int_equal(ram[status_at + 1], POISON);

    /* An OUT, its data split after the header's own descriptor, its status sharing a descriptor
     * with writable bytes it does not use. */
    const uint32_t out_status = BUF_GPA + 0x800;
    header(HDR, VIRTIO_BLK_T_OUT, 0);
    memset(ram + HDR + VIRTIO_BLK_HDR_LEN, 0x5a, VIRTIO_BLK_SECTOR);
    memset(ram + out_status, POISON, 8);
    const struct seg out[] = {
        {HDR, VIRTIO_BLK_HDR_LEN + VIRTIO_BLK_SECTOR / 2, false},
        {HDR + VIRTIO_BLK_HDR_LEN + VIRTIO_BLK_SECTOR / 2, VIRTIO_BLK_SECTOR / 2, false},
        {out_status, 8, true},
    };
    post(out, 3);
    assert_int_equal(take_used(), 1);
    assert_int_equal(ram[out_status + 7], VIRTIO_BLK_S_OK);
    assert_int_equal(ram[out_status], POISON);
    for (unsigned i = 0; i < VIRTIO_BLK_SECTOR; i++)
        assert_int_equal(disk[i], 0x5a);
}

/* With EVENT_IDX the device asks for the next notify (avail_event) after each pass. */
static void test_event_idx_asks_for_the_next_notify(void **state)
{
    (void)state;
    driver_start(version_1 | VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX));
    avail_idx = next_desc = used_seen = 0;
    memset(ram + USED_GPA, 0, 0x1000);
    const uint8_t *avail_event = ram + USED_GPA + 4 + 8 * qsize;
    for (unsigned i = 1; i <= 3; i++) {
        request(VIRTIO_BLK_T_FLUSH, 0, VIRTIO_BLK_SECTOR, true);
        assert_int_equal(get_le16(avail_event), i);
    }
}

/*
 * SIZE_MAX is enforced as offered: a buffer longer is answered IOERR and
 * nothing is copied; one of exactly SIZE_MAX is served.
 */
static void test_buffer_over_size_max_is_ioerr(void **state)
{
    (void)state;
    memset(ram + DATA, POISON, 2 * VIRTIO_BLK_SIZE_MAX);
    assert_int_equal(request(VIRTIO_BLK_T_IN, 0, VIRTIO_BLK_SIZE_MAX + VIRTIO_BLK_SECTOR, true), 1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
    assert_int_equal(ram[DATA], POISON);
    uint8_t disk_copy[sizeof(disk)];
    memcpy(disk_copy, disk, sizeof(disk));
    assert_int_equal(request(VIRTIO_BLK_T_OUT, 0, VIRTIO_BLK_SIZE_MAX + VIRTIO_BLK_SECTOR, false),
                     1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
    assert_memory_equal(disk, disk_copy, sizeof(disk));
    assert_int_equal(blk.stats.errors, 2);
    assert_int_equal(request(VIRTIO_BLK_T_IN, 0, VIRTIO_BLK_SIZE_MAX, true),
                     VIRTIO_BLK_SIZE_MAX + 1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
    assert_memory_equal(ram + DATA, disk, VIRTIO_BLK_SIZE_MAX);
}

/* n avail entries, every one naming the chain at head 0 (as a hostile driver may), and a notify. */
static void post_copies(const struct seg *segs, unsigned nsegs, unsigned n)
{
    for (unsigned i = 0; i + 1 < n; i++) {
        next_desc = 0;
        put_le16(ram + AVAIL_GPA + 4 + 2 * (avail_idx % qsize), 0);
        avail_idx++;
    }
    next_desc = 0;
    post(segs, nsegs); /* the last, then avail->idx and the notify */
}

/* The used elements so far, each with this length. */
static void expect_used(uint16_t count, uint32_t len)
{
    assert_int_equal(used_idx(), count);
    while (used_seen < count)
        assert_int_equal(take_used_any(), len);
}

/*
 * A notify serves at most VIRTIO_PASS_BYTES (the chain that crosses it is
 * the last) and leaves the rest to deferred work, with the driver's
 * notifications off; each deferred pass is bounded the same way, and the
 * one that empties the ring turns notifications back on. Nothing is lost.
 */
static void test_notify_is_bounded_by_bytes(void **state)
{
    (void)state;
    /* 7 data buffers of SIZE_MAX (the disk's 32 KiB): 28 KiB and 17 bytes a chain; the 10th
     * crosses 256 KiB. */
    enum { DATA_BUFS = 7 };
    struct seg segs[DATA_BUFS + 2] = {{HDR, VIRTIO_BLK_HDR_LEN, false}};
    for (unsigned i = 1; i <= DATA_BUFS; i++)
        segs[i] = (struct seg){DATA, VIRTIO_BLK_SIZE_MAX, true};
    segs[DATA_BUFS + 1] = (struct seg){STATUS, 1, true};
    header(HDR, VIRTIO_BLK_T_IN, 0);
    uint32_t answer = DATA_BUFS * VIRTIO_BLK_SIZE_MAX + 1;
    post_copies(segs, DATA_BUFS + 2, QSIZE);
    expect_used(10, answer);
    assert_int_equal(defers, 1);
    assert_int_equal(get_le16(ram + USED_GPA) & VIRTQ_USED_F_NO_NOTIFY, VIRTQ_USED_F_NO_NOTIFY);
    /* 4 more, and a notify though notifications are off (a driver may): a pass of its own. */
    post_copies(segs, DATA_BUFS + 2, 4);
    assert_int_equal(used_idx(), 10 + 10);
    assert_int_equal(defers, 2);
    assert_false(virtio_mmio_deferred_pass(t));
    expect_used(QSIZE + 4, answer);
    assert_int_equal(get_le16(ram + USED_GPA) & VIRTQ_USED_F_NO_NOTIFY, 0);
    assert_int_equal(blk.stats.reads, QSIZE + 4);
    assert_int_equal(t->budget_stops, 2);
    assert_int_equal(t->deferred_passes, 1);
}

/*
 * At most VIRTIO_PASS_CHAINS chains a pass, however small. With EVENT_IDX
 * avail_event stays behind the driver while work is left (it need not
 * notify), and is set to its index when the ring is empty.
 */
static void test_notify_is_bounded_by_chains(void **state)
{
    (void)state;
    qsize = VIRTQ_NUM_MAX;
    driver_start(version_1 | VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX));
    const uint8_t *avail_event = ram + USED_GPA + 4 + 8 * qsize;
    header(HDR, VIRTIO_BLK_T_FLUSH, 0);
    const struct seg flush[] = {{HDR, VIRTIO_BLK_HDR_LEN, false}, {STATUS, 1, true}};
    post_copies(flush, 2, 100);
    expect_used(VIRTIO_PASS_CHAINS, 1);
    assert_int_equal(defers, 1);
    assert_int_equal(get_le16(avail_event), (uint16_t)(100 - 1));
    assert_false(virtio_mmio_deferred_pass(t));
    expect_used(100, 1);
    assert_int_equal(get_le16(avail_event), 100);
    assert_int_equal(blk.stats.flushes, 100);
}

/* A reset between a notify and its deferred pass: the pass finds the queue gone, touches nothing.
 */
static void test_deferred_pass_after_reset(void **state)
{
    (void)state;
    header(HDR, VIRTIO_BLK_T_FLUSH, 0);
    const struct seg flush[] = {{HDR, VIRTIO_BLK_HDR_LEN, false}, {STATUS, 1, true}};
    qsize = VIRTQ_NUM_MAX;
    driver_start(version_1);
    post_copies(flush, 2, 100);
    expect_used(VIRTIO_PASS_CHAINS, 1);
    reg_write(VIRTIO_MMIO_STATUS, 0);
    assert_false(virtio_mmio_deferred_pass(t));
    assert_int_equal(used_idx(), VIRTIO_PASS_CHAINS);
    assert_int_equal(faults, 0);
}

/* A chain the device cannot take breaks it: DEVICE_NEEDS_RESET, the fault reported, no used. */
static void expect_broken(const struct seg *segs, unsigned n, enum virtq_fault f)
{
    post(segs, n);
    assert_int_equal(used_idx(), used_seen);
    assert_int_equal(faults, 1);
    assert_int_equal(fault_queue, 0);
    assert_int_equal(last_fault, f);
    assert_true(reg_read(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    assert_false(virtio_mmio_live(t));
    assert_true(reg_read(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG);
    /* Stopped until the driver resets: a good request now goes unanswered. */
    header(HDR, VIRTIO_BLK_T_FLUSH, 0);
    const struct seg good[] = {{HDR, VIRTIO_BLK_HDR_LEN, false}, {STATUS, 1, true}};
    post(good, 2);
    assert_int_equal(used_idx(), used_seen);
    /* A reset brings it back. */
    faults = 0;
    avail_idx = next_desc = used_seen = 0;
    memset(ram + AVAIL_GPA, 0, 0x2000);
    driver_start(version_1);
    ram[STATUS] = POISON;
    post(good, 2);
    assert_int_equal(take_used(), 1);
    assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
    assert_int_equal(faults, 0);
}

static void test_malformed_chains_break_the_device(void **state)
{
    (void)state;
    header(HDR, VIRTIO_BLK_T_IN, 0);
    /* A header cut short. */
    const struct seg short_header[] = {{HDR, 8, false}, {DATA, VIRTIO_BLK_SECTOR + 1, true}};
    expect_broken(short_header, 2, VIRTQ_FAULT_LENGTH);
    /* No status byte: nothing writable. */
    const struct seg no_status[] = {{HDR, VIRTIO_BLK_HDR_LEN, false},
                                    {DATA, VIRTIO_BLK_SECTOR, false}};
    expect_broken(no_status, 2, VIRTQ_FAULT_DIRECTION);
    /* No header at all: everything writable. */
    const struct seg no_header[] = {{DATA, VIRTIO_BLK_SECTOR + 1, true}};
    expect_broken(no_header, 1, VIRTQ_FAULT_DIRECTION);
    /* None of them was served. */
    assert_int_equal(blk.stats.reads + blk.stats.writes + blk.stats.errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_config_space, setup),
        cmocka_unit_test_setup(test_read, setup),
        cmocka_unit_test_setup(test_write_then_read_back, setup),
        cmocka_unit_test_setup(test_flush, setup),
        cmocka_unit_test_setup(test_get_id, setup),
        cmocka_unit_test_setup(test_out_of_range_is_ioerr, setup),
        cmocka_unit_test_setup(test_unknown_type_is_unsupp, setup),
        cmocka_unit_test_setup(test_status_byte_placement, setup),
        cmocka_unit_test_setup(test_event_idx_asks_for_the_next_notify, setup),
        cmocka_unit_test_setup(test_malformed_chains_break_the_device, setup),
        cmocka_unit_test_setup(test_buffer_over_size_max_is_ioerr, setup),
        cmocka_unit_test_setup(test_notify_is_bounded_by_bytes, setup),
        cmocka_unit_test_setup(test_notify_is_bounded_by_chains, setup),
        cmocka_unit_test_setup(test_deferred_pass_after_reset, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The virtio-mmio transport driven as Linux's virtio_mmio driver does (probe,
 * reset, negotiation, queue setup, DRIVER_OK), with its refusals, reset,
 * DEVICE_NEEDS_RESET after a queue's fault, and InterruptStatus/ACK, on a
 * fake device and a fake VM.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "vmm/dev/virtio/virtio_mmio.h"

#define RAM_SIZE 0x10000u
#define DESC     0x1000u
#define AVAIL    0x2000u
#define USED     0x3000u
#define DEVICE_BITS                                                                                \
    (VIRTIO_BIT(VIRTIO_NET_F_MAC) | VIRTIO_BIT(VIRTIO_NET_F_STATUS) |                              \
     VIRTIO_BIT(VIRTIO_F_ACCESS_PLATFORM) | VIRTIO_BIT(VIRTIO_F_RING_PACKED))

static _Alignas(4096) uint8_t mem[RAM_SIZE];
static struct virtio_mmio t;
static const uint8_t config[8] = {0x02, 0x50, 0x4c, 0x58, 0x00, 0x07, 0x01, 0x00};
static unsigned notified[VIRTIO_QUEUES_MAX], resets, pulses, faults_seen;
static unsigned fault_queue;
static enum virtq_fault fault_kind;

static void fake_config_read(struct virtio_mmio *tp, unsigned off, uint8_t *buf, unsigned len)
{
    assert_ptr_equal(tp, &t);
    assert_true(off + len <= sizeof(config));
    memcpy(buf, config + off, len);
}

static void fake_notify(struct virtio_mmio *tp, unsigned queue)
{
    (void)tp;
    notified[queue]++;
}

static void fake_reset(struct virtio_mmio *tp)
{
    (void)tp;
    resets++;
}

static void fake_interrupt(struct virtio_mmio *tp)
{
    (void)tp;
    pulses++;
}

static void fake_fault(struct virtio_mmio *tp, unsigned queue, enum virtq_fault f)
{
    (void)tp;
    faults_seen++;
    fault_queue = queue;
    fault_kind = f;
}

static const struct virtio_device_ops ops = {
    .name = "fake",
    .device_id = VIRTIO_ID_NET,
    /* ACCESS_PLATFORM and RING_PACKED here must still never be offered. */
    .features = DEVICE_BITS,
    .nqueues = 2,
    .config_len = sizeof(config),
    .config_read = fake_config_read,
    .notify = fake_notify,
    .reset = fake_reset,
};

static const struct virtio_env env = {fake_interrupt, fake_fault, NULL}; /* never defers */

static int setup(void **state)
{
    (void)state;
    memset(mem, 0, sizeof(mem));
    memset(notified, 0, sizeof(notified));
    resets = pulses = faults_seen = 0;
    virtio_mmio_init(&t, &ops, &env, NULL, 1, (struct guest_ram){mem, RAM_SIZE});
    return 0;
}

static uint32_t rd(uint64_t off)
{
    return virtio_mmio_read(&t, off, 4);
}

static void wr(uint64_t off, uint32_t value)
{
    virtio_mmio_write(&t, off, 4, value);
}

static void add_status(uint32_t bits)
{
    wr(VIRTIO_MMIO_STATUS, rd(VIRTIO_MMIO_STATUS) | bits);
}

static void write_features(uint64_t features)
{
    wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
    wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
    wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
    wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
}

static uint64_t read_features(void)
{
    wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
    uint64_t high = rd(VIRTIO_MMIO_DEVICE_FEATURES);
    wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
    return high << 32 | rd(VIRTIO_MMIO_DEVICE_FEATURES);
}

/* Linux's vm_setup_vq for queue q, num entries, rings at base + DESC/AVAIL/USED. */
static void setup_queue(unsigned q, uint32_t num, uint64_t base)
{
    wr(VIRTIO_MMIO_QUEUE_SEL, q);
    assert_int_equal(rd(VIRTIO_MMIO_QUEUE_READY), 0);
    assert_int_equal(rd(VIRTIO_MMIO_QUEUE_NUM_MAX), VIRTQ_NUM_MAX);
    wr(VIRTIO_MMIO_QUEUE_NUM, num);
    wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)(base + DESC));
    wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)((base + DESC) >> 32));
    wr(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)(base + AVAIL));
    wr(VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (uint32_t)((base + AVAIL) >> 32));
    wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)(base + USED));
    wr(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (uint32_t)((base + USED) >> 32));
    wr(VIRTIO_MMIO_QUEUE_READY, 1);
}

/* The probe and virtio_dev_probe of Linux 6.1, up to DRIVER_OK, accepting `features`. */
static void linux_probe(uint64_t features)
{
    assert_int_equal(rd(VIRTIO_MMIO_MAGIC_VALUE), 0x74726976);
    assert_int_equal(rd(VIRTIO_MMIO_VERSION), 2);
    assert_int_equal(rd(VIRTIO_MMIO_DEVICE_ID), VIRTIO_ID_NET);
    assert_int_equal(rd(VIRTIO_MMIO_VENDOR_ID), VIRTIO_VENDOR_POLLUX);
    wr(VIRTIO_MMIO_STATUS, 0);
    add_status(VIRTIO_STATUS_ACKNOWLEDGE);
    add_status(VIRTIO_STATUS_DRIVER);
    assert_int_equal(read_features() & features, features);
    write_features(features);
    add_status(VIRTIO_STATUS_FEATURES_OK);
    assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
    setup_queue(0, 128, 0);
    setup_queue(1, 256, 0x4000);
    add_status(VIRTIO_STATUS_DRIVER_OK);
}

static void test_linux_probe(void **state)
{
    (void)state;
    uint64_t offered = read_features();
    assert_int_equal(offered, VIRTIO_BIT(VIRTIO_NET_F_MAC) | VIRTIO_BIT(VIRTIO_NET_F_STATUS) |
                                  VIRTIO_BIT(VIRTIO_F_VERSION_1) |
                                  VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX) |
                                  VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC));
    wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 2);
    assert_int_equal(rd(VIRTIO_MMIO_DEVICE_FEATURES), 0);
    assert_false(virtio_mmio_live(&t));
    linux_probe(VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX) |
                VIRTIO_BIT(VIRTIO_NET_F_MAC));
    assert_int_equal(rd(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
                                                 VIRTIO_STATUS_FEATURES_OK |
                                                 VIRTIO_STATUS_DRIVER_OK);
    assert_true(virtio_mmio_live(&t));
    assert_true(virtio_mmio_has(&t, VIRTIO_F_RING_EVENT_IDX));
    assert_false(virtio_mmio_has(&t, VIRTIO_NET_F_STATUS));
    assert_int_equal(resets, 1);

    const struct virtq *q1 = &t.queues[1].vq;
    assert_true(q1->ready);
    assert_int_equal(q1->num, 256);
    assert_int_equal(q1->desc, 0x4000 + DESC);
    assert_int_equal(q1->avail, 0x4000 + AVAIL);
    assert_int_equal(q1->used, 0x4000 + USED);
    assert_true(q1->event_idx);
    assert_false(q1->indirect);
    assert_int_equal(t.queues[0].vq.num, 128);
    wr(VIRTIO_MMIO_QUEUE_SEL, 0);
    assert_int_equal(rd(VIRTIO_MMIO_QUEUE_READY), 1);
    wr(VIRTIO_MMIO_QUEUE_SEL, 2); /* the device has two */
    assert_int_equal(rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 0);

    wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
    assert_int_equal(notified[0], 1);
    assert_int_equal(notified[1], 2);
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, 2);
    assert_int_equal(t.notifies, 3);
    assert_int_equal(t.notifies_ignored, 1);

    /* The configuration space, read-only, in any width. */
    assert_int_equal(virtio_mmio_read(&t, VIRTIO_MMIO_CONFIG + 5, 1), 0x07);
    assert_int_equal(virtio_mmio_read(&t, VIRTIO_MMIO_CONFIG + 6, 2), 0x0001);
    assert_int_equal(virtio_mmio_read(&t, VIRTIO_MMIO_CONFIG, 4), 0x584c5002);
    assert_int_equal(virtio_mmio_read(&t, VIRTIO_MMIO_CONFIG + 6, 4), 0); /* past its end */
    assert_int_equal(virtio_mmio_read(&t, VIRTIO_MMIO_CONFIG + 0x1000, 1), 0);
    virtio_mmio_write(&t, VIRTIO_MMIO_CONFIG, 1, 0xff);
    assert_int_equal(virtio_mmio_read(&t, VIRTIO_MMIO_CONFIG, 1), 0x02);
    assert_int_equal(rd(VIRTIO_MMIO_CONFIG_GENERATION), 0);
}

static void test_notify_before_driver_ok_ignored(void **state)
{
    (void)state;
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    write_features(VIRTIO_BIT(VIRTIO_F_VERSION_1));
    add_status(VIRTIO_STATUS_FEATURES_OK);
    setup_queue(0, 8, 0);
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
    assert_int_equal(notified[0], 0);
    assert_int_equal(t.notifies_ignored, 1);
}

static void test_negotiation_refusals(void **state)
{
    (void)state;
    add_status(VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    write_features(VIRTIO_BIT(VIRTIO_NET_F_MAC)); /* no VERSION_1: a legacy driver */
    add_status(VIRTIO_STATUS_FEATURES_OK);
    assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
    add_status(VIRTIO_STATUS_DRIVER_OK); /* not without FEATURES_OK */
    assert_int_equal(rd(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);

    /* A bit not offered, even one the device listed (the transport never offers it). */
    write_features(VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_ACCESS_PLATFORM));
    add_status(VIRTIO_STATUS_FEATURES_OK);
    assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
    write_features(VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(3));
    add_status(VIRTIO_STATUS_FEATURES_OK);
    assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);

    /* A queue is not started before the features are known. */
    setup_queue(0, 8, 0);
    assert_false(t.queues[0].vq.ready);

    write_features(VIRTIO_BIT(VIRTIO_F_VERSION_1));
    add_status(VIRTIO_STATUS_FEATURES_OK);
    assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
    write_features(VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC));
    assert_false(virtio_mmio_has(&t, VIRTIO_NET_F_MAC)); /* fixed once accepted */

    /* A write that clears bits is ignored; only 0 resets. */
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    assert_int_equal(rd(VIRTIO_MMIO_STATUS),
                     VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK); /* and adds */
    assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DRIVER_OK);
    /* The driver cannot set DEVICE_NEEDS_RESET. */
    add_status(VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
}

static void test_queue_registers(void **state)
{
    (void)state;
    add_status(VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    write_features(VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC));
    add_status(VIRTIO_STATUS_FEATURES_OK);
    wr(VIRTIO_MMIO_QUEUE_SEL, 0);
    wr(VIRTIO_MMIO_QUEUE_NUM, 64);
    wr(VIRTIO_MMIO_QUEUE_NUM, 48);  /* not a power of two */
    wr(VIRTIO_MMIO_QUEUE_NUM, 512); /* above QueueNumMax */
    wr(VIRTIO_MMIO_QUEUE_NUM, 0);
    assert_int_equal(t.queues[0].vq.num, 64);
    wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, 1);
    assert_int_equal(t.queues[0].vq.desc, 1ull << 32);
    setup_queue(0, 16, 0);
    assert_true(t.queues[0].vq.ready);
    assert_true(t.queues[0].vq.indirect);
    /* Fixed while ready. */
    wr(VIRTIO_MMIO_QUEUE_NUM, 8);
    wr(VIRTIO_MMIO_QUEUE_DESC_LOW, 0x5000);
    assert_int_equal(t.queues[0].vq.num, 16);
    assert_int_equal(t.queues[0].vq.desc, DESC);
    /* QueueReady 0 stops it (Linux's vm_del_vq reads it back as 0); then it may change. */
    wr(VIRTIO_MMIO_QUEUE_READY, 0);
    assert_int_equal(rd(VIRTIO_MMIO_QUEUE_READY), 0);
    wr(VIRTIO_MMIO_QUEUE_NUM, 8);
    assert_int_equal(t.queues[0].vq.num, 8);
    /* Registers are 32-bit and aligned: anything else is ignored and reads 0. */
    assert_int_equal(virtio_mmio_read(&t, VIRTIO_MMIO_MAGIC_VALUE, 2), 0);
    assert_int_equal(virtio_mmio_read(&t, VIRTIO_MMIO_MAGIC_VALUE + 1, 4), 0);
    virtio_mmio_write(&t, VIRTIO_MMIO_QUEUE_NUM, 2, 4);
    virtio_mmio_write(&t, VIRTIO_MMIO_QUEUE_NUM + 2, 4, 4);
    assert_int_equal(t.queues[0].vq.num, 8);
    assert_int_equal(rd(VIRTIO_MMIO_QUEUE_NUM), 0); /* write-only */
    /* No shared memory region: SHMLen reads -1 (virtio 1.2, 4.2.2), whatever SHMSel names. */
    assert_int_equal(rd(VIRTIO_MMIO_SHM_LEN_LOW), 0xffffffffu);
    assert_int_equal(rd(VIRTIO_MMIO_SHM_LEN_HIGH), 0xffffffffu);
    wr(VIRTIO_MMIO_SHM_SEL, 1);
    assert_int_equal(rd(VIRTIO_MMIO_SHM_LEN_LOW), 0xffffffffu);
}

static void test_reset_clears_everything(void **state)
{
    (void)state;
    linux_probe(VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX));
    __atomic_fetch_or(&t.interrupt_status, VIRTIO_MMIO_INT_VRING, __ATOMIC_RELAXED);
    wr(VIRTIO_MMIO_QUEUE_SEL, 1);
    wr(VIRTIO_MMIO_STATUS, 0);
    assert_int_equal(resets, 2);
    assert_int_equal(rd(VIRTIO_MMIO_STATUS), 0);
    assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0);
    assert_false(virtio_mmio_live(&t));
    assert_int_equal(t.driver_features, 0);
    for (unsigned i = 0; i < 2; i++) {
        wr(VIRTIO_MMIO_QUEUE_SEL, i);
        assert_int_equal(rd(VIRTIO_MMIO_QUEUE_READY), 0);
        assert_int_equal(t.queues[i].vq.num, VIRTQ_NUM_MAX);
        assert_int_equal(t.queues[i].vq.desc, 0);
        assert_int_equal(t.queues[i].vq.used, 0);
        assert_false(t.queues[i].vq.event_idx);
    }
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
    assert_int_equal(notified[0], 0);
    /* And the device comes up again. */
    linux_probe(VIRTIO_BIT(VIRTIO_F_VERSION_1));
    assert_true(virtio_mmio_live(&t));
}

static void test_bad_ring_needs_reset(void **state)
{
    (void)state;
    add_status(VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    write_features(VIRTIO_BIT(VIRTIO_F_VERSION_1));
    add_status(VIRTIO_STATUS_FEATURES_OK);
    setup_queue(1, 8, RAM_SIZE); /* rings past the end of RAM */
    assert_false(t.queues[1].vq.ready);
    assert_int_equal(faults_seen, 1);
    assert_int_equal(fault_queue, 1);
    assert_int_equal(fault_kind, VIRTQ_FAULT_RING_ADDRESS);
    assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
    assert_int_equal(pulses, 1);
    assert_int_equal(t.faults, 1);
}

static void test_fault_stops_device_until_reset(void **state)
{
    (void)state;
    linux_probe(VIRTIO_BIT(VIRTIO_F_VERSION_1));
    /* The driver offers a head past the queue; the device pops it. */
    uint16_t avail[3] = {0, 1, 200};
    memcpy(mem + AVAIL, avail, sizeof(avail));
    struct virtio_queue *q = &t.queues[0];
    enum virtq_fault f;
    spin_lock(&q->lock);
    assert_int_equal(virtq_pop(&q->vq, &t.ram, &q->chain, &f), -1);
    virtio_mmio_fail(&t, 0, f);
    spin_unlock(&q->lock);
    assert_int_equal(fault_kind, VIRTQ_FAULT_HEAD);
    assert_int_equal(fault_queue, 0);
    assert_false(virtio_mmio_live(&t));
    uint32_t st = rd(VIRTIO_MMIO_STATUS);
    assert_true(st & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    assert_true(st & VIRTIO_STATUS_DRIVER_OK);
    assert_true(rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG);
    /* Stopped: notifies and queue writes are ignored; the driver may still add FAILED. */
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
    assert_int_equal(notified[1], 0);
    wr(VIRTIO_MMIO_QUEUE_SEL, 1);
    wr(VIRTIO_MMIO_QUEUE_READY, 0);
    assert_true(t.queues[1].vq.ready);
    add_status(VIRTIO_STATUS_FAILED);
    assert_int_equal(rd(VIRTIO_MMIO_STATUS), st | VIRTIO_STATUS_FAILED);
    wr(VIRTIO_MMIO_STATUS, 0);
    assert_int_equal(rd(VIRTIO_MMIO_STATUS), 0);
    linux_probe(VIRTIO_BIT(VIRTIO_F_VERSION_1));
    assert_true(virtio_mmio_live(&t));
    assert_false(t.queues[0].vq.broken);
}

static void test_interrupt_status_and_ack(void **state)
{
    (void)state;
    linux_probe(VIRTIO_BIT(VIRTIO_F_VERSION_1));
    struct virtq_desc d = {0x8000, 64, VIRTQ_DESC_F_WRITE, 0};
    memcpy(mem + DESC, &d, sizeof(d));
    uint16_t avail[3] = {0, 1, 0};
    memcpy(mem + AVAIL, avail, sizeof(avail));
    struct virtio_queue *q = &t.queues[0];
    enum virtq_fault f;
    spin_lock(&q->lock);
    assert_int_equal(virtq_pop(&q->vq, &t.ram, &q->chain, &f), 1);
    virtq_push(&q->vq, &t.ram, q->chain.head, 10);
    virtio_mmio_used(&t, 0);
    spin_unlock(&q->lock);
    assert_int_equal(pulses, 1);
    assert_int_equal(t.interrupts, 1);
    assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
    wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_CONFIG); /* not the pending one */
    assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
    wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
    assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0);
    /* The driver asked for no interrupts (no EVENT_IDX): none. */
    uint16_t no_interrupt = VIRTQ_AVAIL_F_NO_INTERRUPT;
    memcpy(mem + AVAIL, &no_interrupt, sizeof(no_interrupt));
    virtio_mmio_used(&t, 0);
    assert_int_equal(pulses, 1);
    assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_linux_probe, setup),
        cmocka_unit_test_setup(test_notify_before_driver_ok_ignored, setup),
        cmocka_unit_test_setup(test_negotiation_refusals, setup),
        cmocka_unit_test_setup(test_queue_registers, setup),
        cmocka_unit_test_setup(test_reset_clears_everything, setup),
        cmocka_unit_test_setup(test_bad_ring_needs_reset, setup),
        cmocka_unit_test_setup(test_fault_stops_device_until_reset, setup),
        cmocka_unit_test_setup(test_interrupt_status_and_ack, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

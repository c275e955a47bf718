/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The switch between VMs (vmm/net/switch.h), with fake devices that have a
 * number of free receive buffers and remember what they got: learning,
 * flooding, unicast after learning, a held frame delivered on resume, a
 * counted drop when the hold queue is full, a reset's drain, a port
 * leaving; two threads sending to each other at once (a deadlock
 * hangs the test); a send that finds the switch's lock held, counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "vmm/net/switch.h"

#define FAKE_RX_MAX 64

struct fake_dev {
    struct net_port port;
    struct spinlock lock;
    unsigned buffers;                   /* free receive buffers */
    bool broken;                        /* refuses every frame (NET_RX_DROPPED) */
    volatile bool *stall;               /* while set, a delivery waits (the switch's lock held) */
    unsigned got;                       /* frames delivered */
    uint8_t first_byte_of[FAKE_RX_MAX]; /* each delivered frame's 15th byte: the test's tag */
};

static enum net_rx fake_deliver(struct net_port *p, const uint8_t *frame, unsigned len)
{
    struct fake_dev *d = p->owner;
    assert_true(len >= NET_FRAME_MIN);
    while (d->stall && __atomic_load_n(d->stall, __ATOMIC_ACQUIRE))
        ;
    if (d->broken)
        return NET_RX_DROPPED;
    if (!d->buffers)
        return NET_RX_NO_BUFFER;
    d->buffers--;
    if (d->got < FAKE_RX_MAX)
        d->first_byte_of[d->got] = frame[14];
    d->got++;
    return NET_RX_DELIVERED;
}

static struct fake_dev devs[3];
static const uint8_t mac_of[3][NET_ETH_ALEN] = {
    {0x02, 0x50, 0x4c, 0x58, 0x00, 0x00},
    {0x02, 0x50, 0x4c, 0x58, 0x00, 0x01},
    {0x02, 0x50, 0x4c, 0x58, 0x00, 0x02},
};
static const uint8_t broadcast[NET_ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t multicast[NET_ETH_ALEN] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};

static void join(struct fake_dev *d, const char *sw)
{
    char err[128] = "";
    d->lock = (struct spinlock)SPINLOCK_INIT;
    assert_int_equal(net_switch_join(&d->port, sw, &d->lock, fake_deliver, d, err, sizeof(err)), 0);
}

static int setup(void **state)
{
    (void)state;
    memset(devs, 0, sizeof(devs));
    for (unsigned i = 0; i < 3; i++) {
        join(&devs[i], "lan0");
        devs[i].buffers = 1000;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 3; i++)
        if (devs[i].port.sw)
            net_switch_leave(&devs[i].port);
    return 0;
}

/* A 60-byte frame from `from` to dst, its tag in byte 14. */
static void send(unsigned from, const uint8_t *dst, uint8_t tag)
{
    uint8_t f[60] = {0};
    memcpy(f, dst, NET_ETH_ALEN);
    memcpy(f + NET_ETH_ALEN, mac_of[from], NET_ETH_ALEN);
    f[12] = 0x08; /* IPv4 */
    f[14] = tag;
    net_switch_send(&devs[from].port, f, sizeof(f));
}

static void test_unknown_destination_floods_then_learning_makes_it_unicast(void **state)
{
    (void)state;
    send(0, mac_of[1], 1); /* nobody knows B yet: everyone but A gets it */
    assert_int_equal(devs[0].got, 0);
    assert_int_equal(devs[1].got, 1);
    assert_int_equal(devs[2].got, 1);
    send(1, mac_of[0], 2); /* A was learned from its frame: only A */
    assert_int_equal(devs[0].got, 1);
    assert_int_equal(devs[0].first_byte_of[0], 2);
    assert_int_equal(devs[2].got, 1);
    send(0, mac_of[1], 3); /* and B from its answer */
    assert_int_equal(devs[1].got, 2);
    assert_int_equal(devs[1].first_byte_of[1], 3);
    assert_int_equal(devs[2].got, 1);
    assert_int_equal(devs[0].port.stats.tx_packets, 2);
    assert_int_equal(devs[0].port.stats.tx_bytes, 120);
    assert_int_equal(devs[1].port.stats.rx_packets, 2);
    assert_int_equal(devs[1].port.stats.rx_bytes, 120);
}

static void test_broadcast_and_multicast_flood_even_when_learned(void **state)
{
    (void)state;
    send(1, broadcast, 1);
    send(2, multicast, 2);
    send(0, broadcast, 3);
    assert_int_equal(devs[0].got, 2);
    assert_int_equal(devs[1].got, 2);
    assert_int_equal(devs[2].got, 2);
    /* Learned or not, a group address reaches every other port. */
    send(1, multicast, 4);
    assert_int_equal(devs[0].got, 3);
    assert_int_equal(devs[2].got, 3);
}

static void test_frame_to_the_senders_own_port_stays_there(void **state)
{
    (void)state;
    send(0, broadcast, 1); /* A learned */
    send(0, mac_of[0], 2);
    assert_int_equal(devs[0].got, 0);
    assert_int_equal(devs[1].got, 1);
    assert_int_equal(devs[2].got, 1);
}

static void test_runts_and_giants_are_counted_not_sent(void **state)
{
    (void)state;
    uint8_t f[NET_FRAME_MAX + 1];
    memset(f, 0xff, sizeof(f));
    net_switch_send(&devs[0].port, f, NET_FRAME_MIN - 1);
    net_switch_send(&devs[0].port, f, NET_FRAME_MAX + 1);
    assert_int_equal(devs[0].port.stats.tx_drops, 2);
    assert_int_equal(devs[0].port.stats.tx_packets, 0);
    net_switch_send(&devs[0].port, f, NET_FRAME_MAX);
    assert_int_equal(devs[1].got, 1);
    assert_int_equal(devs[1].port.stats.rx_bytes, NET_FRAME_MAX);
}

static void test_held_frame_goes_out_in_order_on_resume(void **state)
{
    (void)state;
    send(1, broadcast, 0); /* B learned */
    devs[1].buffers = 0;
    send(0, mac_of[1], 1);
    send(0, mac_of[1], 2);
    assert_int_equal(devs[1].got, 0);
    assert_int_equal(devs[1].port.held_count, 2);
    assert_int_equal(devs[1].port.stats.rx_held, 2);
    /* A notify with no new buffer leaves them held. */
    assert_false(net_port_resume(&devs[1].port));
    devs[1].buffers = 1;
    assert_false(net_port_resume(&devs[1].port)); /* one out, one still waiting */
    assert_int_equal(devs[1].got, 1);
    assert_int_equal(devs[1].first_byte_of[0], 1);
    /* A new frame queues behind the held one even though a buffer is free now. */
    devs[1].buffers = 1;
    send(0, mac_of[1], 3);
    assert_int_equal(devs[1].got, 1);
    devs[1].buffers = 5;
    assert_true(net_port_resume(&devs[1].port));
    assert_int_equal(devs[1].got, 3);
    assert_int_equal(devs[1].first_byte_of[1], 2);
    assert_int_equal(devs[1].first_byte_of[2], 3);
    assert_int_equal(devs[1].port.stats.rx_packets, 3);
    assert_int_equal(devs[1].port.stats.rx_drops, 0);
}

static void test_full_hold_queue_drops_and_counts(void **state)
{
    (void)state;
    devs[2].buffers = 0;
    for (unsigned i = 0; i < NET_HOLD_MAX + 3; i++)
        send(0, broadcast, (uint8_t)i);
    assert_int_equal(devs[1].got, NET_HOLD_MAX + 3); /* a full peer slows no one else */
    assert_int_equal(devs[2].port.held_count, NET_HOLD_MAX);
    assert_int_equal(devs[2].port.stats.rx_drops, 3);
    assert_int_equal(devs[2].port.stats.rx_drops_full, 3);
    devs[2].buffers = 1000;
    assert_true(net_port_resume(&devs[2].port));
    assert_int_equal(devs[2].got, NET_HOLD_MAX);
    assert_int_equal(devs[2].first_byte_of[NET_HOLD_MAX - 1],
                     NET_HOLD_MAX - 1); /* the oldest kept */
}

static void test_reset_drains_held_frames(void **state)
{
    (void)state;
    devs[2].buffers = 0;
    send(0, broadcast, 1);
    send(0, broadcast, 2);
    net_port_drain(&devs[2].port);
    assert_int_equal(devs[2].port.held_count, 0);
    assert_int_equal(devs[2].port.stats.rx_drops, 2);
    assert_int_equal(devs[2].port.stats.rx_drops_reset, 2);
    devs[2].buffers = 10;
    assert_true(net_port_resume(&devs[2].port));
    assert_int_equal(devs[2].got, 0); /* nothing from before the reset */
    send(0, broadcast, 3);
    assert_int_equal(devs[2].got, 1);
}

static void test_device_that_refuses_counts_a_drop(void **state)
{
    (void)state;
    devs[2].broken = true;
    send(0, broadcast, 1);
    assert_int_equal(devs[2].port.held_count, 0);
    assert_int_equal(devs[2].port.stats.rx_drops_device, 1);
    assert_int_equal(devs[2].port.stats.rx_drops, 1);
    assert_int_equal(devs[1].got, 1);
}

static void test_port_leaving_is_forgotten(void **state)
{
    (void)state;
    send(2, broadcast, 0); /* C learned */
    devs[0].got = devs[1].got = 0;
    net_switch_leave(&devs[2].port);
    send(0, mac_of[2], 1); /* unknown again: floods to who is left */
    assert_int_equal(devs[1].got, 1);
    assert_int_equal(devs[2].got, 0);
    /* A new port there learns C's MAC afresh. */
    join(&devs[2], "lan0");
    devs[2].buffers = 10;
    send(0, mac_of[2], 2);
    assert_int_equal(devs[2].got, 1);
    send(2, mac_of[0], 3);
    send(0, mac_of[2], 4);
    assert_int_equal(devs[2].got, 2);
    assert_int_equal(devs[1].got, 2); /* flooded once more, then unicast */
}

static void test_switches_are_apart_by_name(void **state)
{
    (void)state;
    struct fake_dev other = {.buffers = 10};
    join(&other, "lan1");
    assert_string_equal(net_switch_name(&other.port), "lan1");
    assert_string_equal(net_switch_name(&devs[0].port), "lan0");
    send(0, broadcast, 1);
    assert_int_equal(other.got, 0);
    net_switch_leave(&other.port);
}

static void test_join_refusals_say_why(void **state)
{
    (void)state;
    static struct fake_dev many[NET_SWITCH_PORTS + NET_SWITCHES_MAX];
    char err[128] = "";
    /* lan0 has 3 ports: fill it. */
    for (unsigned i = 0; i < NET_SWITCH_PORTS - 3; i++)
        join(&many[i], "lan0");
    struct fake_dev extra = {0};
    assert_int_equal(
        net_switch_join(&extra.port, "lan0", &extra.lock, fake_deliver, &extra, err, sizeof(err)),
        -1);
    assert_string_equal(err, "switch lan0 is full: 16 ports");
    assert_int_equal(net_switch_join(&extra.port, "a-name-too-long-by-far", &extra.lock,
                                     fake_deliver, &extra, err, sizeof(err)),
                     -1);
    /* Every other slot of the registry taken: one switch more is refused. */
    char name[16];
    for (unsigned i = 1; i < NET_SWITCHES_MAX; i++) {
        snprintf(name, sizeof(name), "s%u", i);
        join(&many[NET_SWITCH_PORTS + i], name);
    }
    assert_int_equal(net_switch_join(&extra.port, "one-more", &extra.lock, fake_deliver, &extra,
                                     err, sizeof(err)),
                     -1);
    assert_string_equal(err, "no room for switch one-more: 8 switches in use");
    /* A switch whose last port left frees its slot. */
    net_switch_leave(&many[NET_SWITCH_PORTS + 1].port);
    join(&extra, "one-more");
    net_switch_leave(&extra.port);
    for (unsigned i = 2; i < NET_SWITCHES_MAX; i++)
        net_switch_leave(&many[NET_SWITCH_PORTS + i].port);
    for (unsigned i = 0; i < NET_SWITCH_PORTS - 3; i++)
        net_switch_leave(&many[i].port);
}

static void test_full_table_forgets_the_least_recently_seen(void **state)
{
    (void)state;
    uint8_t f[60] = {0};
    memcpy(f, broadcast, NET_ETH_ALEN);
    /* A's MAC first, then NET_MAC_TABLE - 1 others from B, then A again (refreshed). */
    send(0, broadcast, 0);
    for (unsigned i = 1; i < NET_MAC_TABLE; i++) {
        uint8_t src[NET_ETH_ALEN] = {0x02, 0, 0, 0, 1, (uint8_t)i};
        memcpy(f + NET_ETH_ALEN, src, NET_ETH_ALEN);
        net_switch_send(&devs[1].port, f, sizeof(f));
        if (i == 1)
            send(0, broadcast, 0);
    }
    /* One more from B: the entry replaced is 02:00:00:00:01:01 (seen before A's refresh). */
    uint8_t newest[NET_ETH_ALEN] = {0x02, 0, 0, 0, 2, 0};
    memcpy(f + NET_ETH_ALEN, newest, NET_ETH_ALEN);
    net_switch_send(&devs[1].port, f, sizeof(f));
    devs[0].got = devs[1].got = devs[2].got = 0;
    /* Probes from sources the table has already, so that they replace nothing. */
    memcpy(f, mac_of[0], NET_ETH_ALEN);
    net_switch_send(&devs[1].port, f, sizeof(f)); /* A still known: only A */
    assert_int_equal(devs[0].got, 1);
    assert_int_equal(devs[2].got, 0);
    const uint8_t forgotten[NET_ETH_ALEN] = {0x02, 0, 0, 0, 1, 1};
    memcpy(f, forgotten, NET_ETH_ALEN);
    net_switch_send(&devs[1].port, f, sizeof(f)); /* forgotten: floods */
    assert_int_equal(devs[0].got, 2);
    assert_int_equal(devs[2].got, 1);
    send(0, newest, 3); /* learned: only B */
    assert_int_equal(devs[1].got, 1);
    assert_int_equal(devs[2].got, 1);
}

/* Two senders at once, each its own thread, each frame to the other's MAC. */
static void *ping(void *arg)
{
    unsigned from = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < 20000; i++) {
        send(from, mac_of[1 - from], (uint8_t)i);
        uint64_t flags = spin_lock_irqsave(&devs[from].lock);
        devs[from].buffers = 1000;
        net_port_resume(&devs[from].port);
        spin_unlock_irqrestore(&devs[from].lock, flags);
    }
    return 0;
}

static void test_two_senders_to_each_other_at_once(void **state)
{
    (void)state;
    send(0, broadcast, 0);
    send(1, broadcast, 0);
    devs[0].got = devs[1].got = devs[2].got = 0;
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, 0, ping, (void *)0), 0);
    assert_int_equal(pthread_create(&b, 0, ping, (void *)1), 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    for (unsigned i = 0; i < 2; i++) {
        devs[i].buffers = 1000000;
        uint64_t flags = spin_lock_irqsave(&devs[i].lock);
        net_port_resume(&devs[i].port);
        spin_unlock_irqrestore(&devs[i].lock, flags);
        assert_int_equal(devs[i].got + devs[i].port.stats.rx_drops, 20000);
    }
    assert_int_equal(devs[2].got, 0);
}

static volatile bool stalled, second_sending;

static void *send_while_stalled(void *arg)
{
    (void)arg;
    send(0, mac_of[2], 1); /* to dev 2, which holds the switch's lock in its delivery */
    return 0;
}

static void *second_sender(void *arg)
{
    (void)arg;
    __atomic_store_n(&second_sending, true, __ATOMIC_RELEASE);
    send(1, mac_of[0], 2);
    return 0;
}

/* A send that finds the switch's lock held is counted, with the cycles it spun. */
static void test_a_send_that_waits_for_the_lock_is_counted(void **state)
{
    (void)state;
    send(2, broadcast, 0); /* learned, so the stalled frame goes to dev 2 alone */
    send(0, broadcast, 0);
    assert_int_equal(devs[0].port.stats.tx_lock_waits + devs[1].port.stats.tx_lock_waits, 0);
    stalled = true;
    devs[2].stall = &stalled;
    uint64_t sent = devs[0].port.stats.tx_packets;
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, 0, send_while_stalled, 0), 0);
    while (__atomic_load_n(&devs[0].port.stats.tx_packets, __ATOMIC_ACQUIRE) == sent)
        ; /* counted under the lock: the first sender holds it now */
    assert_int_equal(pthread_create(&b, 0, second_sender, 0), 0);
    while (!__atomic_load_n(&second_sending, __ATOMIC_ACQUIRE))
        ;
    for (uint64_t start = rdtsc(); rdtsc() - start < 50000000;)
        ; /* some ms: dev 1's sender is spinning on the lock by now */
    __atomic_store_n(&stalled, false, __ATOMIC_RELEASE);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert_int_equal(devs[1].port.stats.tx_lock_waits, 1);
    assert_true(devs[1].port.stats.tx_lock_wait_cycles > 0);
    assert_int_equal(devs[0].port.stats.tx_lock_waits, 0);
    assert_int_equal(devs[0].first_byte_of[devs[0].got - 1], 2); /* and went through */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_unknown_destination_floods_then_learning_makes_it_unicast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broadcast_and_multicast_flood_even_when_learned, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_frame_to_the_senders_own_port_stays_there, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_runts_and_giants_are_counted_not_sent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_held_frame_goes_out_in_order_on_resume, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_full_hold_queue_drops_and_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_drains_held_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_that_refuses_counts_a_drop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_port_leaving_is_forgotten, setup, teardown),
        cmocka_unit_test_setup_teardown(test_switches_are_apart_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_join_refusals_say_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_table_forgets_the_least_recently_seen, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_two_senders_to_each_other_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_send_that_waits_for_the_lock_is_counted, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

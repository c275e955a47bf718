/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 8254 (vmm/dev/vpit.c): counting in every mode against the TSC, the
 * access modes, the latch and read-back commands, channel 0's IRQ edges and
 * their minimum period, channel 2's gate and OUT2 in port 0x61.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/dev/vpit.h"

#define CYCLES_PER_TICK 100ull /* a TSC of exactly 100 PIT ticks' rate: times stay exact */
#define TSC_HZ          (PIT_HZ * CYCLES_PER_TICK)
#define T0              1000000ull /* the TSC when the tests start */
#define MIN_TICKS       238        /* PIT_MIN_PERIOD_US in whole ticks */

static struct vpit p;

static uint64_t at(uint64_t ticks)
{
    return T0 + ticks * CYCLES_PER_TICK;
}

static int setup(void **state)
{
    (void)state;
    vpit_reset(&p, TSC_HZ);
    return 0;
}

/* Control word for channel ch: access mode, mode. */
static void control(unsigned ch, enum pit_access access, unsigned mode, uint64_t now)
{
    vpit_write(&p, PIT_PORT_MODE, (uint8_t)(ch << 6 | access << 4 | mode << 1), now);
}

static void load_word(unsigned ch, uint16_t count, uint64_t now)
{
    vpit_write(&p, PIT_PORT_CHANNEL0 + ch, (uint8_t)count, now);
    vpit_write(&p, PIT_PORT_CHANNEL0 + ch, (uint8_t)(count >> 8), now);
}

static uint16_t read_word(unsigned ch, uint64_t now)
{
    uint16_t lo = vpit_read(&p, PIT_PORT_CHANNEL0 + ch, now);
    return (uint16_t)(lo | vpit_read(&p, PIT_PORT_CHANNEL0 + ch, now) << 8);
}

static void test_power_on(void **state)
{
    (void)state;
    assert_int_equal(vpit_irq_deadline(&p), 0);
    assert_false(vpit_expire(&p, at(1000000)));
    assert_int_equal(read_word(0, at(5)), 0);
    assert_int_equal(vpit_read(&p, PIT_PORT_B, at(0)) & (PORT_B_GATE2 | PORT_B_OUT2), 0);
    assert_int_equal(vpit_read(&p, PIT_PORT_MODE, at(0)), 0);
    assert_int_equal(vpit_read(&p, 0x44, at(0)), 0xff);
}

/* Mode 2 at 1 kHz: an edge every 1193 ticks, the count going down from 1193 to 1 and over. */
static void test_mode2_rate_generator(void **state)
{
    (void)state;
    control(0, PIT_WORD, 2, at(0));
    load_word(0, 1193, at(0));
    assert_int_equal(vpit_irq_deadline(&p), at(1193));
    assert_int_equal(read_word(0, at(100)), 1093);
    assert_int_equal(read_word(0, at(1192)), 1);
    assert_int_equal(read_word(0, at(1193)), 1193);
    assert_int_equal(read_word(0, at(1193 + 3)), 1190);
    assert_true(vpit_out(&p, 0, at(1191)));
    assert_false(vpit_out(&p, 0, at(1192))); /* low for the period's last tick */
    assert_true(vpit_out(&p, 0, at(1193)));
    assert_false(vpit_expire(&p, at(1193) - 1));
    assert_true(vpit_expire(&p, at(1193)));
    assert_int_equal(vpit_irq_deadline(&p), at(2 * 1193));
    assert_true(vpit_expire(&p, at(2 * 1193) + 5));
    assert_int_equal(vpit_irq_deadline(&p), at(3 * 1193));
    assert_int_equal(p.stats.irqs, 2);
    assert_int_equal(p.stats.coalesced, 0);
    /* Late by two whole periods: one edge, and the next still on the period's grid. */
    assert_true(vpit_expire(&p, at(5 * 1193 + 10)));
    assert_int_equal(vpit_irq_deadline(&p), at(6 * 1193));
    assert_int_equal(p.stats.coalesced, 2);
    /* Modes 6 and 7 are 2 and 3. */
    control(0, PIT_WORD, 6, at(0));
    assert_int_equal(p.ch[0].mode, 2);
    control(0, PIT_WORD, 7, at(0));
    assert_int_equal(p.ch[0].mode, 3);
}

/* As SeaBIOS leaves it (issue 37): channel 0 in mode 2 at 18.2 Hz, counting from then. */
static void test_bios_state(void **state)
{
    (void)state;
    vpit_bios_state(&p, at(0));
    assert_int_equal(vpit_irq_deadline(&p), at(65536));
    assert_int_equal(read_word(0, at(1)), 65535);
    vpit_write(&p, PIT_PORT_MODE, 0xe2, at(2)); /* read-back: channel 0's status */
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0, at(2)), 0x80 | PIT_WORD << 4 | 2 << 1);
    assert_true(vpit_expire(&p, at(65536)));
    assert_int_equal(vpit_irq_deadline(&p), at(2 * 65536));
    assert_false(p.ch[1].loaded || p.ch[2].loaded);
}

/* A written 0 is 65536. */
static void test_count_zero_is_65536(void **state)
{
    (void)state;
    control(0, PIT_WORD, 2, at(0));
    load_word(0, 0, at(0));
    assert_int_equal(vpit_irq_deadline(&p), at(65536));
    assert_int_equal(read_word(0, at(1)), 65535);
    assert_int_equal(read_word(0, at(0)), 0); /* 65536 reads as 0 */
}

/* A control word stops the counter until a count comes: no more edges. */
static void test_control_word_stops(void **state)
{
    (void)state;
    control(0, PIT_WORD, 2, at(0));
    load_word(0, 1000, at(0));
    assert_int_not_equal(vpit_irq_deadline(&p), 0);
    control(0, PIT_WORD, 2, at(10));
    assert_int_equal(vpit_irq_deadline(&p), 0);
    assert_false(vpit_expire(&p, at(5000)));
    load_word(0, 1000, at(20)); /* and counts again from its load */
    assert_int_equal(vpit_irq_deadline(&p), at(1020));
}

/* Mode 0: OUT low until the count has passed, one edge; the count wraps past 0. */
static void test_mode0_one_shot(void **state)
{
    (void)state;
    control(0, PIT_WORD, 0, at(0));
    assert_false(vpit_out(&p, 0, at(0)));
    load_word(0, 500, at(0));
    assert_false(vpit_out(&p, 0, at(499)));
    assert_true(vpit_out(&p, 0, at(500)));
    assert_int_equal(read_word(0, at(200)), 300);
    assert_int_equal(read_word(0, at(501)), 0xffff);
    assert_int_equal(vpit_irq_deadline(&p), at(500));
    assert_true(vpit_expire(&p, at(600)));
    assert_int_equal(vpit_irq_deadline(&p), 0); /* once */
    assert_true(vpit_out(&p, 0, at(70000)));
    /* The first byte of a new count stops it: OUT low again until the count ends. */
    vpit_write(&p, PIT_PORT_CHANNEL0, 100, at(1000));
    assert_false(vpit_out(&p, 0, at(1001)));
    assert_int_equal(vpit_irq_deadline(&p), 0);
    vpit_write(&p, PIT_PORT_CHANNEL0, 0, at(1010));
    assert_int_equal(vpit_irq_deadline(&p), at(1110));
}

/* Mode 3: OUT high for the first half, the count going down by 2. */
static void test_mode3_square_wave(void **state)
{
    (void)state;
    control(0, PIT_WORD, 3, at(0));
    load_word(0, 1000, at(0));
    assert_true(vpit_out(&p, 0, at(499)));
    assert_false(vpit_out(&p, 0, at(500)));
    assert_false(vpit_out(&p, 0, at(999)));
    assert_true(vpit_out(&p, 0, at(1000)));
    assert_int_equal(read_word(0, at(100)), 800);
    assert_int_equal(read_word(0, at(600)), 800);
    assert_int_equal(vpit_irq_deadline(&p), at(1000));
    /* Odd counts: the high half is the longer. */
    load_word(0, 5, at(0));
    assert_true(vpit_out(&p, 0, at(2)));
    assert_false(vpit_out(&p, 0, at(3)));
}

/* Modes 4 and 5: OUT low for the one tick at the terminal count; mode 1 low until it. */
static void test_strobes_and_one_shot(void **state)
{
    (void)state;
    control(0, PIT_WORD, 4, at(0));
    assert_true(vpit_out(&p, 0, at(0)));
    load_word(0, 50, at(0));
    assert_true(vpit_out(&p, 0, at(49)));
    assert_false(vpit_out(&p, 0, at(50)));
    assert_true(vpit_out(&p, 0, at(51)));
    assert_int_equal(vpit_irq_deadline(&p), at(51));
    control(0, PIT_WORD, 5, at(0));
    load_word(0, 50, at(0));
    assert_int_equal(vpit_irq_deadline(&p), at(51));
    control(0, PIT_WORD, 1, at(0));
    load_word(0, 50, at(0));
    assert_false(vpit_out(&p, 0, at(49)));
    assert_true(vpit_out(&p, 0, at(50)));
    assert_int_equal(vpit_irq_deadline(&p), at(50));
}

static void test_access_modes(void **state)
{
    (void)state;
    /* Low byte only: the high byte is 0. */
    control(1, PIT_LSB, 0, at(0));
    vpit_write(&p, PIT_PORT_CHANNEL0 + 1, 200, at(0));
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 1, at(50)), 150);
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 1, at(60)), 140);
    /* High byte only: the low byte is 0. */
    control(1, PIT_MSB, 0, at(0));
    vpit_write(&p, PIT_PORT_CHANNEL0 + 1, 0x12, at(0));
    assert_int_equal(p.ch[1].count, 0x1200);
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 1, at(0x100)), 0x11);
    /* Low then high, for reads too: each read takes the other byte. */
    control(1, PIT_WORD, 0, at(0));
    load_word(1, 0x1234, at(0));
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 1, at(0x34)), 0x00);
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 1, at(0x34)), 0x12);
}

/* The latch command holds the count while time goes on, until both bytes are read. */
static void test_counter_latch(void **state)
{
    (void)state;
    control(2, PIT_WORD, 0, at(0));
    vpit_write(&p, PIT_PORT_B, PORT_B_GATE2, at(0));
    load_word(2, 0x3000, at(0));
    vpit_write(&p, PIT_PORT_MODE, 2 << 6, at(0x100)); /* latch channel 2 */
    vpit_write(&p, PIT_PORT_MODE, 2 << 6, at(0x200)); /* a second latch changes nothing */
    assert_int_equal(read_word(2, at(0x800)), 0x2f00);
    assert_int_equal(read_word(2, at(0x900)), 0x2700); /* live again */
    /* A latch's bytes are the latch's, low then high, however late they are read. */
    vpit_write(&p, PIT_PORT_MODE, 2 << 6, at(0x1000));
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 2, at(0x1100)), 0x00);
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 2, at(0x1100)), 0x20);
}

/* Read-back: the status byte (OUT, null count, access, mode, BCD), and the count. */
static void test_read_back(void **state)
{
    (void)state;
    vpit_write(&p, PIT_PORT_MODE, 0x00 << 6 | PIT_WORD << 4 | 2 << 1 | 1, at(0));
    vpit_write(&p, PIT_PORT_MODE, 0xe2, at(0)); /* read-back, status only, channel 0 */
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0, at(0)), 0x80 | 0x40 | 0x30 | 0x04 | 1);
    load_word(0, 1000, at(0));
    vpit_write(&p, PIT_PORT_MODE, 0xc2, at(100)); /* count and status */
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0, at(300)), 0x80 | 0x30 | 0x04 | 1);
    assert_int_equal(read_word(0, at(400)), 900);
    assert_int_equal(read_word(0, at(400)), 600);
    /* Several channels at once; channel 1 was never programmed. */
    control(2, PIT_LSB, 0, at(0));
    vpit_write(&p, PIT_PORT_MODE, 0xec, at(0)); /* status of channels 1 and 2 */
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 2, at(0)), 0x40 | 0x10);
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 1, at(0)), 0x40 | 0x30);
    assert_int_equal(vpit_read(&p, PIT_PORT_CHANNEL0 + 1, at(0)), 0); /* then the count */
}

/* Channel 2's gate is port 0x61 bit 0, its OUT bit 5: mode 0 holds while the gate is low. */
static void test_channel2_gate_and_out2(void **state)
{
    (void)state;
    control(2, PIT_WORD, 0, at(0));
    load_word(2, 1000, at(0));
    assert_int_equal(vpit_read(&p, PIT_PORT_B, at(5000)) & PORT_B_OUT2, 0);
    assert_int_equal(read_word(2, at(5000)), 1000); /* held */
    vpit_write(&p, PIT_PORT_B, PORT_B_GATE2 | PORT_B_SPEAKER | 0x0c | 0xc0, at(5000));
    uint8_t b = vpit_read(&p, PIT_PORT_B, at(5999));
    assert_int_equal(b & (PORT_B_GATE2 | PORT_B_SPEAKER | 0x0c | PORT_B_OUT2 | 0xc0),
                     PORT_B_GATE2 | PORT_B_SPEAKER | 0x0c);
    assert_int_equal(read_word(2, at(5400)), 600);
    vpit_write(&p, PIT_PORT_B, 0, at(5500)); /* held again at 500 */
    assert_int_equal(read_word(2, at(9000)), 500);
    vpit_write(&p, PIT_PORT_B, PORT_B_GATE2, at(9000));
    assert_int_equal(vpit_read(&p, PIT_PORT_B, at(9499)) & PORT_B_OUT2, 0);
    assert_int_equal(vpit_read(&p, PIT_PORT_B, at(9500)) & PORT_B_OUT2, PORT_B_OUT2);
    /* Channel 2 never interrupts. */
    assert_int_equal(vpit_irq_deadline(&p), 0);
    /* Mode 2: a low gate sets OUT high and a rising one starts the period again. */
    control(2, PIT_WORD, 2, at(0));
    load_word(2, 100, at(10000));
    assert_false(vpit_out(&p, 2, at(10099)));
    vpit_write(&p, PIT_PORT_B, 0, at(10099));
    assert_true(vpit_out(&p, 2, at(10099)));
    vpit_write(&p, PIT_PORT_B, PORT_B_GATE2, at(10150));
    assert_int_equal(read_word(2, at(10160)), 90);
    /* The refresh bit toggles with time. */
    uint8_t r0 = vpit_read(&p, PIT_PORT_B, at(0)) & PORT_B_REFRESH;
    assert_int_not_equal(vpit_read(&p, PIT_PORT_B, at(16)) & PORT_B_REFRESH, r0);
}

/* Periodic edges come at most every PIT_MIN_PERIOD_US; those in between coalesce. */
static void test_minimum_period(void **state)
{
    (void)state;
    control(0, PIT_WORD, 2, at(0));
    load_word(0, 10, at(0));
    uint64_t first = vpit_irq_deadline(&p);
    assert_int_equal(first, at(240)); /* the first multiple of 10 from 238 ticks on */
    assert_true(vpit_expire(&p, first));
    assert_int_equal(vpit_irq_deadline(&p), at(480));
    assert_int_equal(p.stats.coalesced, 23);
    /* A period above the minimum is kept exactly. */
    load_word(0, MIN_TICKS + 1, at(0));
    assert_int_equal(vpit_irq_deadline(&p), at(MIN_TICKS + 1));
}

/* At a TSC rate that is no multiple of the PIT's, a deadline is the first TSC of its tick. */
static void test_deadline_never_early(void **state)
{
    (void)state;
    const uint64_t hz = 2999999993ull, start = 123456789ull;
    vpit_reset(&p, hz);
    control(0, PIT_WORD, 2, start);
    load_word(0, 1193, start);
    for (int i = 0; i < 1000; i++) {
        uint64_t d = vpit_irq_deadline(&p);
        assert_int_equal(read_word(0, d), 1193);
        assert_int_equal(read_word(0, d - 1), 1);
        assert_true(vpit_expire(&p, d));
    }
    assert_int_equal(p.stats.coalesced, 0);
    /* After hours the conversions do not overflow: 65536 ticks later is still 65536 ticks. */
    uint64_t hours = start + 10 * 3600 * hz;
    control(0, PIT_WORD, 2, hours);
    load_word(0, 0, hours);
    assert_int_equal(read_word(0, hours + hz), (uint16_t)(65536 - PIT_HZ % 65536));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_power_on, setup),
        cmocka_unit_test_setup(test_mode2_rate_generator, setup),
        cmocka_unit_test_setup(test_bios_state, setup),
        cmocka_unit_test_setup(test_count_zero_is_65536, setup),
        cmocka_unit_test_setup(test_control_word_stops, setup),
        cmocka_unit_test_setup(test_mode0_one_shot, setup),
        cmocka_unit_test_setup(test_mode3_square_wave, setup),
        cmocka_unit_test_setup(test_strobes_and_one_shot, setup),
        cmocka_unit_test_setup(test_access_modes, setup),
        cmocka_unit_test_setup(test_counter_latch, setup),
        cmocka_unit_test_setup(test_read_back, setup),
        cmocka_unit_test_setup(test_channel2_gate_and_out2, setup),
        cmocka_unit_test_setup(test_minimum_period, setup),
        cmocka_unit_test_setup(test_deadline_never_early, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

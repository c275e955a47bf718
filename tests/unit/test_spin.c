/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spin detection policy (sched/spin.c): KVM's window arithmetic with the
 * VMX (ple_window) and SVM (pause_filter_count) defaults, and the software
 * detector's threshold within its window; the detector each kind of CPU
 * gets (spin_choose), with KVM's count-only choice as an option.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/spin.h"

static const struct spin_params spin_params = SPIN_PARAMS_KVM;

static struct spin_choice choose(enum pause_hw hw, bool enabled, unsigned count_only)
{
    struct spin_params p = spin_params;
    p.enabled = enabled;
    p.count_only = count_only;
    struct spin_choice c;
    spin_choose(&p, hw, true, 1000000, &c);
    return c;
}

/* Each CPU's detector with the defaults: PLE, the filter with or without a threshold, software. */
static void test_choose_by_cpu(void **state)
{
    (void)state;
    struct spin_choice c = choose(PAUSE_HW_LOOP, true, SPIN_COUNT_ONLY_SPIN);
    assert_int_equal(c.detector, SPIN_DETECT_PLE);
    assert_int_equal(c.mode, PAUSE_EXIT_FILTERED);
    assert_int_equal(c.gap, 128);
    assert_int_equal(c.window->base, 4096);
    c = choose(PAUSE_HW_FILTER_THRESH, true, SPIN_COUNT_ONLY_SPIN);
    assert_int_equal(c.detector, SPIN_DETECT_PAUSE_FILTER);
    assert_int_equal(c.gap, 128);
    assert_false(c.count_only);
    c = choose(PAUSE_HW_FILTER, true, SPIN_COUNT_ONLY_SPIN);
    assert_int_equal(c.detector, SPIN_DETECT_PAUSE_FILTER); /* pollux's default */
    assert_int_equal(c.gap, 0);
    assert_true(c.count_only);
    assert_false(c.backstop);
    c = choose(PAUSE_HW_EVERY, true, SPIN_COUNT_ONLY_SPIN);
    assert_int_equal(c.detector, SPIN_DETECT_SOFTWARE);
    assert_int_equal(c.mode, PAUSE_EXIT_EVERY);
    assert_int_equal(c.sw.window_cycles, 1000000); /* 1000 us at 1 GHz */
    c = choose(PAUSE_HW_NONE, true, SPIN_COUNT_ONLY_SPIN);
    assert_int_equal(c.detector, SPIN_DETECT_OFF);
    assert_int_equal(c.mode, PAUSE_EXIT_NEVER);
}

/*
 * pause_filter_count_only=off is KVM's choice on a filter without a
 * threshold: no spin detection, but the backstop that preempts a guest
 * spinning with interrupts off stays, as with ple=off.
 */
static void test_count_only_off_is_kvms(void **state)
{
    (void)state;
    struct spin_choice c = choose(PAUSE_HW_FILTER, true, SPIN_COUNT_ONLY_OFF);
    assert_int_equal(c.detector, SPIN_DETECT_OFF);
    assert_true(c.backstop);
    assert_int_equal(c.mode, PAUSE_EXIT_FILTERED);
    assert_int_equal(c.window->base, 3000);
    /* Only a filter without a threshold is affected. */
    assert_int_equal(choose(PAUSE_HW_FILTER_THRESH, true, SPIN_COUNT_ONLY_OFF).detector,
                     SPIN_DETECT_PAUSE_FILTER);
    assert_int_equal(choose(PAUSE_HW_LOOP, true, SPIN_COUNT_ONLY_OFF).detector, SPIN_DETECT_PLE);
    /* ple=off: the same backstop on a filter, nothing on PLE (VMX preempts by its timer). */
    c = choose(PAUSE_HW_FILTER_THRESH, false, SPIN_COUNT_ONLY_SPIN);
    assert_int_equal(c.detector, SPIN_DETECT_OFF);
    assert_true(c.backstop);
    c = choose(PAUSE_HW_LOOP, false, SPIN_COUNT_ONLY_SPIN);
    assert_false(c.backstop);
    assert_int_equal(c.mode, PAUSE_EXIT_NEVER);
    /* A backend that needs no backstop gets none. */
    struct spin_params p = spin_params;
    p.count_only = SPIN_COUNT_ONLY_OFF;
    spin_choose(&p, PAUSE_HW_FILTER, false, 1000000, &c);
    assert_false(c.backstop);
    assert_int_equal(c.mode, PAUSE_EXIT_NEVER);
}

static void test_defaults_are_kvms(void **state)
{
    (void)state;
    const struct spin_window_params *ple = &spin_params.ple, *pf = &spin_params.pause_filter;
    assert_true(spin_params.enabled);
    assert_int_equal(ple->gap, 128);
    assert_int_equal(ple->base, 4096);
    assert_int_equal(ple->grow, 2);
    assert_int_equal(ple->shrink, 0);
    assert_int_equal(ple->max, 4294967295u);
    assert_int_equal(pf->gap, 128);
    assert_int_equal(pf->base, 3000);
    assert_int_equal(pf->grow, 2);
    assert_int_equal(pf->shrink, 0);
    assert_int_equal(pf->max, 65535);
}

/* VMX: doubling from 4096 up to the 32-bit maximum, where it stays. */
static void test_ple_grow_multiplies_to_max(void **state)
{
    (void)state;
    const struct spin_window_params *p = &spin_params.ple;
    uint64_t w = p->base;
    for (unsigned i = 1; i <= 19; i++) {
        w = spin_window_grow(w, p);
        assert_int_equal(w, 4096ull << i);
    }
    assert_int_equal(spin_window_grow(0x80000000ull, p), 4294967295u);
    assert_int_equal(spin_window_grow(4294967295u, p), 4294967295u);
}

/* SVM: 3000, 6000, ... clamped at the 16-bit count's 65535. */
static void test_pause_filter_grow_clamps_to_16_bits(void **state)
{
    (void)state;
    const struct spin_window_params *p = &spin_params.pause_filter;
    const uint64_t want[] = {6000, 12000, 24000, 48000, 65535, 65535};
    uint64_t w = p->base;
    for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        w = spin_window_grow(w, p);
        assert_int_equal(w, want[i]);
    }
}

/* shrink=0 is "back to the base when scheduled in", on both vendors. */
static void test_shrink_zero_resets_to_base(void **state)
{
    (void)state;
    assert_int_equal(spin_window_shrink(1u << 20, &spin_params.ple), 4096);
    assert_int_equal(spin_window_shrink(4096, &spin_params.ple), 4096);
    assert_int_equal(spin_window_shrink(65535, &spin_params.pause_filter), 3000);
}

/* A modifier below the base divides or multiplies; at or above it, subtracts or adds. */
static void test_modifier_below_base_scales_else_steps(void **state)
{
    (void)state;
    struct spin_window_params p = {.base = 3000, .grow = 2, .shrink = 4, .max = 65535};
    assert_int_equal(spin_window_shrink(24000, &p), 6000);
    assert_int_equal(spin_window_shrink(6000, &p), 3000); /* 1500, clamped to the base */
    p.grow = 5000;                                        /* >= base: adds */
    p.shrink = 3000;                                      /* == base: subtracts */
    assert_int_equal(spin_window_grow(3000, &p), 8000);
    assert_int_equal(spin_window_grow(62000, &p), 65535);
    assert_int_equal(spin_window_shrink(8000, &p), 5000);
    assert_int_equal(spin_window_shrink(5000, &p), 3000);
    assert_int_equal(spin_window_shrink(4000, &p), 3000); /* would go below 0 */
}

/* grow=0 resets too; a maximum below the base leaves the base. */
static void test_grow_zero_and_low_max(void **state)
{
    (void)state;
    struct spin_window_params p = {.base = 4096, .grow = 0, .shrink = 0, .max = 1 << 20};
    assert_int_equal(spin_window_grow(1 << 16, &p), 4096);
    p.grow = 2;
    p.max = 1000;
    assert_int_equal(spin_window_grow(4096, &p), 4096);
}

/* No overflow on a huge window and a large additive modifier. */
static void test_grow_saturates(void **state)
{
    (void)state;
    struct spin_window_params p = {.base = 1, .grow = UINT64_MAX - 5, .max = UINT64_MAX};
    assert_int_equal(spin_window_grow(100, &p), UINT64_MAX);
    p.base = 4; /* grow 2 is now below the base: multiplies */
    p.grow = 2;
    assert_int_equal(spin_window_grow(UINT64_MAX / 2 + 1, &p), UINT64_MAX);
}

/* The software detector: the threshold-th exit within the window is a spin. */
static void test_sw_threshold_within_window(void **state)
{
    (void)state;
    struct spin_sw_params p = {.threshold = 8, .window_cycles = 1000};
    struct spin_sw s = {0};
    uint64_t t = 5000;
    for (unsigned i = 1; i < 8; i++)
        assert_false(spin_sw_pause(&s, &p, t += 100));
    assert_true(spin_sw_pause(&s, &p, t += 50)); /* the 8th, 750 cycles after the first */
    /* Counting starts over: 7 more are not a spin, the 8th is. */
    for (unsigned i = 1; i < 8; i++)
        assert_false(spin_sw_pause(&s, &p, t += 10));
    assert_true(spin_sw_pause(&s, &p, t += 10));
}

/* Exits spread wider than the window are separate waits, never a spin. */
static void test_sw_sparse_exits_never_spin(void **state)
{
    (void)state;
    struct spin_sw_params p = {.threshold = 8, .window_cycles = 1000};
    struct spin_sw s = {0};
    uint64_t t = 0;
    for (unsigned i = 0; i < 100; i++)
        assert_false(spin_sw_pause(&s, &p, t += 200)); /* 6 per window at most */
    /* 7 quick ones after a gap, then the window runs out before the 8th. */
    t += 5000;
    for (unsigned i = 1; i < 8; i++)
        assert_false(spin_sw_pause(&s, &p, t += 1));
    assert_false(spin_sw_pause(&s, &p, t += 2000)); /* starts a new window, count 1 */
    for (unsigned i = 2; i < 8; i++)
        assert_false(spin_sw_pause(&s, &p, t += 1));
    assert_true(spin_sw_pause(&s, &p, t += 1));
}

/* A threshold of 1 makes every PAUSE exit a spin. */
static void test_sw_threshold_one(void **state)
{
    (void)state;
    struct spin_sw_params p = {.threshold = 1, .window_cycles = 10};
    struct spin_sw s = {0};
    assert_true(spin_sw_pause(&s, &p, 1));
    assert_true(spin_sw_pause(&s, &p, 1000000));
}

static void test_detector_names(void **state)
{
    (void)state;
    assert_string_equal(spin_detector_name(SPIN_DETECT_PLE), "ple");
    assert_string_equal(spin_detector_name(SPIN_DETECT_PAUSE_FILTER), "pause_filter");
    assert_string_equal(spin_detector_name(SPIN_DETECT_SOFTWARE), "software");
    assert_string_equal(spin_detector_name(SPIN_DETECT_OFF), "off");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_kvms),
        cmocka_unit_test(test_ple_grow_multiplies_to_max),
        cmocka_unit_test(test_pause_filter_grow_clamps_to_16_bits),
        cmocka_unit_test(test_shrink_zero_resets_to_base),
        cmocka_unit_test(test_modifier_below_base_scales_else_steps),
        cmocka_unit_test(test_grow_zero_and_low_max),
        cmocka_unit_test(test_grow_saturates),
        cmocka_unit_test(test_sw_threshold_within_window),
        cmocka_unit_test(test_sw_sparse_exits_never_spin),
        cmocka_unit_test(test_sw_threshold_one),
        cmocka_unit_test(test_detector_names),
        cmocka_unit_test(test_choose_by_cpu),
        cmocka_unit_test(test_count_only_off_is_kvms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

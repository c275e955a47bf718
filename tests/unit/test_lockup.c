/* SPDX-License-Identifier: GPL-2.0-only */
/* Lockup detection: beats reset it, only time the checker beat through counts, stalls are capped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/lockup.h"

static const struct lockup_limits limits = {.timeout = 1000, .max_interval = 500};

static void test_first_check_only_records(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    assert_false(lockup_check(&w, &limits, 1000000, 5, 7, 0, false));
    assert_int_equal(w.stale, 0);
}

static void test_silent_target_fires_after_timeout(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    uint64_t t = 10000, me = 1;
    assert_false(lockup_check(&w, &limits, t, 42, me, 0, false));
    for (int i = 0; i < 3; i++) {
        t += 250;
        assert_false(lockup_check(&w, &limits, t, 42, ++me, 0, false));
    }
    t += 250;
    assert_true(lockup_check(&w, &limits, t, 42, ++me, 0, false)); /* 4 x 250 = 1000 */
}

static void test_booting_target_is_not_judged(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    uint64_t t = 0, me = 0;
    for (int i = 0; i < 100; i++)
        assert_false(lockup_check(&w, &limits, t += 400, 0, ++me, 0, false));
    /* Its first beat starts the clock. */
    assert_false(lockup_check(&w, &limits, t += 400, 1, ++me, 0, false));
    for (int i = 0; i < 2; i++)
        assert_false(lockup_check(&w, &limits, t += 400, 1, ++me, 0, false));
    assert_true(lockup_check(&w, &limits, t += 400, 1, ++me, 0, false)); /* 3 x 400 >= 1000 */
}

static void test_a_beat_resets(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    uint64_t t = 0, me = 0, target = 0;
    assert_false(lockup_check(&w, &limits, t += 1, target, ++me, 0, false));
    for (int i = 0; i < 100; i++) {
        assert_false(lockup_check(&w, &limits, t += 400, target, ++me, 0, false));
        assert_false(lockup_check(&w, &limits, t += 400, ++target, ++me, 0, false));
    }
}

static void test_time_without_own_beats_does_not_count(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    uint64_t t = 0;
    assert_false(lockup_check(&w, &limits, t, 9, 3, 0, false));
    /* The checker did not beat either: the whole machine stood still. */
    for (int i = 0; i < 50; i++)
        assert_false(lockup_check(&w, &limits, t += 400, 9, 3, 0, false));
    assert_int_equal(w.stale, 0);
    assert_false(lockup_check(&w, &limits, t += 400, 9, 4, 0, false));
    assert_false(lockup_check(&w, &limits, t += 400, 9, 5, 0, false));
    assert_true(lockup_check(&w, &limits, t += 400, 9, 6, 0, false)); /* 400 + 400 + 400 */
}

static void test_one_long_interval_is_capped(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    assert_false(lockup_check(&w, &limits, 100, 1, 1, 0, false));
    /* An emulator paused for ten timeouts: one check late, counted as max_interval. */
    assert_false(lockup_check(&w, &limits, 100 + 10000, 1, 2, 0, false));
    assert_int_equal(w.stale, 500);
    assert_true(lockup_check(&w, &limits, 100 + 10500, 1, 3, 0, false));
}

static void test_tsc_going_backwards_counts_nothing(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    assert_false(lockup_check(&w, &limits, 5000, 1, 1, 0, false));
    assert_false(lockup_check(&w, &limits, 4000, 1, 2, 0, false));
    assert_int_equal(w.stale, 0);
}

/*
 * Under nested KVM, L0 may deschedule the target's CPU for seconds while the
 * checker runs. While L0 says the target is preempted nothing counts; once
 * it runs again, the steal L0 reports (added when it is back) is taken off
 * the time that counts. A target that runs and still does not beat is a
 * lockup as before.
 */
static void test_steal_is_not_silence(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    uint64_t t = 0, me = 0, steal = 0;
    assert_false(lockup_check(&w, &limits, t, 7, ++me, steal, false));
    /* Descheduled by L0 for 40 checks: 16000 cycles, 16 timeouts. */
    for (int i = 0; i < 40; i++)
        assert_false(lockup_check(&w, &limits, t += 400, 7, ++me, steal, true));
    assert_int_equal(w.stale, 0);
    /* Back, its steal grown by what it lost; the check that sees it counts what is left. */
    steal += 16100;
    assert_false(lockup_check(&w, &limits, t += 400, 7, ++me, steal, false));
    assert_int_equal(w.stale, 0);
    /* Half an interval stolen afterwards: half counts. */
    steal += 200;
    assert_false(lockup_check(&w, &limits, t += 400, 7, ++me, steal, false));
    assert_int_equal(w.stale, 200);
    /* Running and silent: a lockup after the rest of the timeout. */
    assert_false(lockup_check(&w, &limits, t += 400, 7, ++me, steal, false));
    assert_true(lockup_check(&w, &limits, t += 400, 7, ++me, steal, false));
}

/* Steal read for the first time (the target's record just enabled) is a baseline, not a gap. */
static void test_first_steal_is_a_baseline(void **state)
{
    (void)state;
    struct lockup_watch w = {0};
    uint64_t t = 0, me = 0;
    assert_false(lockup_check(&w, &limits, t, 3, ++me, 123456789, false));
    assert_false(lockup_check(&w, &limits, t += 400, 3, ++me, 123456789, false));
    assert_int_equal(w.stale, 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_check_only_records),
        cmocka_unit_test(test_silent_target_fires_after_timeout),
        cmocka_unit_test(test_booting_target_is_not_judged),
        cmocka_unit_test(test_a_beat_resets),
        cmocka_unit_test(test_time_without_own_beats_does_not_count),
        cmocka_unit_test(test_one_long_interval_is_capped),
        cmocka_unit_test(test_tsc_going_backwards_counts_nothing),
        cmocka_unit_test(test_steal_is_not_silence),
        cmocka_unit_test(test_first_steal_is_a_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

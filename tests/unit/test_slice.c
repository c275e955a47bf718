/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A CPU's run and its end (sched/slice.h): a fresh slice, a woken vCPU's
 * granularity, and a directed yield's hand-off, whose target keeps the
 * promise of at least the granularity even late in the spinner's slice.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/slice.h"

#define SLICE 4000 /* sched_slice_us, in "cycles" of 1 us */
#define GRAN  1000 /* sched_wakeup_granularity_us */

static void test_fresh_slice(void **state)
{
    (void)state;
    struct slice s;
    slice_begin(&s, 100, SLICE);
    assert_int_equal(slice_deadline(&s, GRAN), 100 + SLICE);
    assert_false(slice_over(&s, 100 + SLICE - 1, GRAN));
    assert_true(slice_over(&s, 100 + SLICE, GRAN));
    /* A woken vCPU shortens it to the granularity, counted from the slice's start. */
    s.wakeup_pending = true;
    assert_int_equal(slice_deadline(&s, GRAN), 100 + GRAN);
    assert_false(slice_granted(&s, 100 + GRAN - 1, GRAN));
    assert_true(slice_over(&s, 100 + GRAN, GRAN));
    s.resched = true;
    assert_true(slice_over(&s, 101, GRAN));
}

/*
 * The review's case: the spinner has run 1500 us of its slice when a woken
 * vCPU arrives (resched set), spins, and hands its CPU to a target at 1600.
 * The target runs at least the granularity from 1600: its deadline is 2600,
 * not the spinner's 1000 (in the past, which took the CPU back at the
 * target's first exit), and a wake-up during the hand-off does not preempt
 * it at once.
 */
static void test_hand_off_gets_its_own_granularity(void **state)
{
    (void)state;
    struct slice s;
    slice_begin(&s, 0, SLICE);
    s.wakeup_pending = true;
    assert_true(slice_granted(&s, 1500, GRAN)); /* sched_wake: the spinner must go */
    s.resched = true;
    slice_hand_off(&s, 1600, GRAN);
    assert_false(s.resched);
    assert_true(s.wakeup_pending); /* the woken vCPU still waits its turn */
    assert_int_equal(slice_deadline(&s, GRAN), 1600 + GRAN);
    assert_false(slice_over(&s, 1601, GRAN));
    assert_false(slice_over(&s, 1600 + GRAN - 1, GRAN));
    assert_true(slice_over(&s, 1600 + GRAN, GRAN));
    /* sched_wake during the hand-off: no resched before the target had its due. */
    assert_false(slice_granted(&s, 1700, GRAN));
    assert_true(slice_granted(&s, 1600 + GRAN, GRAN));
}

/* Early in the slice the target inherits the rest of it; nobody waiting, the slice's end. */
static void test_hand_off_keeps_the_rest_of_the_slice(void **state)
{
    (void)state;
    struct slice s;
    slice_begin(&s, 0, SLICE);
    slice_hand_off(&s, 200, GRAN);
    assert_int_equal(s.end, SLICE);
    assert_int_equal(slice_deadline(&s, GRAN), SLICE);
    /* Late in the slice: at least the granularity. */
    slice_begin(&s, 0, SLICE);
    slice_hand_off(&s, SLICE - 100, GRAN);
    assert_int_equal(s.end, SLICE - 100 + GRAN);
    assert_false(slice_over(&s, SLICE, GRAN));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_slice),
        cmocka_unit_test(test_hand_off_gets_its_own_granularity),
        cmocka_unit_test(test_hand_off_keeps_the_rest_of_the_slice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

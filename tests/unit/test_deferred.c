/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Deferred work's list and item states (sched/deferred.c): queued once,
 * first in first out, queued again while running runs once more, an item
 * with more to do goes to the back, cancel removes a queued item and stops
 * a running one from coming back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/deferred.h"

static struct deferred_list l;
static struct deferred_work a, b, c;

static bool nothing(struct deferred_work *w)
{
    (void)w;
    return false;
}

static int setup(void **state)
{
    (void)state;
    deferred_list_init(&l);
    deferred_init(&a, nothing);
    deferred_init(&b, nothing);
    deferred_init(&c, nothing);
    return 0;
}

static void test_fifo_and_queued_once(void **state)
{
    (void)state;
    assert_int_equal(a.cpu, -1);
    assert_null(deferred_take(&l));
    assert_true(deferred_queue_locked(&l, &a, 3));
    assert_true(deferred_queue_locked(&l, &b, 3));
    assert_false(deferred_queue_locked(&l, &a, 3)); /* already there: once */
    assert_true(deferred_queue_locked(&l, &c, 3));
    assert_int_equal(l.count, 3);
    assert_int_equal(a.cpu, 3);
    assert_int_equal(a.state, DEFERRED_QUEUED);
    assert_ptr_equal(deferred_take(&l), &a);
    assert_int_equal(a.state, DEFERRED_RUNNING);
    assert_ptr_equal(deferred_take(&l), &b);
    assert_ptr_equal(deferred_take(&l), &c);
    assert_null(deferred_take(&l));
    assert_int_equal(l.count, 0);
    /* The list is whole again after emptying: a new item is its head and tail. */
    assert_false(deferred_done(&l, &a, false));
    assert_true(deferred_queue_locked(&l, &a, 3));
    assert_ptr_equal(deferred_take(&l), &a);
}

static void test_more_goes_to_the_back(void **state)
{
    (void)state;
    deferred_queue_locked(&l, &a, 0);
    deferred_queue_locked(&l, &b, 0);
    struct deferred_work *w = deferred_take(&l);
    assert_true(deferred_done(&l, w, true));
    assert_int_equal(a.state, DEFERRED_QUEUED);
    assert_ptr_equal(deferred_take(&l), &b);
    assert_ptr_equal(deferred_take(&l), &a);
    /* Done with nothing left: idle, on no CPU. */
    assert_false(deferred_done(&l, &a, false));
    assert_int_equal(a.state, DEFERRED_IDLE);
    assert_int_equal(a.cpu, -1);
}

/* A request that came while it ran (it may have looked before the request's work arrived). */
static void test_queued_while_running_runs_again(void **state)
{
    (void)state;
    deferred_queue_locked(&l, &a, 1);
    deferred_take(&l);
    assert_false(deferred_queue_locked(&l, &a, 1));
    assert_int_equal(l.count, 0);
    assert_true(deferred_done(&l, &a, false));
    assert_ptr_equal(deferred_take(&l), &a);
    assert_false(deferred_done(&l, &a, false)); /* once only */
    assert_int_equal(a.state, DEFERRED_IDLE);
}

static void test_cancel_queued(void **state)
{
    (void)state;
    deferred_queue_locked(&l, &a, 2);
    deferred_queue_locked(&l, &b, 2);
    deferred_queue_locked(&l, &c, 2);
    assert_true(deferred_cancel_locked(&l, &c)); /* the tail */
    assert_true(deferred_cancel_locked(&l, &a)); /* the head */
    assert_int_equal(c.state, DEFERRED_IDLE);
    assert_int_equal(c.cpu, -1);
    assert_int_equal(l.count, 1);
    /* The tail was fixed: an item queued now follows b. */
    assert_true(deferred_queue_locked(&l, &c, 2));
    assert_ptr_equal(deferred_take(&l), &b);
    assert_ptr_equal(deferred_take(&l), &c);
    assert_null(deferred_take(&l));
    /* An idle item: nothing to do. */
    assert_true(deferred_cancel_locked(&l, &a));
}

static void test_cancel_running(void **state)
{
    (void)state;
    deferred_queue_locked(&l, &a, 0);
    deferred_take(&l);
    deferred_queue_locked(&l, &a, 0); /* again... */
    assert_false(deferred_cancel_locked(&l, &a));
    assert_int_equal(a.state, DEFERRED_RUNNING);
    assert_false(deferred_done(&l, &a, true)); /* ...but cancelled: neither more nor again */
    assert_int_equal(a.state, DEFERRED_IDLE);
    assert_int_equal(a.cpu, -1);
    assert_null(deferred_take(&l));
    /* Queued afresh later (a device started again), it runs. */
    assert_true(deferred_queue_locked(&l, &a, 0));
    assert_ptr_equal(deferred_take(&l), &a);
    assert_false(deferred_done(&l, &a, false));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_fifo_and_queued_once, setup),
        cmocka_unit_test_setup(test_more_goes_to_the_back, setup),
        cmocka_unit_test_setup(test_queued_while_running_runs_again, setup),
        cmocka_unit_test_setup(test_cancel_queued, setup),
        cmocka_unit_test_setup(test_cancel_running, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

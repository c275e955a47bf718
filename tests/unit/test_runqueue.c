/* SPDX-License-Identifier: GPL-2.0-only */
/* Run-queue list operations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/runqueue.h"

static struct rq_list q;
static struct rq_link a, b, c;

static int setup(void **state)
{
    (void)state;
    rq_init(&q);
    a = b = c = (struct rq_link){0};
    return 0;
}

static void test_fifo_order(void **state)
{
    (void)state;
    assert_true(rq_empty(&q));
    assert_null(rq_pop(&q));
    rq_push_tail(&q, &a);
    rq_push_tail(&q, &b);
    rq_push_tail(&q, &c);
    assert_int_equal(q.count, 3);
    assert_ptr_equal(rq_pop(&q), &a);
    assert_ptr_equal(rq_pop(&q), &b);
    assert_ptr_equal(rq_pop(&q), &c);
    assert_null(rq_pop(&q));
    assert_true(rq_empty(&q));
}

static void test_head_goes_first(void **state)
{
    (void)state;
    rq_push_tail(&q, &a);
    rq_push_tail(&q, &b);
    rq_push_head(&q, &c); /* a woken vCPU */
    assert_ptr_equal(rq_pop(&q), &c);
    assert_ptr_equal(rq_pop(&q), &a);
    assert_ptr_equal(rq_pop(&q), &b);
}

static void test_remove_anywhere(void **state)
{
    (void)state;
    rq_push_tail(&q, &a);
    rq_push_tail(&q, &b);
    rq_push_tail(&q, &c);
    rq_remove(&q, &b);
    assert_false(b.queued);
    assert_int_equal(q.count, 2);
    rq_remove(&q, &b); /* not queued: nothing happens */
    assert_int_equal(q.count, 2);
    assert_ptr_equal(rq_pop(&q), &a);
    assert_ptr_equal(rq_pop(&q), &c);
    assert_true(rq_empty(&q));
}

static void test_round_robin_requeue(void **state)
{
    (void)state;
    rq_push_tail(&q, &a);
    rq_push_tail(&q, &b);
    const struct rq_link *order[6];
    for (int i = 0; i < 6; i++) {
        struct rq_link *l = rq_pop(&q);
        order[i] = l;
        rq_push_tail(&q, l); /* slice over */
    }
    for (int i = 0; i < 6; i++)
        assert_ptr_equal(order[i], i % 2 ? &b : &a);
    assert_true(a.queued && b.queued);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_fifo_order, setup),
        cmocka_unit_test_setup(test_head_goes_first, setup),
        cmocka_unit_test_setup(test_remove_anywhere, setup),
        cmocka_unit_test_setup(test_round_robin_requeue, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

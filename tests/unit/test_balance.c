/*
 * Load balancing decisions (sched/balance.c): placement on the least loaded
 * CPU, which CPUs an idle CPU pulls from, the periodic balance's choice of
 * CPUs and vCPU, and that a pinned vCPU or one whose context is still
 * active elsewhere never moves. A small simulation checks that the periodic
 * rule gives always-runnable vCPUs their share of the CPUs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "sched/balance.h"

static void test_place_least_loaded(void **state)
{
    (void)state;
    unsigned placed[4] = {2, 1, 1, 0};
    bool ready[4] = {true, true, true, false};
    assert_int_equal(balance_place(placed, ready, 4), 1); /* CPU 3 is not ready */
    ready[3] = true;
    assert_int_equal(balance_place(placed, ready, 4), 3);
    bool none[2] = {false, false};
    assert_int_equal(balance_place(placed, none, 2), -1);
}

/* Successive placements on equal CPUs alternate, as round robin did. */
static void test_place_alternates(void **state)
{
    (void)state;
    unsigned placed[2] = {0, 0};
    bool ready[2] = {true, true};
    const int want[] = {0, 1, 0, 1, 0};
    for (unsigned i = 0; i < 5; i++) {
        int c = balance_place(placed, ready, 2);
        assert_int_equal(c, want[i]);
        placed[c]++;
    }
}

static void test_pinned_never_moves(void **state)
{
    (void)state;
    assert_true(balance_may_run_on(1, -1, false, 1));
    assert_false(balance_may_run_on(1, -1, false, 0));
    assert_false(balance_may_run_on(0, -1, false, 2));
    assert_true(balance_may_run_on(-1, -1, false, 2));
}

/* A context still active on another CPU (VMX: not VMCLEARed) ties the vCPU there. */
static void test_tied_context_and_leaving(void **state)
{
    (void)state;
    assert_false(balance_may_run_on(-1, 0, false, 1));
    assert_true(balance_may_run_on(-1, 1, false, 1));
    assert_false(balance_may_run_on(-1, -1, true, 1)); /* still leaving its last CPU */
}

static void test_pull_order_busiest_first(void **state)
{
    (void)state;
    unsigned waiting[5] = {1, 3, 0, 3, 2};
    unsigned order[5];
    unsigned n = balance_pull_order(waiting, 5, 2, order);
    assert_int_equal(n, 4);
    const unsigned want[] = {1, 3, 4, 0};
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(order[i], want[i]);
    /* Never itself, never an empty queue. */
    n = balance_pull_order(waiting, 5, 1, order);
    assert_int_equal(n, 3);
    assert_int_equal(order[0], 3);
    unsigned empty[3] = {0, 0, 0};
    assert_int_equal(balance_pull_order(empty, 3, 0, order), 0);
}

static void test_pick_cpus(void **state)
{
    (void)state;
    struct balance_cpu cpus[3] = {{1, true}, {3, true}, {0, false}};
    unsigned src, dst;
    assert_true(balance_pick_cpus(cpus, 3, 0, &src, &dst));
    assert_int_equal(src, 1);
    assert_int_equal(dst, 0); /* CPU 2 is less loaded but cannot run guests */
    cpus[0].load = 3;
    assert_false(balance_pick_cpus(cpus, 3, 0, &src, &dst));
    /* Ties go to the first found from start on, so equal CPUs take turns. */
    struct balance_cpu four[4] = {{2, true}, {1, true}, {2, true}, {1, true}};
    assert_true(balance_pick_cpus(four, 4, 0, &src, &dst));
    assert_int_equal(src, 0);
    assert_int_equal(dst, 1);
    assert_true(balance_pick_cpus(four, 4, 2, &src, &dst));
    assert_int_equal(src, 2);
    assert_int_equal(dst, 3);
}

static void test_pick_vcpu_least_run_movable(void **state)
{
    (void)state;
    struct balance_vcpu w[4] = {{500, true}, {100, false}, {300, true}, {300, true}};
    assert_int_equal(balance_pick_vcpu(w, 4), 2); /* 1 is pinned: never */
    w[0].movable = w[2].movable = w[3].movable = false;
    assert_int_equal(balance_pick_vcpu(w, 4), -1);
}

static void test_should_move(void **state)
{
    (void)state;
    assert_true(balance_should_move(3, 1, 900, 100)); /* two apart: always */
    assert_true(balance_should_move(2, 0, 900, 0));
    assert_true(balance_should_move(2, 1, 100, 900)); /* one apart: the destination is ahead */
    assert_false(balance_should_move(2, 1, 900, 100));
    assert_false(balance_should_move(2, 1, 500, 500));
    assert_false(balance_should_move(2, 2, 0, 900)); /* balanced */
}

/*
 * nv always-runnable vCPUs on nc CPUs, in slices of one unit: each CPU runs
 * the head of its queue, which then goes to the tail (the scheduler's round
 * robin); every `period` slices one balance moves at most one vCPU, as
 * sched/sched.c does: the vCPU that ran last on a CPU is its running one,
 * the others wait. Returns each vCPU's run time in run[].
 */
#define SIM_MAX 8

static void simulate(unsigned nv, unsigned nc, bool balance, unsigned slices, uint64_t *run)
{
    unsigned queue[SIM_MAX][SIM_MAX], len[SIM_MAX] = {0};
    bool moved[SIM_MAX] = {false};
    for (unsigned v = 0; v < nv; v++) {
        queue[v % nc][len[v % nc]++] = v; /* placement alternates */
        run[v] = 0;
    }
    for (unsigned t = 1, start = 0; t <= slices; t++) {
        for (unsigned c = 0; c < nc; c++) {
            if (!len[c])
                continue;
            unsigned v = queue[c][0];
            memmove(&queue[c][0], &queue[c][1], (len[c] - 1) * sizeof(unsigned));
            queue[c][len[c] - 1] = v;
            run[v]++;
            moved[v] = false;
        }
        if (!balance || t % 4)
            continue;
        struct balance_cpu cpus[SIM_MAX];
        for (unsigned c = 0; c < nc; c++)
            cpus[c] = (struct balance_cpu){len[c], true};
        unsigned src, dst;
        if (!balance_pick_cpus(cpus, nc, start++, &src, &dst))
            continue;
        uint64_t dst_least = UINT64_MAX;
        for (unsigned i = 0; i < len[dst]; i++)
            if (run[queue[dst][i]] < dst_least)
                dst_least = run[queue[dst][i]];
        struct balance_vcpu w[SIM_MAX];
        for (unsigned i = 0; i + 1 < len[src]; i++) /* the last one is running */
            w[i] = (struct balance_vcpu){run[queue[src][i]], !moved[queue[src][i]]};
        int pick = balance_pick_vcpu(w, len[src] - 1);
        if (pick < 0 || !balance_should_move(len[src], len[dst], w[pick].run_cycles, dst_least))
            continue;
        unsigned v = queue[src][pick];
        memmove(&queue[src][pick], &queue[src][pick + 1], (len[src] - pick - 1) * sizeof(unsigned));
        len[src]--;
        queue[dst][len[dst]++] = v;
        moved[v] = true;
    }
}

static void assert_fair(unsigned nv, unsigned nc, unsigned slices, unsigned percent)
{
    uint64_t run[SIM_MAX];
    simulate(nv, nc, true, slices, run);
    uint64_t share = (uint64_t)slices * nc / nv;
    for (unsigned v = 0; v < nv; v++) {
        uint64_t off = run[v] > share ? run[v] - share : share - run[v];
        if (off * 100 > share * percent)
            fail_msg("%u vCPUs on %u CPUs: vCPU %u ran %llu of %llu slices, share %llu", nv, nc, v,
                     (unsigned long long)run[v], (unsigned long long)slices * nc,
                     (unsigned long long)share);
    }
}

static void test_always_runnable_share_fairly(void **state)
{
    (void)state;
    assert_fair(3, 2, 1200, 2);
    assert_fair(4, 3, 1200, 2);
    assert_fair(5, 3, 1200, 2);
    assert_fair(6, 4, 1200, 2);
    assert_fair(7, 4, 1200, 2);
}

/* Without balancing, the vCPU alone on its CPU runs twice as much as the two sharing one. */
static void test_no_balance_lone_vcpu_runs_twice(void **state)
{
    (void)state;
    uint64_t run[3];
    simulate(3, 2, false, 600, run);
    assert_int_equal(run[0], 300);
    assert_int_equal(run[1], 600);
    assert_int_equal(run[2], 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_place_least_loaded),
        cmocka_unit_test(test_place_alternates),
        cmocka_unit_test(test_pinned_never_moves),
        cmocka_unit_test(test_tied_context_and_leaving),
        cmocka_unit_test(test_pull_order_busiest_first),
        cmocka_unit_test(test_pick_cpus),
        cmocka_unit_test(test_pick_vcpu_least_run_movable),
        cmocka_unit_test(test_should_move),
        cmocka_unit_test(test_always_runnable_share_fairly),
        cmocka_unit_test(test_no_balance_lone_vcpu_runs_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

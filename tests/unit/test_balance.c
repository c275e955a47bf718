/* SPDX-License-Identifier: GPL-2.0-only */
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

static void test_lock_order_lower_cpu_first(void **state)
{
    (void)state;
    unsigned order[2];
    assert_int_equal(balance_lock_order(3, 1, order), 2);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 3);
    assert_int_equal(balance_lock_order(1, 3, order), 2);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 3);
    assert_int_equal(balance_lock_order(2, 2, order), 1);
    assert_int_equal(order[0], 2);
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

static struct balance_move move_view(unsigned src_load, unsigned dst_load,
                                     const struct balance_vcpu *w, unsigned n, uint64_t dst_least)
{
    return (struct balance_move){src_load, dst_load, w, n, false, 0, dst_least};
}

/* Loads two or more apart: the waiting vCPU furthest behind goes to the emptier CPU. */
static void test_choose_least_run_when_far_apart(void **state)
{
    (void)state;
    struct balance_vcpu w[4] = {{500, true}, {100, false}, {300, true}, {300, true}};
    struct balance_move m = move_view(4, 1, w, 4, 0);
    assert_int_equal(balance_choose(&m), 2); /* 1 is pinned elsewhere: never */
    m = move_view(4, 2, w, 4, 0);
    assert_int_equal(balance_choose(&m), 2);
    w[0].movable = w[2].movable = w[3].movable = false;
    assert_int_equal(balance_choose(&m), -1);
}

/*
 * Loads one apart: the vCPU most ahead moves, so the ones left with the
 * emptier CPU are those behind, and only if they are behind everything on
 * the destination.
 */
static void test_choose_most_run_when_one_apart(void **state)
{
    (void)state;
    struct balance_vcpu w[2] = {{100, true}, {400, true}};
    struct balance_move m = move_view(2, 1, w, 2, 900);
    assert_int_equal(balance_choose(&m), 1); /* 100 stays: behind the destination's 900 */
    m.dst_least_run = 100;
    assert_int_equal(balance_choose(&m), -1); /* the one left is not behind: no move */
    m.dst_least_run = 50;
    assert_int_equal(balance_choose(&m), -1);
    /* The running vCPU stays behind too, and counts. */
    struct balance_vcpu one[1] = {{400, true}};
    m = move_view(2, 1, one, 1, 900);
    m.src_running = true;
    m.src_running_run = 950;
    assert_int_equal(balance_choose(&m), -1);
    m.src_running_run = 800;
    assert_int_equal(balance_choose(&m), 0);
    /* A pinned waiting vCPU cannot move, but stays behind and counts. */
    struct balance_vcpu pinned[2] = {{950, false}, {400, true}};
    m = move_view(2, 1, pinned, 2, 900);
    assert_int_equal(balance_choose(&m), -1);
    /* An empty destination takes the one waiting vCPU. */
    m = move_view(1, 0, one, 1, 0);
    assert_int_equal(balance_choose(&m), 0);
}

static void test_choose_balanced_never_moves(void **state)
{
    (void)state;
    struct balance_vcpu w[2] = {{0, true}, {0, true}};
    struct balance_move m = move_view(2, 2, w, 2, 1000);
    assert_int_equal(balance_choose(&m), -1);
}

/*
 * nv always-runnable vCPUs on nc CPUs, in slices of one unit, as
 * sched/sched.c runs them: each CPU runs its current vCPU; when others wait
 * at the end of the slice it goes to the tail of the queue and the head
 * runs next, a lone vCPU just goes on. The periodic balance runs when a CPU
 * changes vCPUs and `period` slices have passed since the last one.
 * Returns each vCPU's run time in run[].
 */
#define SIM_MAX 12

struct sim {
    unsigned queue[SIM_MAX][SIM_MAX], len[SIM_MAX];
    int current[SIM_MAX];
    bool moved[SIM_MAX];
    uint64_t run[SIM_MAX];
};

static unsigned sim_load(const struct sim *s, unsigned c)
{
    return s->len[c] + (s->current[c] >= 0);
}

static void sim_balance(struct sim *s, unsigned nc, unsigned start)
{
    struct balance_cpu cpus[SIM_MAX];
    for (unsigned c = 0; c < nc; c++)
        cpus[c] = (struct balance_cpu){sim_load(s, c), true};
    unsigned src, dst;
    if (!balance_pick_cpus(cpus, nc, start, &src, &dst))
        return;
    uint64_t dst_least = UINT64_MAX;
    for (unsigned i = 0; i < s->len[dst]; i++)
        dst_least = s->run[s->queue[dst][i]] < dst_least ? s->run[s->queue[dst][i]] : dst_least;
    if (s->current[dst] >= 0 && s->run[s->current[dst]] < dst_least)
        dst_least = s->run[s->current[dst]];
    struct balance_vcpu w[SIM_MAX];
    for (unsigned i = 0; i < s->len[src]; i++)
        w[i] = (struct balance_vcpu){s->run[s->queue[src][i]], !s->moved[s->queue[src][i]]};
    struct balance_move m = {
        cpus[src].load, cpus[dst].load,       w,
        s->len[src],    s->current[src] >= 0, s->current[src] >= 0 ? s->run[s->current[src]] : 0,
        dst_least};
    int pick = balance_choose(&m);
    if (pick < 0)
        return;
    unsigned v = s->queue[src][pick];
    memmove(&s->queue[src][pick], &s->queue[src][pick + 1],
            (s->len[src] - (unsigned)pick - 1) * sizeof(unsigned));
    s->len[src]--;
    s->queue[dst][s->len[dst]++] = v;
    s->moved[v] = true;
}

static void simulate(unsigned nv, unsigned nc, bool balance, unsigned slices, uint64_t *run)
{
    struct sim s;
    memset(&s, 0, sizeof(s));
    for (unsigned c = 0; c < nc; c++)
        s.current[c] = -1;
    for (unsigned v = 0; v < nv; v++)
        s.queue[v % nc][s.len[v % nc]++] = v; /* placement alternates */
    unsigned next_balance = 4, start = 0;
    for (unsigned t = 0; t < slices; t++) {
        for (unsigned c = 0; c < nc; c++) {
            if (s.current[c] < 0 && s.len[c]) {
                s.current[c] = (int)s.queue[c][0];
                memmove(&s.queue[c][0], &s.queue[c][1], --s.len[c] * sizeof(unsigned));
                s.moved[s.current[c]] = false;
            }
            if (s.current[c] >= 0)
                s.run[s.current[c]]++;
        }
        for (unsigned c = 0; c < nc; c++) {
            if (s.current[c] < 0 || !s.len[c])
                continue;
            s.queue[c][s.len[c]++] = (unsigned)s.current[c];
            s.current[c] = -1;
            if (balance && t + 1 >= next_balance) {
                next_balance = t + 1 + 4;
                sim_balance(&s, nc, start++);
            }
        }
    }
    memcpy(run, s.run, nv * sizeof(uint64_t));
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
    const unsigned cases[][2] = {{3, 2}, {5, 2}, {7, 2}, {4, 3}, {5, 3},
                                 {7, 3}, {5, 4}, {6, 4}, {7, 4}, {9, 4}};
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_fair(cases[i][0], cases[i][1], 2400, 2);
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
        cmocka_unit_test(test_lock_order_lower_cpu_first),
        cmocka_unit_test(test_pull_order_busiest_first),
        cmocka_unit_test(test_pick_cpus),
        cmocka_unit_test(test_choose_least_run_when_far_apart),
        cmocka_unit_test(test_choose_most_run_when_one_apart),
        cmocka_unit_test(test_choose_balanced_never_moves),
        cmocka_unit_test(test_always_runnable_share_fairly),
        cmocka_unit_test(test_no_balance_lone_vcpu_runs_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

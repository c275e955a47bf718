/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Directed yield (sched/yield.c): the order in which each pivot visits the
 * vCPUs, the candidate filters (running, blocked, user mode, interrupt
 * pending, pinned), the dy_eligible toggle and the 3-try limit, against a
 * scripted VM.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "sched/yield.h"

#define MAXV 16

/* A scripted VM: what each vCPU looks like and whether taking it works. */
struct fake_vm {
    struct yield_candidate look[MAXV];
    struct yield_spin spin[MAXV];
    enum yield_take result[MAXV]; /* what taking it gives (0: YIELD_TAKEN) */
    unsigned looked[MAXV * 2], nlooked;
    unsigned taken[MAXV * 2], ntaken;
};

static void fake_look(void *ctx, unsigned i, struct yield_candidate *c)
{
    struct fake_vm *vm = ctx;
    vm->looked[vm->nlooked++] = i;
    *c = vm->look[i];
    c->spin = &vm->spin[i];
}

static enum yield_take fake_take(void *ctx, unsigned i)
{
    struct fake_vm *vm = ctx;
    vm->taken[vm->ntaken++] = i;
    return vm->result[i];
}

static struct yield_outcome scan(struct fake_vm *vm, unsigned n, unsigned me,
                                 enum yield_pivot pivot, bool in_kernel, unsigned *last)
{
    struct yield_source src = {fake_look, fake_take, vm};
    struct yield_outcome out;
    vm->nlooked = vm->ntaken = 0;
    yield_scan(&src, n, me, pivot, in_kernel, last, &out);
    return out;
}

static void assert_seq(const unsigned *got, unsigned ngot, const unsigned *want, unsigned nwant)
{
    assert_int_equal(ngot, nwant);
    for (unsigned i = 0; i < nwant; i++)
        if (got[i] != want[i])
            fail_msg("position %u: vCPU %u, want %u", i, got[i], want[i]);
}

#define SEQ(...)                                                                                   \
    ((const unsigned[]){__VA_ARGS__}), sizeof((const unsigned[]){__VA_ARGS__}) / sizeof(unsigned)

/* Every vCPU on a CPU: the scan visits each other vCPU once, in pivot order. */
static struct fake_vm all_running(unsigned n)
{
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    for (unsigned i = 0; i < n; i++)
        vm.look[i].on_cpu = true;
    return vm;
}

static void test_vcpu_id_pivot_order(void **state)
{
    (void)state;
    struct fake_vm vm = all_running(6);
    unsigned last = 4;
    struct yield_outcome o = scan(&vm, 6, 2, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_seq(vm.looked, vm.nlooked, SEQ(3, 4, 5, 0, 1));
    assert_int_equal(o.target, -1);
    assert_int_equal(o.skipped[YIELD_SKIP_RUNNING], 5);
    assert_int_equal(vm.ntaken, 0);
    assert_int_equal(last, 4); /* untouched without a target */
}

static void test_vcpu_id_pivot_wraps_from_last(void **state)
{
    (void)state;
    struct fake_vm vm = all_running(4);
    unsigned last = 0;
    scan(&vm, 4, 3, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_seq(vm.looked, vm.nlooked, SEQ(0, 1, 2));
}

/* last_boosted starts after the VM's last boosted vCPU, wraps, and ends with that vCPU. */
static void test_last_boosted_pivot_order(void **state)
{
    (void)state;
    struct fake_vm vm = all_running(6);
    unsigned last = 3;
    scan(&vm, 6, 1, YIELD_PIVOT_LAST_BOOSTED, true, &last);
    assert_seq(vm.looked, vm.nlooked, SEQ(4, 5, 0, 2, 3));
    last = 5;
    scan(&vm, 6, 0, YIELD_PIVOT_LAST_BOOSTED, true, &last);
    assert_seq(vm.looked, vm.nlooked, SEQ(1, 2, 3, 4, 5));
}

/* Two spinners: vcpu_id sends them to different vCPUs, last_boosted to the same one. */
static void test_pivots_spread_or_converge(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    unsigned last = 0;
    assert_int_equal(yield_first(YIELD_PIVOT_VCPU_ID, 1, last, 4), 2);
    assert_int_equal(yield_first(YIELD_PIVOT_VCPU_ID, 2, last, 4), 3);
    assert_int_equal(yield_first(YIELD_PIVOT_LAST_BOOSTED, 1, last, 4), 1);
    assert_int_equal(yield_first(YIELD_PIVOT_LAST_BOOSTED, 2, last, 4), 1);
    /* All preempted: the first visited is taken and becomes the last boosted. */
    struct yield_outcome o = scan(&vm, 4, 1, YIELD_PIVOT_LAST_BOOSTED, true, &last);
    assert_int_equal(o.target, 2); /* 1 is the spinner itself */
    assert_int_equal(last, 2);
    o = scan(&vm, 4, 0, YIELD_PIVOT_LAST_BOOSTED, true, &last);
    assert_int_equal(o.target, 3);
    assert_int_equal(last, 3);
    o = scan(&vm, 4, 3, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(o.target, 0);
    assert_int_equal(last, 0); /* recorded with every pivot: the vCPU actually boosted */
}

static void test_one_vcpu_vm(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    for (int p = YIELD_PIVOT_VCPU_ID; p <= YIELD_PIVOT_LAST_BOOSTED; p++) {
        unsigned last = 0;
        struct yield_outcome o = scan(&vm, 1, 0, (enum yield_pivot)p, true, &last);
        assert_int_equal(o.target, -1);
        assert_int_equal(vm.nlooked, 0);
        assert_false(o.gave_up);
    }
}

static void test_pivot_none_never_scans(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    unsigned last = 0;
    struct yield_outcome o = scan(&vm, 4, 0, YIELD_PIVOT_NONE, true, &last);
    assert_int_equal(o.target, -1);
    assert_int_equal(vm.nlooked, 0);
}

/*
 * From spinner 0 (CPL 0): 1 running, 2 blocked, 3 blocked with an interrupt
 * pending (taken: KVM's vcpu_dy_runnable).
 */
static void test_blocked_needs_pending_interrupt(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    vm.look[1].on_cpu = true;
    vm.look[2].halted = true;
    vm.look[3] = (struct yield_candidate){.halted = true, .irq_pending = true};
    unsigned last = 0;
    struct yield_outcome o = scan(&vm, 5, 0, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(o.target, 3);
    assert_int_equal(o.skipped[YIELD_SKIP_RUNNING], 1);
    assert_int_equal(o.skipped[YIELD_SKIP_BLOCKED], 1);
    assert_seq(vm.taken, vm.ntaken, SEQ(3));
}

/* A kernel-mode spinner passes over vCPUs preempted in user mode, unless an interrupt waits. */
static void test_user_mode_filter(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    vm.look[1].preempted_in_user = true;
    vm.look[2] = (struct yield_candidate){.preempted_in_user = true, .irq_pending = true};
    unsigned last = 0;
    struct yield_outcome o = scan(&vm, 3, 0, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(o.target, 2);
    assert_int_equal(o.skipped[YIELD_SKIP_USER_MODE], 1);
    /* A user-mode spinner takes the first preempted vCPU, whatever its mode. */
    o = scan(&vm, 3, 0, YIELD_PIVOT_VCPU_ID, false, &last);
    assert_int_equal(o.target, 1);
    assert_int_equal(o.skipped[YIELD_SKIP_USER_MODE], 0);
}

static void test_pinned_elsewhere_skipped(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    vm.look[1].pinned_elsewhere = true;
    unsigned last = 0;
    struct yield_outcome o = scan(&vm, 3, 0, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(o.target, 2);
    assert_int_equal(o.skipped[YIELD_SKIP_PINNED], 1);
    assert_seq(vm.taken, vm.ntaken, SEQ(2));
}

/* A candidate that is itself spinning is eligible every other time it is looked at. */
static void test_dy_eligible_toggles(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    yield_spin_begin(&vm.spin[1]); /* vCPU 1 left its CPU while spinning */
    unsigned last = 0;
    bool taken[6];
    for (unsigned round = 0; round < 6; round++) {
        struct yield_outcome o = scan(&vm, 2, 0, YIELD_PIVOT_VCPU_ID, true, &last);
        taken[round] = o.target == 1;
        assert_int_equal(o.skipped[YIELD_SKIP_NOT_ELIGIBLE], !taken[round]);
    }
    for (unsigned round = 0; round < 6; round++)
        assert_int_equal(taken[round], round % 2 == 1);
    /* Once it ran again it is an ordinary candidate, taken every time. */
    yield_spin_end(&vm.spin[1]);
    for (unsigned round = 0; round < 3; round++)
        assert_int_equal(scan(&vm, 2, 0, YIELD_PIVOT_VCPU_ID, true, &last).target, 1);
}

/* The toggle flips only for candidates that passed every other filter. */
static void test_dy_eligible_untouched_by_other_skips(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    yield_spin_begin(&vm.spin[1]);
    vm.look[1].on_cpu = true;
    unsigned last = 0;
    for (unsigned round = 0; round < 3; round++)
        scan(&vm, 2, 0, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(vm.spin[1].dy_eligible, 0);
}

/* Three failed takes end the scan; later candidates are not even looked at. */
static void test_three_failed_tries(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    for (unsigned i = 0; i < 8; i++)
        vm.result[i] = YIELD_BUSY;
    unsigned last = 5;
    struct yield_outcome o = scan(&vm, 8, 0, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(o.target, -1);
    assert_true(o.gave_up);
    assert_int_equal(o.failed_tries, YIELD_MAX_FAILED_TRIES);
    assert_seq(vm.taken, vm.ntaken, SEQ(1, 2, 3));
    assert_seq(vm.looked, vm.nlooked, SEQ(1, 2, 3));
    assert_int_equal(last, 5);
}

/* Skipped candidates do not count as failures: two failures, skips, then success. */
static void test_skips_do_not_count_as_failures(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    vm.result[1] = vm.result[3] = YIELD_BUSY;
    vm.look[2].on_cpu = true;
    vm.look[4].halted = true;
    vm.look[5].preempted_in_user = true;
    unsigned last = 0;
    struct yield_outcome o = scan(&vm, 7, 0, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(o.target, 6);
    assert_false(o.gave_up);
    assert_int_equal(o.failed_tries, 2);
    assert_seq(vm.taken, vm.ntaken, SEQ(1, 3, 6));
    assert_int_equal(o.skipped[YIELD_SKIP_RUNNING] + o.skipped[YIELD_SKIP_BLOCKED] +
                         o.skipped[YIELD_SKIP_USER_MODE],
                     3);
}

/*
 * KVM's accounting: a candidate that is no longer waiting when taken (it
 * started running, or halted with its IRR set and so passed the filter, but
 * is on no run queue) moves the scan on without counting; the old rule gave
 * up after three of them and never reached vCPU 5.
 */
static void test_gone_candidates_do_not_count(void **state)
{
    (void)state;
    struct fake_vm vm;
    memset(&vm, 0, sizeof(vm));
    for (unsigned i = 1; i < 5; i++)
        vm.result[i] = YIELD_GONE;
    vm.look[3].halted = vm.look[3].irq_pending = true; /* passes vcpu_dy_runnable, not queued */
    unsigned last = 0;
    struct yield_outcome o = scan(&vm, 8, 0, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(o.target, 5);
    assert_false(o.gave_up);
    assert_int_equal(o.failed_tries, 0);
    assert_int_equal(o.gone, 4);
    assert_seq(vm.taken, vm.ntaken, SEQ(1, 2, 3, 4, 5));
    assert_int_equal(last, 5);
    /* Gone and busy mixed: only the busy ones count toward the limit. */
    memset(&vm, 0, sizeof(vm));
    vm.result[1] = vm.result[3] = vm.result[5] = YIELD_BUSY;
    vm.result[2] = vm.result[4] = YIELD_GONE;
    o = scan(&vm, 8, 0, YIELD_PIVOT_VCPU_ID, true, &last);
    assert_int_equal(o.target, -1);
    assert_true(o.gave_up);
    assert_int_equal(o.failed_tries, 3);
    assert_int_equal(o.gone, 2);
    assert_seq(vm.taken, vm.ntaken, SEQ(1, 2, 3, 4, 5));
}

/* A yield by name (PV sched yield, the kick): only a vCPU waiting for a CPU is taken. */
static void test_yield_to_check(void **state)
{
    (void)state;
    struct yield_spin spin = {0};
    struct yield_candidate waiting = {.spin = &spin};
    assert_int_equal(yield_to_check(&waiting, false), YIELD_TO_TAKEN);
    assert_int_equal(yield_to_check(&waiting, true), YIELD_TO_SELF);
    struct yield_candidate c = waiting;
    c.on_cpu = true;
    assert_int_equal(yield_to_check(&c, false), YIELD_TO_RUNNING);
    c = waiting;
    c.halted = true;
    c.irq_pending = true; /* a halted one is woken by its event, never taken halted */
    assert_int_equal(yield_to_check(&c, false), YIELD_TO_NOT_RUNNABLE);
    c = waiting;
    c.pinned_elsewhere = true;
    assert_int_equal(yield_to_check(&c, false), YIELD_TO_PINNED);
    /* Unlike the spin scan, user mode and dy_eligible do not matter: the guest named it. */
    c = waiting;
    c.preempted_in_user = true;
    spin.in_spin_loop = true;
    assert_int_equal(yield_to_check(&c, false), YIELD_TO_TAKEN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yield_to_check),
        cmocka_unit_test(test_vcpu_id_pivot_order),
        cmocka_unit_test(test_gone_candidates_do_not_count),
        cmocka_unit_test(test_vcpu_id_pivot_wraps_from_last),
        cmocka_unit_test(test_last_boosted_pivot_order),
        cmocka_unit_test(test_pivots_spread_or_converge),
        cmocka_unit_test(test_one_vcpu_vm),
        cmocka_unit_test(test_pivot_none_never_scans),
        cmocka_unit_test(test_blocked_needs_pending_interrupt),
        cmocka_unit_test(test_user_mode_filter),
        cmocka_unit_test(test_pinned_elsewhere_skipped),
        cmocka_unit_test(test_dy_eligible_toggles),
        cmocka_unit_test(test_dy_eligible_untouched_by_other_skips),
        cmocka_unit_test(test_three_failed_tries),
        cmocka_unit_test(test_skips_do_not_count_as_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

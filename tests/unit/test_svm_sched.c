/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The SVM rules scheduling brings in (arch/x86/svm/svm_sched.c): which ASID
 * a vCPU runs with as it moves between CPUs, what is flushed and which VMCB
 * clean bits are cleared, ASID generations, and the pause-filter fields.
 * No emulator here checks these (QEMU ignores ASIDs; none has clean bits or
 * a pause-filter threshold), so this is where they are tested.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "arch/x86/svm/svm_sched.h"

static struct svm_asid_cpu cpu_state(void)
{
    return (struct svm_asid_cpu){.next_asid = 1, .generation = 1};
}

static void assert_fresh(struct svm_asid_entry e, uint32_t asid, const struct svm_asid_vcpu *v)
{
    assert_true(e.fresh);
    assert_int_equal(e.tlb_control, SVM_TLB_FLUSH_ALL);
    assert_true(e.clear_clean);
    assert_int_equal(v->asid, asid);
}

static void test_same_cpu_keeps_asid(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = cpu_state();
    struct svm_asid_vcpu v = {.cpu = -1};
    assert_fresh(svm_asid_assign(&v, &c0, 0, 16), 1, &v);
    for (unsigned i = 0; i < 3; i++) {
        struct svm_asid_entry e = svm_asid_assign(&v, &c0, 0, 16);
        assert_false(e.fresh);
        assert_int_equal(e.tlb_control, 0);
        assert_false(e.clear_clean);
        assert_int_equal(v.asid, 1);
    }
}

/* A move: a fresh ASID from the new CPU, a flush, clean bits cleared; and again coming back. */
static void test_move_takes_fresh_asid_and_flushes(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = cpu_state(), c1 = cpu_state();
    struct svm_asid_vcpu a = {.cpu = -1}, b = {.cpu = -1};
    svm_asid_assign(&a, &c0, 0, 16);
    svm_asid_assign(&b, &c1, 1, 16);
    assert_fresh(svm_asid_assign(&a, &c1, 1, 16), 2, &a); /* b holds ASID 1 on CPU 1 */
    assert_int_equal(a.cpu, 1);
    /* Back on CPU 0: its old ASID there may hold stale translations; a new one, flushed. */
    assert_fresh(svm_asid_assign(&a, &c0, 0, 16), 2, &a);
    assert_false(svm_asid_assign(&a, &c0, 0, 16).fresh);
}

/* vcpu_unload forgets the CPU: the next run takes a fresh ASID even on the same CPU. */
static void test_unload_forces_fresh(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = cpu_state();
    struct svm_asid_vcpu v = {.cpu = -1};
    svm_asid_assign(&v, &c0, 0, 16);
    v.cpu = -1;
    assert_fresh(svm_asid_assign(&v, &c0, 0, 16), 2, &v);
}

/* A CPU out of ASIDs starts a generation: ASIDs restart at 1 and older vCPUs re-assign. */
static void test_generation_rollover(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = cpu_state();
    struct svm_asid_vcpu v1 = {.cpu = -1}, v2 = {.cpu = -1}, v3 = {.cpu = -1};
    assert_fresh(svm_asid_assign(&v1, &c0, 0, 3), 1, &v1);
    assert_fresh(svm_asid_assign(&v2, &c0, 0, 3), 2, &v2);
    assert_fresh(svm_asid_assign(&v3, &c0, 0, 3), 1, &v3); /* ASIDs 1 and 2 only: rollover */
    assert_int_equal(c0.generation, 2);
    assert_fresh(svm_asid_assign(&v1, &c0, 0, 3), 2, &v1); /* from the old generation */
    assert_false(svm_asid_assign(&v3, &c0, 0, 3).fresh);
}

static void test_pause_filter_fields(void **state)
{
    (void)state;
    struct svm_pause_fields f = svm_pause_filter(PAUSE_EXIT_NEVER, 3000, 128, true);
    assert_false(f.intercept);
    f = svm_pause_filter(PAUSE_EXIT_EVERY, 3000, 128, true);
    assert_true(f.intercept);
    assert_int_equal(f.count, 0);
    assert_int_equal(f.thresh, 0);
    f = svm_pause_filter(PAUSE_EXIT_FILTERED, 3000, 128, true);
    assert_true(f.intercept);
    assert_int_equal(f.count, 3000);
    assert_int_equal(f.thresh, 128);
    /* Without a threshold: count-only filtering, as KVM does (Bochs ryzen). */
    f = svm_pause_filter(PAUSE_EXIT_FILTERED, 6000, 128, false);
    assert_int_equal(f.count, 6000);
    assert_int_equal(f.thresh, 0);
    /* The count is 16 bits. */
    f = svm_pause_filter(PAUSE_EXIT_FILTERED, 70000, 70000, true);
    assert_int_equal(f.count, 65535);
    assert_int_equal(f.thresh, 65535);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_cpu_keeps_asid),
        cmocka_unit_test(test_move_takes_fresh_asid_and_flushes),
        cmocka_unit_test(test_unload_forces_fresh),
        cmocka_unit_test(test_generation_rollover),
        cmocka_unit_test(test_pause_filter_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

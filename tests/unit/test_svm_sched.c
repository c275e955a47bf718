/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The SVM rules scheduling brings in (backend/svm/svm_sched.c): which ASID
 * a vCPU runs with as it moves between CPUs, what is flushed and which VMCB
 * clean bits are cleared, ASID generations, and the pause-filter fields.
 * No emulator here checks these (none keeps TLB entries per ASID: QEMU TCG
 * and Bochs flush or ignore them; none has clean bits or a pause-filter
 * threshold), so this is where they are tested.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backend/svm/svm_sched.h"

/* A fresh ASID for v; flushed: the wrap's TLB_CONTROL_FLUSH_ALL_ASID; moved: clean bits cleared. */
static void assert_fresh(struct svm_asid_entry e, const struct svm_asid_vcpu *v, uint32_t asid,
                         bool flushed, bool moved)
{
    assert_true(e.fresh);
    assert_int_equal(v->asid, asid);
    assert_int_equal(e.tlb_control, flushed ? SVM_TLB_FLUSH_ALL : 0);
    assert_int_equal(e.clear_clean, moved);
}

static void assert_kept(struct svm_asid_entry e, const struct svm_asid_vcpu *v, uint32_t asid)
{
    assert_false(e.fresh);
    assert_int_equal(e.tlb_control, 0);
    assert_false(e.clear_clean);
    assert_int_equal(v->asid, asid);
}

/*
 * A CPU's counter starts past its last ASID: the first ASID it gives wraps
 * and flushes what was cached before (before pollux, or another VM's).
 */
static void test_first_assignment_flushes(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = svm_asid_cpu_init(16);
    struct svm_asid_vcpu a = {.cpu = -1}, b = {.cpu = -1};
    assert_fresh(svm_asid_assign(&a, &c0, 0), &a, SVM_MIN_ASID, true, true);
    assert_int_equal(a.generation, c0.generation);
    assert_fresh(svm_asid_assign(&b, &c0, 0), &b, 2, false, true);
}

static void test_same_cpu_keeps_asid(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = svm_asid_cpu_init(16);
    struct svm_asid_vcpu v = {.cpu = -1};
    svm_asid_assign(&v, &c0, 0);
    for (unsigned i = 0; i < 3; i++)
        assert_kept(svm_asid_assign(&v, &c0, 0), &v, 1);
}

/*
 * A move: the next ASID of the new CPU, no flush (nothing there is tagged
 * with it since that CPU's wrap), clean bits cleared; coming back takes a
 * new ASID there too, never the old one, whose entries may be stale.
 */
static void test_move_takes_fresh_asid_without_flush(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = svm_asid_cpu_init(16), c1 = svm_asid_cpu_init(16);
    struct svm_asid_vcpu a = {.cpu = -1}, b = {.cpu = -1};
    svm_asid_assign(&a, &c0, 0);
    svm_asid_assign(&b, &c1, 1);
    assert_fresh(svm_asid_assign(&a, &c1, 1), &a, 2, false, true); /* b holds ASID 1 on CPU 1 */
    assert_int_equal(a.cpu, 1);
    assert_kept(svm_asid_assign(&a, &c1, 1), &a, 2);
    assert_fresh(svm_asid_assign(&a, &c0, 0), &a, 2, false, true);
    assert_kept(svm_asid_assign(&a, &c0, 0), &a, 2);
    assert_kept(svm_asid_assign(&b, &c1, 1), &b, 1); /* the moves flushed nothing of b's */
}

/* vcpu_unload or a reset forgets the CPU: a fresh ASID even on the same CPU, no flush. */
static void test_unload_forces_fresh(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = svm_asid_cpu_init(16);
    struct svm_asid_vcpu v = {.cpu = -1};
    svm_asid_assign(&v, &c0, 0);
    v.cpu = -1;
    assert_fresh(svm_asid_assign(&v, &c0, 0), &v, 2, false, true);
}

/*
 * ASIDs 1 and 2 only (3 counted, 0 the host's): the third assignment wraps,
 * bumps the generation and flushes every ASID; a vCPU of the old generation
 * gets a new ASID at its next run, without a flush of its own.
 */
static void test_wrap_flushes_and_renews_old_generation(void **state)
{
    (void)state;
    struct svm_asid_cpu c0 = svm_asid_cpu_init(3);
    struct svm_asid_vcpu v1 = {.cpu = -1}, v2 = {.cpu = -1}, v3 = {.cpu = -1};
    assert_fresh(svm_asid_assign(&v1, &c0, 0), &v1, 1, true, true);
    assert_fresh(svm_asid_assign(&v2, &c0, 0), &v2, 2, false, true);
    uint64_t before = c0.generation;
    assert_fresh(svm_asid_assign(&v3, &c0, 0), &v3, 1, true, true);
    assert_int_equal(c0.generation, before + 1);
    assert_fresh(svm_asid_assign(&v1, &c0, 0), &v1, 2, false, false); /* old generation */
    assert_int_equal(v1.generation, c0.generation);
    assert_kept(svm_asid_assign(&v3, &c0, 0), &v3, 1);
    assert_fresh(svm_asid_assign(&v2, &c0, 0), &v2, 1, true, false); /* the next wrap */
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
        cmocka_unit_test(test_first_assignment_flushes),
        cmocka_unit_test(test_same_cpu_keeps_asid),
        cmocka_unit_test(test_move_takes_fresh_asid_without_flush),
        cmocka_unit_test(test_unload_forces_fresh),
        cmocka_unit_test(test_wrap_flushes_and_renews_old_generation),
        cmocka_unit_test(test_pause_filter_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's TSC writes (vmm/vcpu/tsc_sync.c): KVM's matching of writes close
 * in time, generations, and kvmclock staying one clock across them
 * (vmm/dev/kvmclock.c's references).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/dev/kvmclock.h"
#include "vmm/vcpu/tsc_sync.h"

#define HZ        2500000000ull /* 2.5 GHz */
#define CREATED   1000000ull    /* host TSC at the VM's creation */
#define FAR_AHEAD (1ull << 40)

/* A VM of two vCPUs created at host TSC CREATED and CREATED + 10. */
static struct tsc_sync created(uint64_t gen[2], uint64_t offset[2])
{
    struct tsc_sync s = {0};
    offset[0] = tsc_synchronize(&s, &gen[0], 0, true, CREATED, HZ).offset;
    offset[1] = tsc_synchronize(&s, &gen[1], 0, true, CREATED + 10, HZ).offset;
    return s;
}

static void test_creation_matches_every_vcpu(void **state)
{
    (void)state;
    uint64_t gen[2] = {0}, offset[2];
    struct tsc_sync s = created(gen, offset);
    assert_int_equal(offset[0], -CREATED); /* the guest TSC read 0 at creation */
    assert_int_equal(offset[1], offset[0]);
    assert_int_equal(gen[0], 1);
    assert_int_equal(gen[1], 1);
    assert_true(tsc_sync_all_matched(&s, 2));
}

static void test_far_write_moves_the_writer_alone(void **state)
{
    (void)state;
    uint64_t gen[2] = {0}, offset[2];
    struct tsc_sync s = created(gen, offset);
    uint64_t host = CREATED + 5 * HZ, value = host + offset[1] + FAR_AHEAD;
    struct tsc_write w = tsc_synchronize(&s, &gen[1], value, false, host, HZ);
    assert_false(w.matched);
    assert_int_equal(w.offset, value - host);
    assert_int_equal(gen[1], 2);
    assert_int_equal(gen[0], 1); /* vCPU 0 keeps its generation and offset */
    assert_false(tsc_sync_all_matched(&s, 2));
}

static void test_close_write_joins_the_generation(void **state)
{
    (void)state;
    uint64_t gen[2] = {0}, offset[2];
    struct tsc_sync s = created(gen, offset);
    uint64_t host = CREATED + 5 * HZ, value = host + offset[1] + FAR_AHEAD;
    offset[1] = tsc_synchronize(&s, &gen[1], value, false, host, HZ).offset;
    /* vCPU 0 writes, 2 s later, the value vCPU 1's TSC has got to plus 0.9 s: matched. */
    uint64_t later = host + 2 * HZ;
    struct tsc_write w =
        tsc_synchronize(&s, &gen[0], value + 2 * HZ + HZ / 10 * 9, false, later, HZ);
    assert_true(w.matched);
    assert_int_equal(w.offset, offset[1]); /* the generation's offset, not the value's */
    assert_int_equal(gen[0], 2);
    assert_true(tsc_sync_all_matched(&s, 2));
    /* Matched again by a vCPU already in it: still two vCPUs, not three. */
    assert_true(tsc_synchronize(&s, &gen[0], value + 2 * HZ, false, later, HZ).matched);
    assert_true(tsc_sync_all_matched(&s, 2));
    assert_false(tsc_sync_all_matched(&s, 3));
}

static void test_window_is_one_second_either_side(void **state)
{
    (void)state;
    static const struct {
        int64_t from_expected;
        bool matched;
    } cases[] = {{0, true},
                 {(int64_t)HZ - 1, true},
                 {(int64_t)HZ, false},
                 {-(int64_t)HZ + 1, true},
                 {-(int64_t)HZ, false}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t gen[2] = {0}, offset[2];
        struct tsc_sync s = created(gen, offset);
        /* The last write was vCPU 1's creation: value 0 at CREATED + 10. */
        uint64_t host = CREATED + 10 + 3 * HZ;
        uint64_t value = 3 * HZ + (uint64_t)cases[i].from_expected;
        struct tsc_write w = tsc_synchronize(&s, &gen[0], value, false, host, HZ);
        assert_int_equal(w.matched, cases[i].matched);
        assert_int_equal(w.offset, cases[i].matched ? offset[1] : value - host);
    }
}

static void test_window_wraps(void **state)
{
    (void)state;
    uint64_t gen[2] = {0}, offset[2];
    struct tsc_sync s = created(gen, offset);
    uint64_t host = CREATED + 10 + HZ / 2;
    /* The guest moved its TSC to just below 2^64, then writes just past the wrap. */
    tsc_synchronize(&s, &gen[1], UINT64_MAX - 10, false, host, HZ);
    assert_true(tsc_synchronize(&s, &gen[0], 100, false, host + 10, HZ).matched);
    assert_false(tsc_synchronize(&s, &gen[0], HZ + 1000, false, host + 10, HZ).matched);
}

/* kvmclock on a vCPU of offset whose structure holds ref, at host TSC host. */
static uint64_t kvmclock_read(struct pvclock_ref ref, uint64_t offset, uint64_t host,
                              struct pvclock_scale sc)
{
    return ref.system_time + pvclock_scale_delta(host + offset - ref.tsc_timestamp, sc);
}

static void test_kvmclock_stays_one_clock(void **state)
{
    (void)state;
    struct pvclock_scale sc = pvclock_scale_for(HZ / 1000);
    uint64_t gen[2] = {0}, offset[2];
    struct tsc_sync s = created(gen, offset);
    uint64_t kvmclock_offset = offset[0];
    struct pvclock_ref first = pvclock_ref_at(CREATED, offset[0], kvmclock_offset, sc);
    assert_int_equal(first.tsc_timestamp, 0);
    assert_int_equal(first.system_time, 0);
    /* vCPU 1 jumps far ahead at 5 s; its generation's reference is taken then. */
    uint64_t host = CREATED + 5 * HZ;
    uint64_t before = kvmclock_read(first, offset[1], host, sc);
    offset[1] = tsc_synchronize(&s, &gen[1], host + offset[1] + FAR_AHEAD, false, host, HZ).offset;
    struct pvclock_ref second = pvclock_ref_at(host, offset[1], kvmclock_offset, sc);
    assert_int_equal(kvmclock_read(second, offset[1], host, sc), before);
    /* Both vCPUs read one clock afterwards, to within the scale's rounding. */
    for (uint64_t t = host; t < host + 3 * HZ; t += HZ / 7 + 12345) {
        uint64_t on0 = kvmclock_read(first, offset[0], t, sc);
        uint64_t on1 = kvmclock_read(second, offset[1], t, sc);
        assert_true(on0 - on1 + 1 <= 2); /* |on0 - on1| <= 1 ns */
        assert_true(on1 >= before);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creation_matches_every_vcpu),
        cmocka_unit_test(test_far_write_moves_the_writer_alone),
        cmocka_unit_test(test_close_write_joins_the_generation),
        cmocka_unit_test(test_window_is_one_second_either_side),
        cmocka_unit_test(test_window_wraps),
        cmocka_unit_test(test_kvmclock_stays_one_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

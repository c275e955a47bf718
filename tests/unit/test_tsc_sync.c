/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's TSC (vmm/vcpu/tsc_sync.c), KVM 6.1's rules: creation matches every
 * vCPU, a guest's IA32_TSC or IA32_TSC_ADJUST write moves its own vCPU
 * alone, and kvmclock stays one clock across them (vmm/dev/kvmclock.c).
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
static struct tsc_sync created(uint64_t offset[2], uint64_t adjust[2])
{
    struct tsc_sync s = {0};
    offset[0] = tsc_create(&s, CREATED);
    offset[1] = tsc_create(&s, CREATED + 10);
    adjust[0] = adjust[1] = 0;
    return s;
}

static void test_creation_matches_every_vcpu(void **state)
{
    (void)state;
    uint64_t offset[2], adjust[2];
    struct tsc_sync s = created(offset, adjust);
    assert_int_equal(offset[0], -CREATED); /* the guest TSC read 0 at creation */
    assert_int_equal(offset[1], offset[0]);
    assert_int_equal(s.offset, offset[0]);
    /* One created much later (hot-plug in KVM) still takes the VM's offset. */
    assert_int_equal(tsc_create(&s, CREATED + 1000 * HZ), offset[0]);
}

static void test_write_moves_its_vcpu_and_adjust(void **state)
{
    (void)state;
    uint64_t offset[2], adjust[2];
    created(offset, adjust);
    uint64_t host = CREATED + 5 * HZ, value = host + offset[1] + FAR_AHEAD;
    tsc_write(&offset[1], &adjust[1], value, host);
    assert_int_equal(host + offset[1], value); /* it reads what it wrote */
    assert_int_equal(adjust[1], FAR_AHEAD);    /* and TSC_ADJUST moved by the same step */
    assert_int_equal(offset[0], -CREATED);     /* vCPU 0 untouched */
    assert_int_equal(adjust[0], 0);
    /* A step back: TSC_ADJUST goes below 0 (two's complement, as the MSR reads). */
    tsc_write(&offset[1], &adjust[1], host + 2 * HZ + offset[0], host + 2 * HZ);
    assert_int_equal(offset[1], offset[0]);
    assert_int_equal(adjust[1], 0);
    tsc_write(&offset[1], &adjust[1], 0, host + 3 * HZ);
    assert_int_equal((int64_t)adjust[1], -(int64_t)(host + 3 * HZ + offset[0]));
}

static void test_close_write_is_not_matched(void **state)
{
    (void)state;
    uint64_t offset[2], adjust[2];
    created(offset, adjust);
    uint64_t host = CREATED + 5 * HZ, value = host + offset[1] + FAR_AHEAD;
    tsc_write(&offset[1], &adjust[1], value, host);
    /*
     * vCPU 0 writes, 2 s later, the value vCPU 1's TSC has got to plus 0.9 s:
     * KVM matched that once (kvm_write_tsc), 6.1 only from its userspace. The
     * write is taken as it is: vCPU 0 runs 0.9 s ahead of vCPU 1.
     */
    uint64_t later = host + 2 * HZ, v0 = value + 2 * HZ + HZ / 10 * 9;
    tsc_write(&offset[0], &adjust[0], v0, later);
    assert_int_equal(later + offset[0], v0);
    assert_int_equal(offset[0] - offset[1], HZ / 10 * 9);
    assert_int_equal(adjust[0], FAR_AHEAD + 2 * HZ + HZ / 10 * 9 - 2 * HZ);
}

static void test_adjust_write_moves_the_tsc_by_its_change(void **state)
{
    (void)state;
    uint64_t offset[2], adjust[2];
    created(offset, adjust);
    tsc_adjust_write(&offset[0], &adjust[0], 1000);
    assert_int_equal(adjust[0], 1000);
    assert_int_equal(offset[0], -CREATED + 1000);
    tsc_adjust_write(&offset[0], &adjust[0], 1000); /* the same value: no step */
    assert_int_equal(offset[0], -CREATED + 1000);
    tsc_adjust_write(&offset[0], &adjust[0], (uint64_t)-500);
    assert_int_equal(offset[0], -CREATED - 500);
    assert_int_equal(offset[1], -CREATED); /* the other vCPU's TSC stays */
    /*
     * Linux's way of bringing a package's TSCs together (arch/x86/kernel/
     * tsc_sync.c): vCPU 1 moved its TSC far, then writes vCPU 0's TSC_ADJUST
     * into its own; equal TSC_ADJUSTs are equal TSCs again.
     */
    tsc_write(&offset[1], &adjust[1], FAR_AHEAD, CREATED + HZ);
    tsc_adjust_write(&offset[1], &adjust[1], adjust[0]);
    assert_int_equal(offset[1], offset[0]);
}

/* kvmclock on a vCPU of offset, in a VM created with kvmclock_offset, at host TSC host. */
static uint64_t kvmclock_read(uint64_t offset, uint64_t kvmclock_offset, uint64_t host,
                              struct pvclock_scale sc)
{
    uint64_t tsc_timestamp = pvclock_tsc_timestamp(offset, kvmclock_offset);
    return pvclock_scale_delta(host + offset - tsc_timestamp, sc); /* system_time 0 */
}

static void test_kvmclock_stays_one_clock(void **state)
{
    (void)state;
    struct pvclock_scale sc = pvclock_scale_for(HZ / 1000);
    uint64_t offset[2], adjust[2];
    struct tsc_sync s = created(offset, adjust);
    assert_int_equal(pvclock_tsc_timestamp(offset[0], s.offset), 0);
    assert_int_equal(kvmclock_read(offset[0], s.offset, CREATED, sc), 0);
    /* vCPU 1 jumps far ahead at 5 s, vCPU 0 back below 0 at 6 s. */
    uint64_t host = CREATED + 5 * HZ;
    uint64_t before = kvmclock_read(offset[1], s.offset, host, sc);
    tsc_write(&offset[1], &adjust[1], host + offset[1] + FAR_AHEAD, host);
    assert_int_equal(kvmclock_read(offset[1], s.offset, host, sc), before);
    tsc_write(&offset[0], &adjust[0], (uint64_t)-HZ, host + HZ);
    /* Both read one clock afterwards, to the nanosecond: the stable flag is honest. */
    for (uint64_t t = host; t < host + 3 * HZ; t += HZ / 7 + 12345) {
        uint64_t on0 = kvmclock_read(offset[0], s.offset, t, sc);
        assert_int_equal(kvmclock_read(offset[1], s.offset, t, sc), on0);
        assert_true(on0 >= before);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creation_matches_every_vcpu),
        cmocka_unit_test(test_write_moves_its_vcpu_and_adjust),
        cmocka_unit_test(test_close_write_is_not_matched),
        cmocka_unit_test(test_adjust_write_moves_the_tsc_by_its_change),
        cmocka_unit_test(test_kvmclock_stays_one_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual interface as an unmodified guest sees it: hypercall
 * results, the feature leaf, and kvmclock (its MSRs and the pvclock
 * arithmetic, against a reference computed in 128-bit integers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "lib/bytes.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/dev/kvmclock.h"
#include "vmm/vm.h"

uint64_t tsc_khz = 2500000;

static void test_kvm_hypercalls_have_kvm_results(void **state)
{
    (void)state;
    assert_int_equal(kvm_pv_hypercall(KVM_HC_VAPIC_POLL_IRQ, 0), 0);
    assert_int_equal((int64_t)kvm_pv_hypercall(0, 0), -1000);
    assert_int_equal((int64_t)kvm_pv_hypercall(5, 0), -1000); /* KICK_CPU: not offered */
    assert_int_equal((int64_t)kvm_pv_hypercall(KVM_HC_VAPIC_POLL_IRQ, 3), -1);
    assert_int_equal((int64_t)kvm_pv_hypercall(0, 3), -1);
}

static void test_feature_leaf_names_what_is_implemented(void **state)
{
    (void)state;
    struct cpuid_regs r;
    assert_true(kvm_pv_cpuid(KVM_CPUID_FEATURES, &r));
    assert_int_equal(r.eax, (1u << 3) | (1u << 12) | (1u << 24));
    assert_int_equal(r.ebx | r.ecx | r.edx, 0);
}

/* What the guest computes, in exact arithmetic. */
static uint64_t reference_ns(uint64_t delta, uint64_t khz)
{
    return (uint64_t)((unsigned __int128)delta * 1000000 / khz);
}

static void test_pvclock_scale_matches_the_reference(void **state)
{
    (void)state;
    static const uint64_t rates[] = {1000,    100000,  999999,  1000000,
                                     1000001, 2500000, 3600123, 5000000};
    static const uint64_t deltas[] = {0, 1, 1000, 123456789, 1ull << 40, 3ull << 50};
    for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        struct pvclock_scale s = pvclock_scale_for(rates[i]);
        assert_true(s.mul >= 1u << 31);
        for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++) {
            uint64_t got = pvclock_scale_delta(deltas[j], s),
                     want = reference_ns(deltas[j], rates[i]);
            uint64_t diff = got > want ? got - want : want - got;
            /* mul is rounded down: at most one part in 2^31, plus a nanosecond of truncation. */
            assert_true(diff <= want / (1u << 30) + 1);
        }
    }
    /* 2.5 GHz: halve the ticks, then 0.8 of 2^32. */
    struct pvclock_scale s = pvclock_scale_for(2500000);
    assert_int_equal(s.shift, -1);
    assert_int_equal(s.mul, 3435973836u);
    /* 1 MHz: doubled ten times into (1e9, 2e9], to 1.024 GHz. */
    s = pvclock_scale_for(1000);
    assert_int_equal(s.shift, 10);
    assert_int_equal(s.mul, 4194304000u);
}

static uint8_t guest_mem[1 << 16];

static void test_system_time_msr_writes_the_structure(void **state)
{
    (void)state;
    static struct vm vm;
    static struct vcpu v;
    vm.hw.mem = guest_mem;
    vm.cfg.mem = sizeof(guest_mem);
    vm.hw.mem_size = sizeof(guest_mem);
    v.vm = &vm;
    memset(guest_mem, 0xee, sizeof(guest_mem));

    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, 0x1000 | 1), MSR_DONE);
    uint8_t *p = guest_mem + 0x1000;
    assert_int_equal(get_le32(p), 2); /* even: complete */
    assert_int_equal(get_le64(p + 8), 0);
    assert_int_equal(get_le64(p + 16), 0);
    struct pvclock_scale s = pvclock_scale_for(tsc_khz);
    assert_int_equal(get_le32(p + 24), s.mul);
    assert_int_equal((int8_t)p[28], s.shift);
    assert_int_equal(p[29], PVCLOCK_TSC_STABLE_BIT);
    uint64_t value;
    assert_int_equal(kvm_pv_msr_read(&v, MSR_KVM_SYSTEM_TIME_NEW, &value), MSR_DONE);
    assert_int_equal(value, 0x1001);

    /* Enabled again: the version moves on by two. Disabled: memory is left alone. */
    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, 0x1000 | 1), MSR_DONE);
    assert_int_equal(get_le32(p), 4);
    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, 0x2000), MSR_DONE);
    assert_int_equal(guest_mem[0x2000], 0xee);
    /* Outside guest RAM: accepted and ignored, as KVM does. */
    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, sizeof(guest_mem) - 8 + 1),
                     MSR_DONE);

    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_WALL_CLOCK_NEW, 0x3000), MSR_DONE);
    assert_int_equal(get_le32(guest_mem + 0x3000), 2);
    assert_int_equal(get_le32(guest_mem + 0x3004), 0);
    assert_int_equal(get_le32(guest_mem + 0x3008), 0);
    assert_int_equal(kvm_pv_msr_read(&v, MSR_KVM_WALL_CLOCK_NEW, &value), MSR_DONE);
    assert_int_equal(value, 0x3000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kvm_hypercalls_have_kvm_results),
        cmocka_unit_test(test_feature_leaf_names_what_is_implemented),
        cmocka_unit_test(test_pvclock_scale_matches_the_reference),
        cmocka_unit_test(test_system_time_msr_writes_the_structure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

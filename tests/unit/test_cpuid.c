/* The guest's CPUID filter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "vmm/cpuid.h"
#include "vmm/hypercall.h"

static const struct cpuid_view view = {.vcpu_id = 3,
                                       .nvcpus = 4,
                                       .guest_cr4 = 0,
                                       .tsc_khz = 2500000,
                                       .apic_timer_khz = 1000,
                                       .xcr0_supported = 0x7};

static void test_leaf1_hides_virtualization_and_sets_hypervisor(void **state)
{
    (void)state;
    struct cpuid_regs r = {0x000806f0, 0xff0a0800, 0xfffa3223, 0xffffffff};
    struct cpuid_regs bare = {0x000806f0, 0x00000800, 0x80000000, 0x00000000};
    cpuid_filter(1, 0, &view, &bare);
    assert_true(bare.ecx & (1u << 21) && bare.ecx & (1u << 24) && bare.edx & (1u << 9));
    cpuid_filter(1, 0, &view, &r);
    assert_false(r.ecx & (1u << 5));  /* VMX */
    assert_false(r.ecx & (1u << 3));  /* MONITOR */
    assert_false(r.ecx & (1u << 27)); /* OSXSAVE follows the guest's CR4 */
    assert_true(r.ecx & (1u << 31));  /* hypervisor */
    assert_true(r.edx & (1u << 9));   /* the virtual local APIC */
    assert_true(r.ecx & (1u << 21));  /* with x2APIC */
    assert_true(r.ecx & (1u << 24));  /* and the TSC-deadline timer, whatever the host has */
    assert_int_equal(r.ebx >> 24, 3); /* initial APIC ID = vCPU id */
    assert_int_equal((r.ebx >> 16) & 0xff, 4);
    assert_int_equal(r.ebx & 0xffff, 0x0800); /* brand index, CLFLUSH size kept */

    struct cpuid_view osxsave = view;
    osxsave.guest_cr4 = 1u << 18;
    r = (struct cpuid_regs){0, 0, 1u << 26, 0};
    cpuid_filter(1, 0, &osxsave, &r);
    assert_true(r.ecx & (1u << 27));
}

static void test_svm_hidden(void **state)
{
    (void)state;
    struct cpuid_regs r = {0, 0, 0xffffffff, 0xffffffff};
    cpuid_filter(0x80000001, 0, &view, &r);
    assert_false(r.ecx & (1u << 2));
    assert_false(r.edx & (1u << 27)); /* RDTSCP */
    assert_true(r.edx & (1u << 29));  /* long mode stays */
    r = (struct cpuid_regs){1, 16, 0, 0x10010001};
    cpuid_filter(0x8000000a, 0, &view, &r);
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
}

static void test_pollux_leaves(void **state)
{
    (void)state;
    struct cpuid_regs r = {1, 2, 3, 4};
    cpuid_filter(POLLUX_CPUID_BASE, 0, &view, &r);
    assert_int_equal(r.eax, POLLUX_CPUID_TIMING);
    char sig[13] = {0};
    memcpy(sig, &r.ebx, 4);
    memcpy(sig + 4, &r.ecx, 4);
    memcpy(sig + 8, &r.edx, 4);
    assert_string_equal(sig, "pollux");
    r = (struct cpuid_regs){1, 2, 3, 4};
    cpuid_filter(POLLUX_CPUID_TIMING, 0, &view, &r);
    assert_int_equal(r.eax, 2500000);
    assert_int_equal(r.ebx, 1000);
    r = (struct cpuid_regs){1, 2, 3, 4};
    cpuid_filter(POLLUX_CPUID_BASE + 5, 0, &view, &r);
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
}

static void test_pmu_and_power_zeroed(void **state)
{
    (void)state;
    const uint32_t leaves[] = {5, 6, 0xa};
    for (size_t i = 0; i < 3; i++) {
        struct cpuid_regs r = {~0u, ~0u, ~0u, ~0u};
        cpuid_filter(leaves[i], 0, &view, &r);
        assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
    }
}

static void test_topology_describes_the_vm(void **state)
{
    (void)state;
    struct cpuid_regs r = {0};
    cpuid_filter(0xb, 0, &view, &r);
    assert_int_equal(r.ebx, 1);
    assert_int_equal(r.edx, 3);
    cpuid_filter(0xb, 1, &view, &r);
    assert_int_equal(r.eax, 2); /* 4 vCPUs: 2 bits of APIC ID */
    assert_int_equal(r.ebx, 4);
    assert_int_equal(r.ecx, (2u << 8) | 1);
    cpuid_filter(0xb, 2, &view, &r);
    assert_int_equal(r.ebx, 0);
    assert_int_equal(r.ecx, 2);
}

static void test_xsave_components_limited(void **state)
{
    (void)state;
    struct cpuid_regs r = {0xe7, 0x988, 0xa88, 0};
    cpuid_filter(0xd, 0, &view, &r);
    assert_int_equal(r.eax, 0x7); /* no AVX-512 state offered */
    assert_int_equal(r.edx, 0);
    r = (struct cpuid_regs){0xf, 0, 0, 0};
    cpuid_filter(0xd, 1, &view, &r);
    assert_int_equal(r.eax, 0x7); /* XSAVES hidden, XSAVEOPT/XSAVEC/XGETBV1 kept */
}

static void test_leaf7_hides_unvirtualized(void **state)
{
    (void)state;
    struct cpuid_regs r = {0, ~0u, ~0u, ~0u};
    cpuid_filter(7, 0, &view, &r);
    assert_false(r.ebx & (1u << 2));  /* SGX */
    assert_false(r.ebx & (1u << 25)); /* processor trace */
    assert_false(r.ecx & (1u << 5));  /* WAITPKG */
    assert_false(r.ecx & (1u << 22)); /* RDPID: IA32_TSC_AUX is not per vCPU */
    assert_true(r.ebx & (1u << 0));   /* FSGSBASE stays */
    r = (struct cpuid_regs){0, ~0u, ~0u, ~0u};
    cpuid_filter(7, 1, &view, &r);
    assert_int_equal(r.ebx, ~0u); /* other subleaves untouched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaf1_hides_virtualization_and_sets_hypervisor),
        cmocka_unit_test(test_svm_hidden),
        cmocka_unit_test(test_pollux_leaves),
        cmocka_unit_test(test_pmu_and_power_zeroed),
        cmocka_unit_test(test_topology_describes_the_vm),
        cmocka_unit_test(test_xsave_components_limited),
        cmocka_unit_test(test_leaf7_hides_unvirtualized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

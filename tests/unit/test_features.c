/* SPDX-License-Identifier: GPL-2.0-only */
/* Virtualization backend decision from recorded CPUID and MSR values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "arch/x86/features.h"

/* QEMU 7.2 TCG -cpu max: 8000_000A EDX = NP + VGIF + VMCB-address check. */
static struct cpu_raw qemu_tcg(void)
{
    struct cpu_raw r = {.ext1_ecx = 1u << 2, .svm_ebx = 16, .svm_edx = 0x10010001};
    return r;
}

/* Modelled on Bochs corei7_skylake_x (VMX_BASIC, pin-based and MISC as read from it). */
static struct cpu_raw bochs_skylake(void)
{
    struct cpu_raw r = {
        .leaf1_ecx = (1u << 5) | (1u << 21) | (1u << 24),
        .feature_control = 0,
        .vmx_basic = 0xd810000000002bull,
        .vmx_pinbased = 0x7f00000016ull,
        .vmx_procbased = 0xfff9fffe04006172ull,
        .vmx_procbased2 = 0x0000f7ff00000000ull,
        .vmx_ept_vpid_cap = 0xf0106f34141ull,
        .vmx_misc = 0x600401e0,
    };
    return r;
}

static void test_qemu_tcg_is_svm_without_nrips(void **state)
{
    (void)state;
    struct cpu_raw r = qemu_tcg();
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_SVM);
    assert_string_equal(virt_backend_name(f.backend), "svm");
    assert_true(f.npt);
    assert_true(f.vgif);
    assert_false(f.nrips);
    assert_false(f.pause_filter);
    assert_false(f.idle_hlt);
    assert_int_equal(f.svm_asids, 16);
}

static void test_svm_feature_bits(void **state)
{
    (void)state;
    struct cpu_raw r = qemu_tcg();
    r.svm_edx = (1u << 0) | (1u << 3) | (1u << 10) | (1u << 12) | (1u << 30);
    struct virt_features f;
    features_decode(&r, &f);
    assert_true(f.nrips);
    assert_true(f.pause_filter);
    assert_true(f.pause_filter_thresh);
    assert_true(f.idle_hlt);
    assert_false(f.vgif);
}

static void test_svm_without_npt_is_none(void **state)
{
    (void)state;
    struct cpu_raw r = qemu_tcg();
    r.svm_edx = 1u << 3;
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_NONE);
    assert_non_null(strstr(f.reason, "nested paging"));
}

/* ASID 0 is the host's: a CPU that counts one ASID or none has none for a guest. */
static void test_svm_without_guest_asid_is_none(void **state)
{
    (void)state;
    struct cpu_raw r = qemu_tcg();
    struct virt_features f;
    r.svm_ebx = 2;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_SVM);
    r.svm_ebx = 1;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_NONE);
    assert_non_null(strstr(f.reason, "ASID"));
}

static void test_svm_disabled_by_firmware(void **state)
{
    (void)state;
    struct cpu_raw r = qemu_tcg();
    r.vm_cr = (1u << 4) | (1u << 3);
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_NONE);
    assert_non_null(strstr(f.reason, "firmware"));
}

static void test_bochs_skylake_is_vmx(void **state)
{
    (void)state;
    struct cpu_raw r = bochs_skylake();
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_VMX);
    assert_true(f.ept);
    assert_true(f.vpid);
    assert_true(f.unrestricted_guest);
    assert_true(f.ple);
    assert_true(f.preemption_timer);
    assert_true(f.true_controls);
    assert_true(f.x2apic);
    assert_true(f.tsc_deadline);
    assert_int_equal(f.preemption_timer_shift, 0);
}

static void test_vmx_without_unrestricted_guest_is_none(void **state)
{
    (void)state;
    struct cpu_raw r = bochs_skylake();
    r.vmx_procbased2 &= ~(1ull << (32 + 7));
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_NONE);
    assert_non_null(strstr(f.reason, "unrestricted guest"));
}

static void test_vmx_without_secondary_controls_has_no_ept(void **state)
{
    (void)state;
    struct cpu_raw r = bochs_skylake();
    r.vmx_procbased &= ~(1ull << 63);
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_NONE);
    assert_false(f.ept);
    assert_false(f.ple);
    assert_non_null(strstr(f.reason, "EPT"));
}

static void test_vmx_locked_off_by_firmware(void **state)
{
    (void)state;
    struct cpu_raw r = bochs_skylake();
    r.feature_control = 1; /* locked, VMXON outside SMX not allowed */
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_NONE);
    assert_non_null(strstr(f.reason, "firmware"));
    r.feature_control = 1 | 4;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_VMX);
}

static void test_vmx_ept_needs_wb_and_4_levels(void **state)
{
    (void)state;
    struct cpu_raw r = bochs_skylake();
    r.vmx_ept_vpid_cap &= ~(1ull << 14);
    struct virt_features f;
    features_decode(&r, &f);
    assert_false(f.ept);
    assert_int_equal(f.backend, VIRT_NONE);
}

/* The instructions a guest may execute, which the CPUID policy's exec.* rows follow. */
static void test_guest_instructions(void **state)
{
    (void)state;
    struct cpu_raw r = bochs_skylake();
    r.vmx_procbased2 |= 1ull << (32 + 20); /* "enable XSAVES/XRSTORS" */
    struct virt_features f;
    features_decode(&r, &f);
    assert_true(f.guest_rdtscp && f.guest_invpcid && f.guest_xsaves);
    r.vmx_procbased2 &= ~(1ull << (32 + 12)); /* no "enable INVPCID" */
    features_decode(&r, &f);
    assert_false(f.guest_invpcid);
    assert_true(f.guest_rdtscp && f.guest_xsaves);
    r.vmx_procbased2 &= ~((1ull << (32 + 3)) | (1ull << (32 + 20)));
    features_decode(&r, &f);
    assert_false(f.guest_rdtscp || f.guest_xsaves);
    r = qemu_tcg(); /* SVM intercepts none of them */
    features_decode(&r, &f);
    assert_true(f.guest_rdtscp && f.guest_invpcid && f.guest_xsaves);
}

static void test_no_virtualization(void **state)
{
    (void)state;
    struct cpu_raw r = {0};
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_NONE);
    assert_string_equal(virt_backend_name(f.backend), "none");
    assert_true(strlen(f.reason) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qemu_tcg_is_svm_without_nrips),
        cmocka_unit_test(test_svm_feature_bits),
        cmocka_unit_test(test_svm_without_npt_is_none),
        cmocka_unit_test(test_svm_without_guest_asid_is_none),
        cmocka_unit_test(test_svm_disabled_by_firmware),
        cmocka_unit_test(test_bochs_skylake_is_vmx),
        cmocka_unit_test(test_vmx_without_unrestricted_guest_is_none),
        cmocka_unit_test(test_vmx_without_secondary_controls_has_no_ept),
        cmocka_unit_test(test_vmx_locked_off_by_firmware),
        cmocka_unit_test(test_vmx_ept_needs_wb_and_4_levels),
        cmocka_unit_test(test_guest_instructions),
        cmocka_unit_test(test_no_virtualization),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* Virtualization backend decision from recorded CPUID and MSR values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "arch/x86/features.h"
#include "backend/svm/svm_sched.h"
#include "sched/spin.h"

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

/* A KVM guest's CPUID.1:ECX[31] and signature leaves (kvm_cpuid: "KVMKVMKVM\0\0\0"). */
static void as_kvm_guest(struct cpu_raw *r, uint32_t features)
{
    r->leaf1_ecx |= 1u << 31;
    r->hv_base = 0x40000000;
    r->hv_max_leaf = 0x40000001;
    memcpy(r->hv_signature, "KVMKVMKVM\0\0\0", 13);
    r->hv_features = features;
}

/*
 * KVM's nested SVM as an L1 reads CPUID 8000_000A (kvm_set_cpu_caps,
 * svm_set_cpu_caps): revision 1, 8 ASIDs, and EDX by kernel. Before its
 * pause-filter support (Linux 5.10): NPT, NRIPS, VMCB-address check. A
 * recent kernel on a Zen 3 host: LBRV, TSC rate, VMCB clean, FlushByASID,
 * PauseFilter and its threshold, VMSAVE/VMLOAD virtualization, vGIF too.
 */
#define KVM_SVM_OLD 0x10000009u
#define KVM_SVM_NEW 0x1001947bu

static struct cpu_raw kvm_nested_svm(uint32_t edx)
{
    struct cpu_raw r = {.leaf1_ecx = (1u << 21) | (1u << 24),
                        .ext1_ecx = 1u << 2,
                        .svm_eax = 1,
                        .svm_ebx = 8,
                        .svm_edx = edx};
    memcpy(r.vendor, "AuthenticAMD", 13);
    as_kvm_guest(&r, (1u << 3) | (1u << 5) | (1u << 24));
    return r;
}

static void test_l0_kvm_nested_svm(void **state)
{
    (void)state;
    struct cpu_raw r = kvm_nested_svm(KVM_SVM_OLD);
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_SVM);
    assert_int_equal(f.l0, L0_KVM);
    assert_string_equal(l0_name(f.l0), "kvm");
    assert_true(f.l0_steal_time);
    assert_true(f.npt && f.nrips);
    assert_false(f.pause_filter || f.flush_by_asid || f.vmcb_clean);
    assert_false(f.pause_filter_by_l0); /* no filter: every PAUSE exits, as pollux asks */
    r = kvm_nested_svm(KVM_SVM_NEW);
    features_decode(&r, &f);
    assert_true(f.pause_filter && f.pause_filter_thresh && f.flush_by_asid && f.vmcb_clean &&
                f.vgif);
    assert_false(f.idle_hlt || f.decode_assists);
    assert_true(f.pause_filter_by_l0);
    assert_int_equal(f.svm_asids, 8);
}

/* The same bits under another L0 (or none) are the CPU's own. */
static void test_l0_other_or_none(void **state)
{
    (void)state;
    struct cpu_raw r = kvm_nested_svm(KVM_SVM_NEW);
    struct virt_features f;
    memcpy(r.hv_signature, "VMwareVMware", 13);
    features_decode(&r, &f);
    assert_int_equal(f.l0, L0_VMWARE);
    assert_false(f.l0_steal_time || f.pause_filter_by_l0);
    memcpy(r.hv_signature, "XenVMMXenVMM", 13);
    features_decode(&r, &f);
    assert_int_equal(f.l0, L0_OTHER);
    assert_string_equal(l0_name(f.l0), "other");
    r.leaf1_ecx &= ~(1u << 31); /* Bochs: no hypervisor bit, whatever the leaves say */
    memcpy(r.hv_signature, "KVMKVMKVM\0\0\0", 13);
    features_decode(&r, &f);
    assert_int_equal(f.l0, L0_NONE);
    assert_false(f.l0_steal_time || f.pause_filter_by_l0);
    r = kvm_nested_svm(KVM_SVM_OLD);
    r.hv_features = 1u << 3; /* kvmclock only: no steal time */
    features_decode(&r, &f);
    assert_int_equal(f.l0, L0_KVM);
    assert_false(f.l0_steal_time);
}

/*
 * What pollux derives under each: old KVM gives no pause filter, so every
 * PAUSE exits and the software detector counts them, flushes take a new
 * ASID; new KVM gives the filter with its threshold, so pollux asks for
 * filtered exits (whose count and threshold KVM replaces with its own unless
 * it runs with pause-in-guest), flushes by ASID. Both have 7 guest ASIDs.
 */
static void test_kvm_nested_svm_derived(void **state)
{
    (void)state;
    struct spin_params p = SPIN_PARAMS_KVM;
    struct spin_choice c;
    struct virt_features f;
    struct cpu_raw r = kvm_nested_svm(KVM_SVM_OLD);
    features_decode(&r, &f);
    assert_int_equal(svm_pause_hw_of(&f), PAUSE_HW_EVERY);
    spin_choose(&p, svm_pause_hw_of(&f), true, 3000000, &c);
    assert_int_equal(c.detector, SPIN_DETECT_SOFTWARE);
    assert_int_equal(c.mode, PAUSE_EXIT_EVERY);
    struct svm_pause_fields pf = svm_pause_filter(c.mode, 0, 0, f.pause_filter_thresh);
    assert_true(pf.intercept);
    assert_int_equal(pf.count, 0);
    assert_int_equal(svm_flush_tlb_control(&f), SVM_TLB_FLUSH_NEW_ASID);

    r = kvm_nested_svm(KVM_SVM_NEW);
    features_decode(&r, &f);
    assert_int_equal(svm_pause_hw_of(&f), PAUSE_HW_FILTER_THRESH);
    spin_choose(&p, svm_pause_hw_of(&f), true, 3000000, &c);
    assert_int_equal(c.detector, SPIN_DETECT_PAUSE_FILTER);
    assert_int_equal(c.mode, PAUSE_EXIT_FILTERED);
    assert_false(c.count_only);
    pf = svm_pause_filter(c.mode, (uint32_t)c.window->base, c.gap, f.pause_filter_thresh);
    assert_true(pf.intercept);
    assert_int_equal(pf.count, 3000);
    assert_int_equal(pf.thresh, 128);
    assert_int_equal(svm_flush_tlb_control(&f), SVM_TLB_FLUSH_ASID);

    /* ASIDs 1-7, then a wrap that flushes them all. */
    struct svm_asid_cpu cpu = svm_asid_cpu_init(f.svm_asids);
    struct svm_asid_vcpu v[8];
    for (unsigned i = 0; i < 8; i++) {
        v[i] = (struct svm_asid_vcpu){.cpu = -1};
        struct svm_asid_entry e = svm_asid_assign(&v[i], &cpu, 0);
        assert_int_equal(v[i].asid, i < 7 ? i + 1 : 1);
        assert_int_equal(e.tlb_control, i == 0 || i == 7 ? SVM_TLB_FLUSH_ALL : 0);
    }
}

/* Intel under KVM: the hypervisor bit and signature, VMX with KVM's nested controls. */
static void test_l0_kvm_nested_vmx(void **state)
{
    (void)state;
    struct cpu_raw r = bochs_skylake();
    r.vmx_procbased2 &= ~(1ull << (32 + 10)); /* KVM offers no PAUSE-loop exiting */
    r.vmx_misc = 0x20000165;                  /* the emulated preemption timer's rate 5 */
    as_kvm_guest(&r, 1u << 5);
    struct virt_features f;
    features_decode(&r, &f);
    assert_int_equal(f.backend, VIRT_VMX);
    assert_int_equal(f.l0, L0_KVM);
    assert_false(f.ple);
    assert_true(f.preemption_timer);
    assert_int_equal(f.preemption_timer_shift, 5);
    assert_false(f.pause_filter_by_l0);
    assert_true(f.l0_steal_time);
}

/* ------------------------------------------------------------ TSC rate from CPUID */

static void test_tsc_bochs_claims_rejected(void **state)
{
    (void)state;
    /* Bochs corei7_skylake_x: 0x15 = {2, 0x124, 0}, 0x16 = 3500 MHz; its TSC runs at 100 MHz. */
    struct cpu_raw r = bochs_skylake();
    r.leaf15_eax = 2;
    r.leaf15_ebx = 0x124;
    r.leaf16_eax = 3500;
    /* It answers unknown leaves with 0x16's data, but sets no hypervisor bit. */
    r.hv_max_leaf = 3500;
    r.hv_tsc_khz = 3500;
    struct tsc_claim c;
    tsc_claim_from_cpuid(&r, 100000, &c);
    assert_false(c.accepted);
    assert_string_equal(c.leaf, "0x16");
    assert_int_equal(c.khz, 3500000);
}

static void test_tsc_cpuid_within_one_percent(void **state)
{
    (void)state;
    struct cpu_raw r = {0};
    struct tsc_claim c;
    tsc_claim_from_cpuid(&r, 2995000, &c);
    assert_false(c.accepted);
    assert_string_equal(c.leaf, "");
    assert_int_equal(c.khz, 0);
    /* A Skylake client: a 24 MHz crystal times 250/2 = 3000 MHz. */
    r.leaf15_eax = 2;
    r.leaf15_ebx = 250;
    r.leaf15_ecx = 24000000;
    r.leaf16_eax = 3000;
    tsc_claim_from_cpuid(&r, 2995000, &c);
    assert_true(c.accepted);
    assert_string_equal(c.leaf, "0x15");
    assert_int_equal(c.khz, 3000000);
    tsc_claim_from_cpuid(&r, 2960000, &c); /* 1.35% off: the PIT's figure is used */
    assert_false(c.accepted);
    assert_string_equal(c.leaf, "0x15");
    /* 0x15 wrong, 0x16 right: the next leaf is tried. */
    r.leaf15_ecx = 25000000;
    tsc_claim_from_cpuid(&r, 2999000, &c);
    assert_true(c.accepted);
    assert_string_equal(c.leaf, "0x16");
}

/*
 * Under KVM with a TSC of its own rate (tsc-frequency=, or migrated), 0x15
 * and 0x16 are the host's while 0x40000010 is the guest's: it is tried
 * first, and only behind a known signature.
 */
static void test_tsc_hypervisor_leaf(void **state)
{
    (void)state;
    struct cpu_raw r = {.max_leaf = 0x16,
                        .leaf16_eax = 3000,
                        .leaf15_eax = 2,
                        .leaf15_ebx = 250,
                        .leaf15_ecx = 24000000};
    as_kvm_guest(&r, 0);
    r.hv_max_leaf = 0x40000010;
    r.hv_tsc_khz = 2100000;
    struct tsc_claim c;
    tsc_claim_from_cpuid(&r, 2099000, &c);
    assert_true(c.accepted);
    assert_string_equal(c.leaf, "0x40000010");
    assert_int_equal(c.khz, 2100000);
    /* A signature that does not define the leaf: ignored. */
    memcpy(r.hv_signature, "Microsoft Hv", 13);
    tsc_claim_from_cpuid(&r, 2099000, &c);
    assert_false(c.accepted);
    assert_string_equal(c.leaf, "0x15");
    /* The leaf beyond the hypervisor's last one: ignored. */
    memcpy(r.hv_signature, "KVMKVMKVM\0\0\0", 13);
    r.hv_max_leaf = 0x40000001;
    tsc_claim_from_cpuid(&r, 2099000, &c);
    assert_string_equal(c.leaf, "0x15");
    /* With the hypervisor bit clear nothing is believed of those leaves. */
    r.hv_max_leaf = 0x40000010;
    r.leaf1_ecx = 0;
    tsc_claim_from_cpuid(&r, 2099000, &c);
    assert_string_equal(c.leaf, "0x15");
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
        cmocka_unit_test(test_l0_kvm_nested_svm),
        cmocka_unit_test(test_l0_other_or_none),
        cmocka_unit_test(test_kvm_nested_svm_derived),
        cmocka_unit_test(test_l0_kvm_nested_vmx),
        cmocka_unit_test(test_tsc_bochs_claims_rejected),
        cmocka_unit_test(test_tsc_cpuid_within_one_percent),
        cmocka_unit_test(test_tsc_hypervisor_leaf),
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

/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's CPUID filter, built from the policy table of docs/cpuid.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "vmm/exit/cpuid.h"
#include "vmm/exit/hypercall.h"

uint64_t tsc_khz = 2500000; /* vmm/dev/kvm_pv.c's kvmclock reads it */

#define ALL_EXEC (CPUID_EXEC_RDTSCP | CPUID_EXEC_INVPCID | CPUID_EXEC_XSAVES)

static const struct cpuid_view view = {.vcpu_id = 3,
                                       .nvcpus = 4,
                                       .guest_cr4 = 0,
                                       .apic_enabled = true,
                                       .exec = ALL_EXEC,
                                       .max_leaf = 0x16,
                                       .max_ext_leaf = 0x80000008,
                                       .tsc_khz = 2500000,
                                       .apic_timer_khz = 1000,
                                       .xcr0_supported = 0x7,
                                       .xsave_size = 0x340};

static struct cpuid_regs filter(uint32_t leaf, uint32_t subleaf, const struct cpuid_view *v,
                                struct cpuid_regs r)
{
    cpuid_filter(leaf, subleaf, v, &r);
    return r;
}

static const struct cpuid_regs ONES = {~0u, ~0u, ~0u, ~0u};

static void test_leaf1_hides_virtualization_and_sets_hypervisor(void **state)
{
    (void)state;
    struct cpuid_regs bare = filter(1, 0, &view, (struct cpuid_regs){0x806f0, 0x800, 0, 0});
    assert_true(bare.ecx & (1u << 21) && bare.ecx & (1u << 24) && bare.edx & (1u << 9));
    assert_true(bare.ecx & (1u << 31));
    struct cpuid_regs r = filter(1, 0, &view, (struct cpuid_regs){0x806f0, 0xff0a0800, ~0u, ~0u});
    assert_int_equal(r.eax, 0x806f0);
    assert_false(r.ecx & (1u << 5));  /* VMX */
    assert_false(r.ecx & (1u << 3));  /* MONITOR */
    assert_false(r.ecx & (1u << 15)); /* PDCM */
    assert_false(r.ecx & (1u << 16)); /* reserved: everything the table does not allow is 0 */
    assert_false(r.ecx & (1u << 27)); /* OSXSAVE follows the guest's CR4, which has it clear */
    assert_true(r.ecx & (1u << 26));  /* XSAVE */
    assert_true(r.edx & (1u << 12));  /* MTRR: KVM's model (vmm/dev/pc_msr_state.h) */
    assert_false(r.edx & (1u << 10)); /* reserved */
    assert_int_equal(r.ebx >> 24, 3); /* initial APIC ID = vCPU id */
    assert_int_equal((r.ebx >> 16) & 0xff, 4);
    assert_int_equal(r.ebx & 0xffff, 0x0800); /* brand index, CLFLUSH size kept */
}

static void test_state_dependent_bits(void **state)
{
    (void)state;
    struct cpuid_view v = view;
    v.guest_cr4 = (1u << 18) | (1u << 22);
    assert_true(filter(1, 0, &v, ONES).ecx & (1u << 27));
    assert_true(filter(7, 0, &v, ONES).ecx & (1u << 4)); /* OSPKE */
    assert_false(filter(7, 0, &view, ONES).ecx & (1u << 4));
    /* The APIC bit follows IA32_APIC_BASE.EN, in both places it appears. */
    assert_true(filter(1, 0, &view, ONES).edx & (1u << 9));
    assert_true(filter(0x80000001, 0, &view, ONES).edx & (1u << 9));
    v.apic_enabled = false;
    assert_false(filter(1, 0, &v, ONES).edx & (1u << 9));
    assert_false(filter(0x80000001, 0, &v, ONES).edx & (1u << 9));
}

static void test_instructions_the_backend_may_refuse(void **state)
{
    (void)state;
    struct cpuid_view v = view;
    assert_true(filter(7, 0, &v, ONES).ebx & (1u << 10));          /* INVPCID */
    assert_true(filter(7, 0, &v, ONES).ecx & (1u << 22));          /* RDPID */
    assert_true(filter(0x80000001, 0, &v, ONES).edx & (1u << 27)); /* RDTSCP */
    assert_true(filter(0xd, 1, &v, ONES).eax & (1u << 3));         /* XSAVES */
    /* A VMX CPU without "enable INVPCID": INVPCID would raise #UD, so it is hidden. */
    v.exec = CPUID_EXEC_RDTSCP | CPUID_EXEC_XSAVES;
    assert_false(filter(7, 0, &v, ONES).ebx & (1u << 10));
    assert_true(filter(7, 0, &v, ONES).ecx & (1u << 22));
    v.exec = 0;
    assert_false(filter(7, 0, &v, ONES).ecx & (1u << 22));
    assert_false(filter(0x80000001, 0, &v, ONES).edx & (1u << 27));
    assert_false(filter(0xd, 1, &v, ONES).eax & (1u << 3));
    /* Never offered where the host lacks them: leaf 7 EBX keeps only pollux's own TSC_ADJUST. */
    struct cpuid_regs none = {0};
    assert_int_equal(filter(7, 0, &view, none).ebx, 1u << 1);
    assert_int_equal(filter(0x80000001, 0, &view, none).edx & (1u << 27), 0);
}

static void test_leaf7_offers_only_what_is_virtualized(void **state)
{
    (void)state;
    struct cpuid_regs r = filter(7, 0, &view, ONES);
    assert_int_equal(r.eax, ~0u);     /* the highest subleaf is the host's */
    assert_true(r.ebx & (1u << 0));   /* FSGSBASE */
    assert_true(r.ebx & (1u << 1));   /* TSC_ADJUST: the MSR is the vCPU's */
    assert_false(r.ebx & (1u << 2));  /* SGX */
    assert_false(r.ebx & (1u << 14)); /* MPX: its state components are not switched */
    assert_false(r.ebx & (1u << 16)); /* AVX512F, likewise */
    assert_false(r.ebx & (1u << 25)); /* processor trace */
    assert_true(r.ecx & (1u << 3));   /* PKU: PKRU is switched */
    assert_false(r.ecx & (1u << 5));  /* WAITPKG */
    assert_false(r.ecx & (1u << 7));  /* CET_SS */
    assert_true(r.ecx & (1u << 16));  /* LA57: walks and canonical checks follow it */
    assert_true(r.ecx & (1u << 31));  /* PKS: IA32_PKRS is per vCPU */
    assert_true(r.edx & (1u << 26));  /* IBRS/IBPB: IA32_SPEC_CTRL and PRED_CMD are virtualized */
    assert_true(r.edx & (1u << 27));  /* STIBP */
    assert_true(r.edx & (1u << 31));  /* SSBD */
    assert_false(r.edx & (1u << 20)); /* CET_IBT */
    assert_false(r.edx & (1u << 28)); /* L1D_FLUSH */
    assert_false(r.edx & (1u << 29)); /* ARCH_CAPABILITIES */
    assert_false(r.edx & (1u << 30)); /* CORE_CAPABILITIES */
    r = filter(7, 1, &view, ONES);
    assert_int_equal(r.eax, (1u << 4) | (7u << 10));
    assert_int_equal(r.ebx | r.ecx | r.edx, 0);
    r = filter(7, 2, &view, ONES);
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0); /* subleaves the table does not know */
}

static void test_extended_leaves(void **state)
{
    (void)state;
    struct cpuid_regs r = filter(0x80000001, 0, &view, ONES);
    assert_false(r.ecx & (1u << 2));  /* SVM */
    assert_false(r.ecx & (1u << 23)); /* PerfCtrExtCore */
    assert_true(r.edx & (1u << 29));  /* long mode stays */
    assert_false(r.edx & (1u << 25)); /* FFXSR: EFER.FFXSR is refused */
    r = filter(0x80000008, 0, &view, ONES);
    assert_int_equal(r.eax, ~0u);
    assert_true(r.ebx & (1u << 12));         /* IBPB */
    assert_false(r.ebx & (1u << 25));        /* VIRT_SSBD */
    assert_int_equal(r.ecx, 3 | (2u << 12)); /* 4 vCPUs: 2 bits of APIC ID */
    assert_int_equal(r.edx, 0);
    r = filter(0x80000007, 0, &view, ONES);
    assert_int_equal(r.eax | r.ebx | r.ecx, 0);
    assert_int_equal(r.edx, 1u << 8); /* invariant TSC: the guest's runs at the host's rate */
    r = filter(0x80000007, 0, &view, (struct cpuid_regs){0, 0x1b, 0, 0x6599 & ~(1u << 8)});
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0); /* a host without it: none */
    r = filter(0x8000000a, 0, &view, (struct cpuid_regs){1, 16, 0, 0x10010001});
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
}

static void test_unlisted_and_out_of_range_leaves_are_zero(void **state)
{
    (void)state;
    const uint32_t leaves[] = {3, 5, 0xa, 0x12, 0x14, 0x17, 0x8000001e, 0x8000001f};
    for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
        struct cpuid_regs r = filter(leaves[i], 0, &view, ONES);
        assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
    }
    struct cpuid_view v = view;
    v.max_leaf = 6; /* an Intel host answers leaf 7 with leaf 6's data */
    struct cpuid_regs r = filter(7, 0, &v, ONES);
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
    v.max_ext_leaf = 0x80000004;
    r = filter(0x80000008, 0, &v, ONES);
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
    r = filter(0x80000002, 0, &v, (struct cpuid_regs){1, 2, 3, 4});
    assert_int_equal(r.edx, 4); /* the brand string is the host's */
}

/*
 * ARAT (leaf 6 EAX bit 2) on every host, as KVM offers it: without it a Linux
 * guest keeps C3STOP on its local APIC timer and, with no broadcast device in
 * a hardware-reduced VM, never leaves periodic mode (docs/cpuid.md). The rest
 * of the leaf, the host's power management, stays hidden.
 */
static void test_leaf6_offers_only_arat(void **state)
{
    (void)state;
    struct cpuid_regs bare = filter(6, 0, &view, (struct cpuid_regs){0, 0, 0, 0});
    assert_int_equal(bare.eax, 1u << 2);
    struct cpuid_regs r = filter(6, 0, &view, ONES);
    assert_int_equal(r.eax, 1u << 2);
    assert_int_equal(r.ebx | r.ecx | r.edx, 0);
}

static void test_pollux_leaves(void **state)
{
    (void)state;
    struct cpuid_regs r = filter(POLLUX_CPUID_BASE, 0, &view, (struct cpuid_regs){1, 2, 3, 4});
    assert_int_equal(r.eax, POLLUX_CPUID_TIMING);
    char sig[13] = {0};
    memcpy(sig, &r.ebx, 4);
    memcpy(sig + 4, &r.ecx, 4);
    memcpy(sig + 8, &r.edx, 4);
    assert_string_equal(sig, "pollux");
    r = filter(POLLUX_CPUID_TIMING, 0, &view, (struct cpuid_regs){1, 2, 3, 4});
    assert_int_equal(r.eax, 2500000);
    assert_int_equal(r.ebx, 1000);
    r = filter(POLLUX_CPUID_BASE + 5, 0, &view, (struct cpuid_regs){1, 2, 3, 4});
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
    r = filter(0x4ffffff0, 0, &view, (struct cpuid_regs){1, 2, 3, 4});
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
}

static void test_topology_describes_the_vm(void **state)
{
    (void)state;
    struct cpuid_regs r = filter(0xb, 0, &view, ONES);
    assert_int_equal(r.eax, 0);
    assert_int_equal(r.ebx, 1);
    assert_int_equal(r.ecx, 1u << 8);
    assert_int_equal(r.edx, 3);
    r = filter(0xb, 1, &view, ONES);
    assert_int_equal(r.eax, 2); /* 4 vCPUs: 2 bits of APIC ID */
    assert_int_equal(r.ebx, 4);
    assert_int_equal(r.ecx, (2u << 8) | 1);
    r = filter(0xb, 2, &view, ONES);
    assert_int_equal(r.ebx, 0);
    assert_int_equal(r.ecx, 2);
    assert_int_equal(r.edx, 3);
}

static void test_xsave_components_limited(void **state)
{
    (void)state;
    struct cpuid_regs r = filter(0xd, 0, &view, (struct cpuid_regs){0xe7, 0x988, 0xa88, 0x1});
    assert_int_equal(r.eax, 0x7); /* no AVX-512 state offered */
    assert_int_equal(r.ebx, 0x988);
    assert_int_equal(r.ecx, 0x340); /* the size of what is offered, not of the host's set */
    assert_int_equal(r.edx, 0);
    r = filter(0xd, 1, &view, (struct cpuid_regs){0x1f, 0x400, 0x1900, 0x1});
    assert_int_equal(r.eax, 0xf); /* XSAVEOPT, XSAVEC, XGETBV1, XSAVES; not XFD */
    assert_int_equal(r.ebx, 0x400);
    assert_int_equal(r.ecx | r.edx, 0); /* no supervisor component: IA32_XSS accepts only 0 */
    r = filter(0xd, 2, &view, (struct cpuid_regs){0x100, 0x240, 0, 0});
    assert_int_equal(r.eax, 0x100);
    assert_int_equal(r.ebx, 0x240);
    r = filter(0xd, 5, &view, (struct cpuid_regs){0x40, 0x440, 0, 0});
    assert_int_equal(r.eax | r.ebx, 0); /* AVX-512 opmask: not offered */
    struct cpuid_view pkru = view;
    pkru.xcr0_supported = 0x207;
    r = filter(0xd, 9, &pkru, (struct cpuid_regs){8, 0xa80, 0, 0});
    assert_int_equal(r.eax, 8);
}

/* A host with everything pollux can offer. */
static struct cpuid_regs rich_host(uint32_t leaf, uint32_t subleaf)
{
    (void)subleaf;
    if (leaf == 0)
        return (struct cpuid_regs){0x16, 0x756e6547, 0x6c65746e, 0x49656e69}; /* GenuineIntel */
    return ONES;
}

static struct cpuid_regs amd_host(uint32_t leaf, uint32_t subleaf)
{
    (void)subleaf;
    switch (leaf) {
    case 0:
        return (struct cpuid_regs){0xd, 0x68747541, 0x444d4163, 0x69746e65};
    case 0x80000001:
        return (struct cpuid_regs){0, 0, 0, 1u << 27};
    case 0x80000008:
        return (struct cpuid_regs){0x3030, (1u << 12) | (1u << 24), 0, 0};
    default:
        return (struct cpuid_regs){0};
    }
}

static void test_guest_features_follow_the_filter(void **state)
{
    (void)state;
    struct guest_features f;
    cpuid_guest_features(&view, rich_host, &f);
    assert_true(f.tsc_aux && f.xsaves && f.pks && f.pku && f.la57 && f.ibpb && f.tsc_adjust);
    assert_int_equal(f.spec_ctrl, 7);
    assert_false(f.amd);
    struct cpuid_view v = view;
    v.exec = 0; /* RDTSCP, RDPID and XSAVES hidden: no IA32_TSC_AUX or IA32_XSS either */
    cpuid_guest_features(&v, rich_host, &f);
    assert_false(f.tsc_aux);
    assert_false(f.xsaves);
    cpuid_guest_features(&view, amd_host, &f);
    assert_true(f.amd && f.tsc_aux && f.ibpb);
    assert_true(f.tsc_adjust); /* pollux's own, where the host has no such MSR */
    assert_false(f.la57 || f.pks || f.xsaves);
    assert_int_equal(f.spec_ctrl, 4);   /* SSBD alone */
    assert_int_equal(f.maxphyaddr, 48); /* 0x80000008 EAX[7:0] */
    v = view;
    v.max_ext_leaf = 0x80000001; /* no address sizes: the SDM's 36 bits */
    cpuid_guest_features(&v, amd_host, &f);
    assert_int_equal(f.maxphyaddr, 36);
    v.max_leaf = 6; /* no leaf 7 to offer TSC_ADJUST in: no such MSR */
    cpuid_guest_features(&v, amd_host, &f);
    assert_false(f.tsc_adjust);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaf1_hides_virtualization_and_sets_hypervisor),
        cmocka_unit_test(test_state_dependent_bits),
        cmocka_unit_test(test_instructions_the_backend_may_refuse),
        cmocka_unit_test(test_leaf7_offers_only_what_is_virtualized),
        cmocka_unit_test(test_extended_leaves),
        cmocka_unit_test(test_unlisted_and_out_of_range_leaves_are_zero),
        cmocka_unit_test(test_leaf6_offers_only_arat),
        cmocka_unit_test(test_pollux_leaves),
        cmocka_unit_test(test_topology_describes_the_vm),
        cmocka_unit_test(test_xsave_components_limited),
        cmocka_unit_test(test_guest_features_follow_the_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

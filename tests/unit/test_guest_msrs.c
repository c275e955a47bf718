/* SPDX-License-Identifier: GPL-2.0-only */
/* The per-vCPU MSRs pollux keeps itself, and the canonical check of address MSRs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/dev/guest_msrs.h"

static const struct guest_features all = {.tsc_aux = true,
                                          .xsaves = true,
                                          .pks = true,
                                          .pku = true,
                                          .la57 = true,
                                          .spec_ctrl = 7,
                                          .ibpb = true};
static const struct guest_features none = {0};

static enum msr_result wr(const struct guest_features *f, struct guest_msrs *m, uint32_t index,
                          uint64_t value)
{
    bool ibpb;
    return guest_msrs_write(f, m, index, value, &ibpb);
}

static uint64_t rd(const struct guest_features *f, const struct guest_msrs *m, uint32_t index)
{
    uint64_t v = 0xdeadbeef;
    assert_int_equal(guest_msrs_read(f, m, index, &v), MSR_DONE);
    return v;
}

static void test_misc_enable_as_kvm_models_it(void **state)
{
    (void)state;
    struct guest_msrs m;
    guest_msrs_reset(&m);
    assert_int_equal(rd(&none, &m, MSR_MISC_ENABLE), 0x1801);
    /* What Linux writes back: stored as given. */
    assert_int_equal(wr(&none, &m, MSR_MISC_ENABLE, 0x400c51809ull), MSR_DONE);
    assert_int_equal(rd(&none, &m, MSR_MISC_ENABLE), 0x400c51809ull);
    /* BTS and PEBS unavailable are read-only. */
    assert_int_equal(wr(&none, &m, MSR_MISC_ENABLE, 0x400c51809ull & ~(1ull << 11)), MSR_FAULT);
    assert_int_equal(wr(&none, &m, MSR_MISC_ENABLE, 0x400c51809ull & ~(1ull << 12)), MSR_FAULT);
    assert_int_equal(rd(&none, &m, MSR_MISC_ENABLE), 0x400c51809ull);
    /* Bit 7 is ignored: neither set nor cleared by a write. */
    assert_int_equal(wr(&none, &m, MSR_MISC_ENABLE, 0x1881), MSR_DONE);
    assert_int_equal(rd(&none, &m, MSR_MISC_ENABLE), 0x1801);
    m.misc_enable |= 1u << 7;
    assert_int_equal(wr(&none, &m, MSR_MISC_ENABLE, 0x1800), MSR_DONE);
    assert_int_equal(rd(&none, &m, MSR_MISC_ENABLE), 0x1880);
    /* Each vCPU has its own. */
    struct guest_msrs other;
    guest_msrs_reset(&other);
    assert_int_equal(rd(&none, &other, MSR_MISC_ENABLE), 0x1801);
}

static void test_msrs_exist_only_with_their_feature(void **state)
{
    (void)state;
    struct guest_msrs m;
    guest_msrs_reset(&m);
    const uint32_t msrs[] = {MSR_TSC_AUX, MSR_XSS, MSR_PKRS, MSR_SPEC_CTRL, MSR_PRED_CMD};
    for (size_t i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
        uint64_t v;
        assert_int_equal(guest_msrs_read(&none, &m, msrs[i], &v), MSR_NOT_MINE);
        assert_int_equal(wr(&none, &m, msrs[i], 0), MSR_NOT_MINE);
    }
}

static void test_tsc_aux(void **state)
{
    (void)state;
    struct guest_msrs a, b;
    guest_msrs_reset(&a);
    guest_msrs_reset(&b);
    assert_int_equal(wr(&all, &a, MSR_TSC_AUX, 0x12345678), MSR_DONE);
    assert_int_equal(wr(&all, &b, MSR_TSC_AUX, 7), MSR_DONE);
    assert_int_equal(rd(&all, &a, MSR_TSC_AUX), 0x12345678);
    assert_int_equal(rd(&all, &b, MSR_TSC_AUX), 7);
    /* Bits 63:32: Intel raises #GP, AMD drops them. */
    assert_int_equal(wr(&all, &a, MSR_TSC_AUX, 1ull << 32), MSR_FAULT);
    struct guest_features amd = all;
    amd.amd = true;
    assert_int_equal(wr(&amd, &a, MSR_TSC_AUX, (1ull << 32) | 5), MSR_DONE);
    assert_int_equal(rd(&amd, &a, MSR_TSC_AUX), 5);
}

static void test_xss_and_pkrs(void **state)
{
    (void)state;
    struct guest_msrs m;
    guest_msrs_reset(&m);
    assert_int_equal(rd(&all, &m, MSR_XSS), 0);
    assert_int_equal(wr(&all, &m, MSR_XSS, 0), MSR_DONE);
    /* No supervisor state component is offered (CPUID 0xD.1 ECX/EDX are 0). */
    assert_int_equal(wr(&all, &m, MSR_XSS, 1u << 8), MSR_FAULT);
    assert_int_equal(wr(&all, &m, MSR_XSS, 1u << 12), MSR_FAULT);
    assert_int_equal(wr(&all, &m, MSR_PKRS, 0x55555554), MSR_DONE);
    assert_int_equal(rd(&all, &m, MSR_PKRS), 0x55555554);
    assert_int_equal(wr(&all, &m, MSR_PKRS, 1ull << 32), MSR_FAULT);
    assert_int_equal(rd(&all, &m, MSR_PKRS), 0x55555554);
}

static void test_speculation_controls(void **state)
{
    (void)state;
    struct guest_msrs m;
    guest_msrs_reset(&m);
    bool ibpb = true;
    assert_int_equal(rd(&all, &m, MSR_SPEC_CTRL), 0);
    assert_int_equal(guest_msrs_write(&all, &m, MSR_SPEC_CTRL, 5, &ibpb), MSR_DONE);
    assert_false(ibpb);
    assert_int_equal(rd(&all, &m, MSR_SPEC_CTRL), 5);
    assert_int_equal(wr(&all, &m, MSR_SPEC_CTRL, 8), MSR_FAULT);
    struct guest_features ssbd = all;
    ssbd.spec_ctrl = 4; /* only the SSBD bit offered */
    assert_int_equal(wr(&ssbd, &m, MSR_SPEC_CTRL, 1), MSR_FAULT);
    assert_int_equal(wr(&ssbd, &m, MSR_SPEC_CTRL, 4), MSR_DONE);
    /* IA32_PRED_CMD: write-only; bit 0 asks for the barrier. */
    uint64_t v;
    assert_int_equal(guest_msrs_read(&all, &m, MSR_PRED_CMD, &v), MSR_FAULT);
    assert_int_equal(guest_msrs_write(&all, &m, MSR_PRED_CMD, 1, &ibpb), MSR_DONE);
    assert_true(ibpb);
    assert_int_equal(guest_msrs_write(&all, &m, MSR_PRED_CMD, 0, &ibpb), MSR_DONE);
    assert_false(ibpb);
    assert_int_equal(guest_msrs_write(&all, &m, MSR_PRED_CMD, 2, &ibpb), MSR_FAULT);
    assert_false(ibpb);
}

static void test_canonical_addresses(void **state)
{
    (void)state;
    const uint64_t only57 = 0x00ff000000000000ull, high57 = 0xff00000000000000ull;
    const uint64_t low48 = 0x00007fffffffffffull, high48 = 0xffff800000000000ull;
    struct guest_features four = all;
    four.la57 = false;
    const uint32_t msrs[] = {MSR_FS_BASE, MSR_GS_BASE,      MSR_KERNEL_GS_BASE, MSR_LSTAR,
                             MSR_CSTAR,   MSR_SYSENTER_ESP, MSR_SYSENTER_EIP};
    for (size_t i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
        assert_true(guest_msr_canonical(&four, msrs[i], low48));
        assert_true(guest_msr_canonical(&four, msrs[i], high48));
        assert_false(guest_msr_canonical(&four, msrs[i], only57));
        /* With LA57 offered, 57 bits, whatever the guest's CR4.LA57. */
        assert_true(guest_msr_canonical(&all, msrs[i], only57));
        assert_true(guest_msr_canonical(&all, msrs[i], high57));
        assert_false(guest_msr_canonical(&all, msrs[i], 0x0100000000000000ull));
    }
    /* An MSR that holds no address takes any value here. */
    assert_true(guest_msr_canonical(&four, MSR_PAT, only57));
    assert_false(guest_canonical(&all, 0xfe00000000000000ull));
    assert_true(guest_canonical(&four, 0xffff800000000000ull));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misc_enable_as_kvm_models_it),
        cmocka_unit_test(test_msrs_exist_only_with_their_feature),
        cmocka_unit_test(test_tsc_aux),
        cmocka_unit_test(test_xss_and_pkrs),
        cmocka_unit_test(test_speculation_controls),
        cmocka_unit_test(test_canonical_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* The MTRRs and AMD platform MSRs a Linux guest touches at boot (vmm/dev/pc_msr_state.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/dev/pc_msr_state.h"

static void test_mtrrs_as_kvm_models_them(void **state)
{
    (void)state;
    struct pc_msrs m;
    uint64_t v;
    pc_msrs_reset(&m);
    assert_int_equal(pc_msrs_read(&m, MSR_MTRR_CAP, &v), MSR_DONE);
    assert_int_equal(v, 0x508);
    assert_int_equal(pc_msrs_write(&m, MSR_MTRR_CAP, 0x508), MSR_FAULT);
    assert_int_equal(pc_msrs_read(&m, MSR_MTRR_DEF_TYPE, &v), MSR_DONE);
    assert_int_equal(v, 0x806); /* enabled, write-back */
    assert_int_equal(pc_msrs_write(&m, MSR_MTRR_DEF_TYPE, 0xc00), MSR_DONE);
    assert_int_equal(pc_msrs_write(&m, MSR_MTRR_DEF_TYPE, 0x1000), MSR_FAULT); /* reserved */
    assert_int_equal(pc_msrs_write(&m, MSR_MTRR_DEF_TYPE, 0x802), MSR_FAULT);  /* type 2 */
    assert_int_equal(pc_msrs_read(&m, MSR_MTRR_DEF_TYPE, &v), MSR_DONE);
    assert_int_equal(v, 0xc00);
    /* Variable range 7's mask and a fixed range keep what is written. */
    assert_int_equal(pc_msrs_write(&m, 0x20f, 0xff0000800), MSR_DONE);
    assert_int_equal(pc_msrs_read(&m, 0x20f, &v), MSR_DONE);
    assert_int_equal(v, 0xff0000800);
    assert_int_equal(pc_msrs_write(&m, 0x20e, 0x7), MSR_FAULT); /* base with type 7 */
    assert_int_equal(pc_msrs_write(&m, 0x26f, 0x0606060606060606), MSR_DONE);
    assert_int_equal(pc_msrs_read(&m, 0x26f, &v), MSR_DONE);
    assert_int_equal(v, 0x0606060606060606);
    assert_int_equal(pc_msrs_write(&m, 0x250, 0x0606060606060603), MSR_FAULT);
    assert_int_equal(pc_msrs_read(&m, 0x210, &v), MSR_NOT_MINE); /* past the 8 ranges */
    assert_int_equal(pc_msrs_read(&m, 0x251, &v), MSR_NOT_MINE);
}

static void test_amd_platform_msrs(void **state)
{
    (void)state;
    struct pc_msrs m;
    uint64_t v = 1;
    pc_msrs_reset(&m);
    assert_int_equal(pc_msrs_read(&m, MSR_AMD_INT_PENDING, &v), MSR_DONE);
    assert_int_equal(v, 0);
    v = 1;
    assert_int_equal(pc_msrs_read(&m, MSR_AMD_SYSCFG, &v), MSR_DONE);
    assert_int_equal(v, 0);
    assert_int_equal(pc_msrs_read(&m, 0xc0010011, &v), MSR_NOT_MINE);
    /* The performance counters, legacy and core, with no PMU offered. */
    static const uint32_t counters[] = {0xc0010000, 0xc0010007, 0xc0010200, 0xc001020b};
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(pc_msrs_write(&m, counters[i], 5), MSR_DONE);
        assert_int_equal(pc_msrs_read(&m, counters[i], &v), MSR_DONE);
        assert_int_equal(v, 0);
    }
    assert_int_equal(pc_msrs_read(&m, 0xc0010008, &v), MSR_NOT_MINE);
    assert_int_equal(pc_msrs_read(&m, 0xc001020c, &v), MSR_NOT_MINE);
    assert_int_equal(pc_msrs_write(&m, MSR_AMD_DE_CFG, 2), MSR_DONE);
    assert_int_equal(pc_msrs_read(&m, MSR_AMD_DE_CFG, &v), MSR_DONE);
    assert_int_equal(v, 0);
    assert_int_equal(pc_msrs_read(&m, MSR_AMD_HWCR, &v), MSR_DONE);
    assert_int_equal(v, 1ull << 24);
    assert_int_equal(pc_msrs_write(&m, MSR_AMD_HWCR, 1ull << 18), MSR_DONE);
    assert_int_equal(pc_msrs_read(&m, MSR_AMD_HWCR, &v), MSR_DONE);
    assert_int_equal(v, (1ull << 18) | (1ull << 24));
    assert_int_equal(pc_msrs_write(&m, MSR_AMD_HWCR, 1ull << 30), MSR_FAULT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mtrrs_as_kvm_models_them),
        cmocka_unit_test(test_amd_platform_msrs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

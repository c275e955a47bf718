/* SPDX-License-Identifier: GPL-2.0-only */
/* The machine-check MSRs' rules (vmm/dev/mce_state.h), as KVM's set_msr_mce and get_msr_mce. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/dev/mce_state.h"

static void test_reset_and_capabilities(void **state)
{
    (void)state;
    struct mce_msrs m;
    uint64_t v = 0;
    mce_reset(&m);
    assert_int_equal(mce_read(&m, MSR_IA32_MCG_CAP, &v), MSR_DONE);
    assert_int_equal(v, MCG_CTL_P | MCE_BANKS);
    assert_int_equal(mce_read(&m, MSR_IA32_MCG_CTL, &v), MSR_DONE);
    assert_true(v == ~0ull);
    for (unsigned b = 0; b < MCE_BANKS; b++) {
        assert_int_equal(mce_read(&m, MSR_IA32_MC0_CTL + 4 * b, &v), MSR_DONE);
        assert_true(v == ~0ull);
        assert_int_equal(mce_read(&m, MSR_IA32_MC0_CTL + 4 * b + 1, &v), MSR_DONE);
        assert_int_equal(v, 0);
    }
    /* Past the last bank, and MCG_CAP written: not this model's, and #GP. */
    assert_int_equal(mce_read(&m, MCE_MSR_LAST + 1, &v), MSR_NOT_MINE);
    assert_int_equal(mce_write(&m, MSR_IA32_MCG_CAP, MCE_BANKS, false), MSR_FAULT);
}

static void test_ctl_takes_zero_or_all_ones(void **state)
{
    (void)state;
    struct mce_msrs m;
    uint64_t v = 0;
    mce_reset(&m);
    assert_int_equal(mce_write(&m, MSR_IA32_MCG_CTL, 0, false), MSR_DONE);
    assert_int_equal(mce_write(&m, MSR_IA32_MCG_CTL, 0x1234, false), MSR_FAULT);
    const uint32_t ctl4 = MSR_IA32_MC0_CTL + 16;
    assert_int_equal(mce_write(&m, ctl4, 0, false), MSR_DONE);
    assert_int_equal(mce_write(&m, ctl4, 0xff, false), MSR_FAULT);
    /* Linux's AMD K8 workaround clears bit 10 of bank 4: KVM takes it. */
    assert_int_equal(mce_write(&m, ctl4, ~0ull & ~(1ull << 10), false), MSR_DONE);
    assert_int_equal(mce_read(&m, ctl4, &v), MSR_DONE);
    assert_true(v == (~0ull & ~(1ull << 10)));
}

static void test_status_needs_mc_status_wr_en(void **state)
{
    (void)state;
    struct mce_msrs m;
    uint64_t v = 0;
    mce_reset(&m);
    const uint32_t status2 = MSR_IA32_MC0_CTL + 9, addr2 = MSR_IA32_MC0_CTL + 10;
    assert_int_equal(mce_write(&m, status2, 0, false), MSR_DONE);
    assert_int_equal(mce_write(&m, status2, 1ull << 63, false), MSR_FAULT);
    assert_int_equal(mce_write(&m, status2, 1ull << 63, true), MSR_DONE);
    assert_int_equal(mce_read(&m, status2, &v), MSR_DONE);
    assert_true(v == 1ull << 63);
    /* ADDR and MISC, and MCG_STATUS, take any value. */
    assert_int_equal(mce_write(&m, addr2, 0xdead000, false), MSR_DONE);
    assert_int_equal(mce_read(&m, addr2, &v), MSR_DONE);
    assert_int_equal(v, 0xdead000);
    assert_int_equal(mce_write(&m, MSR_IA32_MCG_STATUS, 5, false), MSR_DONE);
    assert_int_equal(mce_read(&m, MSR_IA32_MCG_STATUS, &v), MSR_DONE);
    assert_int_equal(v, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reset_and_capabilities),
        cmocka_unit_test(test_ctl_takes_zero_or_all_ones),
        cmocka_unit_test(test_status_needs_mc_status_wr_en),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * msr_read's keeper table: it agrees with the keepers' own checks everywhere.
 * The built-in devices' claims are test_devices' (which links them); here a
 * stand-in claims the blocks they claim, for the table's construction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/dev/device.h"
#include "vmm/vcpu/guest_msrs.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/exit/msr_owner.h"
#include "vmm/dev/pc_msr_state.h"
#include "vmm/dev/vlapic_dev.h"

bool builtin_devices_claim_msr(uint32_t index)
{
    return vlapic_dev_owns_msr(index) || pc_msrs_in_range(index) || kvm_pv_msr_in_range(index);
}

static int setup(void **state)
{
    (void)state;
    msr_owner_init();
    return 0;
}

/* Every MSR of the three blocks, and the blocks' neighbours. */
static void test_table_agrees_with_the_checks(void **state)
{
    (void)state;
    static const uint32_t bases[] = {0, 0xc0000000u, 0xc0010000u};
    for (unsigned b = 0; b < 3; b++)
        for (uint32_t i = bases[b]; i < bases[b] + MSR_OWNER_BLOCK_SIZE + 0x100; i++)
            assert_int_equal(msr_owner(i), msr_owner_by_checks(i));
    for (uint32_t i = 0xbfffff00u; i < 0xc0000000u; i++)
        assert_int_equal(msr_owner(i), msr_owner_by_checks(i));
}

/* The checks themselves name the keepers pollux documents (vmm/exit/msr.h). */
static void test_each_keeper_holds_its_msrs(void **state)
{
    (void)state;
    static const struct {
        uint32_t index;
        enum msr_owner owner;
    } known[] = {
        {0x1b, MSR_OWNER_DEVICE},        /* IA32_APIC_BASE */
        {0x6e0, MSR_OWNER_DEVICE},       /* IA32_TSC_DEADLINE */
        {0x80b, MSR_OWNER_DEVICE},       /* the x2APIC's EOI */
        {0x48, MSR_OWNER_GUEST},         /* IA32_SPEC_CTRL */
        {0x1a0, MSR_OWNER_GUEST},        /* IA32_MISC_ENABLE */
        {0xc0000103u, MSR_OWNER_GUEST},  /* IA32_TSC_AUX */
        {0xfe, MSR_OWNER_DEVICE},        /* MTRRCAP */
        {0x259, MSR_OWNER_DEVICE},       /* a fixed-range MTRR */
        {0xc0010015u, MSR_OWNER_DEVICE}, /* AMD HWCR */
        {0x4b564d01u, MSR_OWNER_DEVICE}, /* MSR_KVM_SYSTEM_TIME_NEW */
        {0x277, MSR_OWNER_NONE},         /* PAT: the vendor's */
        {0xc0000080u, MSR_OWNER_NONE},   /* EFER: the vendor's */
        {0x10, MSR_OWNER_NONE},          /* the TSC: msr_read_own's */
    };
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
        assert_int_equal(msr_owner(known[k].index), known[k].owner);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_table_agrees_with_the_checks, setup),
        cmocka_unit_test_setup(test_each_keeper_holds_its_msrs, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

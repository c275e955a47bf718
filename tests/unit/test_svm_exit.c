/* SPDX-License-Identifier: GPL-2.0-only */
/* SVM #VMEXIT decoding into the common exit record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "arch/x86/insn.h"
#include "backend/svm/svm_exit.h"
#include "backend/svm/svm_sched.h"

static struct vmcb vmcb;

static struct exit_record decode(uint64_t code, bool nrips)
{
    struct exit_record e;
    vmcb.exit_code = code;
    svm_decode_exit(&vmcb, nrips, &e);
    return e;
}

static void test_cpuid_without_nrips_has_no_length(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    vmcb.rip = 0x1000;
    vmcb.next_rip = 0; /* QEMU TCG leaves nRIP at 0 */
    struct exit_record e = decode(SVM_EXIT_CPUID, false);
    assert_int_equal(e.reason, EXIT_CPUID);
    assert_int_equal(e.insn_len, 0);
    assert_int_equal(e.insn_kind, INSN_CPUID);
}

static void test_nrips_gives_length(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    vmcb.rip = 0x1000;
    vmcb.next_rip = 0x1003;
    vmcb.cpl = 3;
    struct exit_record e = decode(SVM_EXIT_VMMCALL, true);
    assert_int_equal(e.reason, EXIT_HYPERCALL);
    assert_int_equal(e.insn_len, 3);
    assert_int_equal(e.hypercall.cpl, 3); /* for the privilege check */
    /* An implausible nRIP is not trusted. */
    vmcb.next_rip = 0x2000;
    e = decode(SVM_EXIT_VMMCALL, true);
    assert_int_equal(e.insn_len, 0);
}

/* The CR8-write intercept: the register from EXITINFO1 with decode assists, else unknown. */
static void test_cr8_write(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    vmcb.exit_info1 = SVM_CR_EXIT_VALID | 13;
    struct exit_record e = decode(SVM_EXIT_WRITE_CR8, false);
    assert_int_equal(e.reason, EXIT_CR8);
    assert_true(e.cr8.write);
    assert_int_equal(e.cr8.gpr, 13);
    vmcb.exit_info1 = 0; /* no decode assists */
    e = decode(SVM_EXIT_WRITE_CR8, false);
    assert_int_equal(e.reason, EXIT_CR8);
    assert_int_equal(e.cr8.gpr, EXIT_GPR_UNKNOWN);
}

static void test_ioio_decoding(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    vmcb.rip = 0x2000;
    vmcb.exit_info1 = (0x3fdull << 16) | SVM_IOIO_SZ8 | SVM_IOIO_IN;
    vmcb.exit_info2 = 0x2001; /* next RIP, present even without NRIPS */
    struct exit_record e = decode(SVM_EXIT_IOIO, false);
    assert_int_equal(e.reason, EXIT_IO);
    assert_int_equal(e.io.port, 0x3fd);
    assert_int_equal(e.io.size, 1);
    assert_true(e.io.in);
    assert_false(e.io.string);
    assert_int_equal(e.insn_len, 1);

    vmcb.exit_info1 = (0xf4ull << 16) | SVM_IOIO_SZ32;
    vmcb.exit_info2 = 0x2002;
    e = decode(SVM_EXIT_IOIO, false);
    assert_false(e.io.in);
    assert_int_equal(e.io.size, 4);
    assert_int_equal(e.io.port, 0xf4);

    vmcb.exit_info1 = (0x80ull << 16) | SVM_IOIO_SZ16 | SVM_IOIO_STR | SVM_IOIO_REP;
    e = decode(SVM_EXIT_IOIO, false);
    assert_int_equal(e.io.size, 2);
    assert_true(e.io.string);
}

static void test_msr_direction(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    vmcb.exit_info1 = 0;
    assert_int_equal(decode(SVM_EXIT_MSR, false).reason, EXIT_MSR_READ);
    vmcb.exit_info1 = 1;
    struct exit_record e = decode(SVM_EXIT_MSR, false);
    assert_int_equal(e.reason, EXIT_MSR_WRITE);
    assert_int_equal(e.insn_kind, INSN_WRMSR);
}

static void test_npf(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    vmcb.exit_info1 = (1ull << 32) | 2 | 1; /* final GPA, write, present */
    vmcb.exit_info2 = 0xfee00030;
    struct exit_record e = decode(SVM_EXIT_NPF, false);
    assert_int_equal(e.reason, EXIT_NESTED_PAGE_FAULT);
    assert_int_equal(e.npf.gpa, 0xfee00030);
    assert_true(e.npf.write);
    assert_true(e.npf.present);
    assert_false(e.npf.fetch);
    vmcb.exit_info1 = 16;
    e = decode(SVM_EXIT_NPF, false);
    assert_true(e.npf.fetch);
    assert_false(e.npf.write);
}

static void test_invalid_compares_low_32_bits(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    /* QEMU writes a 32-bit -1; hardware a 64-bit -1. Both are VMEXIT_INVALID. */
    assert_int_equal(decode(0x00000000ffffffffull, false).reason, EXIT_ENTRY_FAILED);
    struct exit_record e = decode(~0ull, false);
    assert_int_equal(e.reason, EXIT_ENTRY_FAILED);
    assert_non_null(strstr(e.fail.what, "VMEXIT_INVALID"));
}

static void test_refused_instructions_are_undefined(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    const struct {
        uint64_t code;
        int kind;
    } cases[] = {{SVM_EXIT_VMRUN, INSN_VMRUN},     {SVM_EXIT_VMLOAD, INSN_VMLOAD},
                 {SVM_EXIT_VMSAVE, INSN_VMSAVE},   {SVM_EXIT_STGI, INSN_STGI},
                 {SVM_EXIT_CLGI, INSN_CLGI},       {SVM_EXIT_SKINIT, INSN_SKINIT},
                 {SVM_EXIT_MONITOR, INSN_MONITOR}, {SVM_EXIT_MWAIT, INSN_MWAIT},
                 {SVM_EXIT_RDPRU, INSN_RDPRU},     {SVM_EXIT_INVLPGA, INSN_INVLPGA}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct exit_record e = decode(cases[i].code, false);
        assert_int_equal(e.reason, EXIT_UNDEFINED);
        assert_int_equal(e.insn_kind, cases[i].kind);
    }
}

static void test_other_reasons(void **state)
{
    (void)state;
    memset(&vmcb, 0, sizeof(vmcb));
    assert_int_equal(decode(SVM_EXIT_HLT, false).reason, EXIT_HLT);
    assert_int_equal(decode(SVM_EXIT_IDLE_HLT, false).reason, EXIT_IDLE_HLT);
    assert_int_equal(decode(SVM_EXIT_PAUSE, false).reason, EXIT_PAUSE);
    assert_int_equal(decode(SVM_EXIT_INTR, false).reason, EXIT_EXTERNAL_INTERRUPT);
    assert_int_equal(decode(SVM_EXIT_NMI, false).reason, EXIT_NMI);
    assert_int_equal(decode(SVM_EXIT_VINTR, false).reason, EXIT_INTERRUPT_WINDOW);
    assert_int_equal(decode(SVM_EXIT_SHUTDOWN, false).reason, EXIT_SHUTDOWN);
    assert_int_equal(decode(SVM_EXIT_XSETBV, false).reason, EXIT_XSETBV);
    assert_int_equal(decode(SVM_EXIT_WBINVD, false).reason, EXIT_WBINVD);
    assert_int_equal(decode(SVM_EXIT_INVD, false).reason, EXIT_INVD);
    struct exit_record e = decode(0x4e, false); /* #PF intercept: never requested */
    assert_int_equal(e.reason, EXIT_UNKNOWN);
    assert_int_equal(e.vendor_code, 0x4e);
}

/* The controls every pollux VMCB has (svm_vcpu.c reset_common), with a first ASID. */
static struct vmcb pollux_vmcb(struct svm_asid_cpu *cpu)
{
    struct vmcb v = {0};
    v.intercept_misc2 = SVM_INTERCEPT_VMRUN | SVM_INTERCEPT_VMMCALL;
    v.np_enable = 1;
    v.iopm_base_pa = 0x7f00000;
    v.msrpm_base_pa = 0x7f04000;
    struct svm_asid_vcpu a = {.cpu = -1};
    struct svm_asid_entry e = svm_asid_assign(&a, cpu, 0);
    v.asid = a.asid;
    v.tlb_control = e.tlb_control;
    return v;
}

/*
 * KVM's nested VMRUN checks on what pollux writes, under old KVM (no
 * FlushByASID: TLB_CONTROL 3 would fail VMRUN, so pollux takes a new ASID)
 * and new KVM (TLB_CONTROL 3), through an ASID wrap; each broken rule is named.
 */
static void test_vmcb_checks_under_nested_kvm(void **state)
{
    (void)state;
    for (int fba = 0; fba < 2; fba++) {
        struct virt_features f = {.npt = true, .flush_by_asid = fba, .svm_asids = 8};
        struct svm_asid_cpu cpu = svm_asid_cpu_init(f.svm_asids);
        for (int i = 0; i < 9; i++) {
            struct vmcb v = pollux_vmcb(&cpu);
            assert_null(svm_check_controls(&v, f.npt, f.flush_by_asid, 40));
            uint8_t flush = svm_flush_tlb_control(&f);
            if (flush != SVM_TLB_FLUSH_NEW_ASID)
                v.tlb_control = flush;
            assert_null(svm_check_controls(&v, f.npt, f.flush_by_asid, 40));
        }
    }
    struct svm_asid_cpu cpu = svm_asid_cpu_init(8);
    struct vmcb good = pollux_vmcb(&cpu), v;
#define BROKEN(stmt, npt, fba, bits, words)                                                        \
    do {                                                                                           \
        v = good;                                                                                  \
        stmt;                                                                                      \
        const char *why = svm_check_controls(&v, npt, fba, bits);                                  \
        assert_non_null(why);                                                                      \
        if (!strstr(why, words))                                                                   \
            fail_msg("'%s' does not mention '%s'", why, words);                                    \
    } while (0)
    BROKEN(v.intercept_misc2 = 0, true, true, 40, "VMRUN intercept");
    BROKEN(v.asid = 0, true, true, 40, "ASID 0");
    BROKEN((void)0, false, true, 40, "nested paging");
    BROKEN(v.msrpm_base_pa = 1ull << 40, true, true, 40, "MSR permission map");
    BROKEN(v.iopm_base_pa = (1ull << 36) - 0x2000, true, true, 36, "I/O permission map");
    BROKEN(v.tlb_control = SVM_TLB_FLUSH_ASID, true, false, 40, "FlushByASID");
    BROKEN(v.tlb_control = SVM_TLB_FLUSH_ASID_LOCAL, true, false, 40, "FlushByASID");
    BROKEN(v.tlb_control = 2, true, true, 40, "no such value");
#undef BROKEN
    v = good;
    v.tlb_control = SVM_TLB_FLUSH_ASID_LOCAL;
    assert_null(svm_check_controls(&v, true, true, 40));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpuid_without_nrips_has_no_length),
        cmocka_unit_test(test_nrips_gives_length),
        cmocka_unit_test(test_ioio_decoding),
        cmocka_unit_test(test_msr_direction),
        cmocka_unit_test(test_npf),
        cmocka_unit_test(test_invalid_compares_low_32_bits),
        cmocka_unit_test(test_refused_instructions_are_undefined),
        cmocka_unit_test(test_other_reasons),
        cmocka_unit_test(test_cr8_write),
        cmocka_unit_test(test_vmcb_checks_under_nested_kvm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

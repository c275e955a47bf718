/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Skipping the exiting instruction (vmm/exit/guest_access.c) without a length
 * from the CPU (SVM without NRIPS): the bytes at CS:RIP are found through the
 * vendor's lean code-mode read, with a stand-in vendor over a byte array of
 * guest RAM.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "arch/x86/regs.h"
#include "vmm/exit/guest_access.h"
#include "arch/x86/insn.h"

#define PTE 3ull /* present, writable */
#define PS  (1ull << 7)

#define MEM_SIZE 0x400000 /* 4 MiB: the first 2 MiB identity-mapped in long mode */

static uint8_t mem[MEM_SIZE];
static struct vm vm;
static struct vcpu v;
static struct guest_mode mode; /* what the stand-in vendor reports */
static unsigned emulated_ends, failures;

static void test_get_mode(struct virt_vcpu *pv, struct guest_mode *m)
{
    (void)pv;
    *m = mode;
}

static void test_get_code_mode(struct virt_vcpu *pv, struct guest_code_mode *m)
{
    (void)pv;
    *m = (struct guest_code_mode){.cr0 = mode.cr0,
                                  .cs_base = mode.cs_base,
                                  .code64 = mode.code_bits == 64,
                                  .cr3 = mode.cr3,
                                  .cr4 = mode.cr4,
                                  .efer = mode.efer};
}

static void test_end_emulated_instruction(struct virt_vcpu *pv)
{
    (void)pv;
    emulated_ends++;
}

static const struct virt_ops test_ops = {.get_mode = test_get_mode,
                                         .get_code_mode = test_get_code_mode,
                                         .end_emulated_instruction = test_end_emulated_instruction};
const struct virt_ops *virt = &test_ops;

void vm_fail(struct vcpu *pv, const char *reason, const char *fmt, ...)
{
    (void)pv;
    (void)reason;
    (void)fmt;
    failures++;
}

const char *exit_reason_name(enum exit_reason r)
{
    (void)r;
    return "test";
}

static int setup(void **state)
{
    (void)state;
    memset(mem, 0xcc, sizeof(mem)); /* INT3 everywhere the test writes no code */
    memset(&vm, 0, sizeof(vm));
    memset(&v, 0, sizeof(v));
    vm.hw.mem = mem;
    vm.cfg.mem = MEM_SIZE;
    vm.hw.mem_size = MEM_SIZE;
    v.vm = &vm;
    emulated_ends = failures = 0;
    return 0;
}

/* 64-bit code under 4-level paging: the first 2 MiB identity-mapped with one 2 MiB page. */
static void long_mode(uint64_t cs_base)
{
    uint64_t pml4 = 0x1000, pdpt = 0x2000, pd = 0x3000;
    uint64_t e;
    e = pdpt | PTE;
    memcpy(mem + pml4, &e, 8);
    e = pd | PTE;
    memcpy(mem + pdpt, &e, 8);
    e = 0 | PS | PTE;
    memcpy(mem + pd, &e, 8);
    mode = (struct guest_mode){.cr0 = CR0_PE | CR0_PG,
                               .cr3 = pml4,
                               .cr4 = CR4_PAE,
                               .efer = EFER_LME | EFER_LMA,
                               .cs_base = cs_base,
                               .code_bits = 64};
}

static struct exit_record cpuid_exit(void)
{
    return (struct exit_record){.reason = EXIT_CPUID, .insn_kind = INSN_CPUID};
}

static void test_64_bit_code_ignores_the_cs_base(void **state)
{
    (void)state;
    /* A base left in CS's hidden part by a descriptor: the CPU ignores it in 64-bit code. */
    long_mode(0x100000);
    v.hw.regs.rip = 0x8000;
    mem[0x8000] = 0x0f;
    mem[0x8001] = 0xa2;
    struct exit_record e = cpuid_exit();
    assert_int_equal(vcpu_skip_instruction(&v, &e), 0);
    assert_int_equal(v.hw.regs.rip, 0x8002);
    assert_int_equal(emulated_ends, 1);
    assert_int_equal(failures, 0);
}

static void test_protected_mode_adds_the_cs_base(void **state)
{
    (void)state;
    mode = (struct guest_mode){.cr0 = CR0_PE, .cs_base = 0x10000, .code_bits = 32};
    v.hw.regs.rip = 0x100;
    mem[0x10100] = 0x0f;
    mem[0x10101] = 0xa2;
    struct exit_record e = cpuid_exit();
    assert_int_equal(vcpu_skip_instruction(&v, &e), 0);
    assert_int_equal(v.hw.regs.rip, 0x102);
    assert_int_equal(failures, 0);
}

static void test_prefixed_instruction_takes_the_decoder(void **state)
{
    (void)state;
    long_mode(0);
    v.hw.regs.rip = 0x9000;
    static const uint8_t cs_cpuid[] = {0x2e, 0x0f, 0xa2}; /* a CS prefix: 3 bytes */
    memcpy(mem + 0x9000, cs_cpuid, sizeof(cs_cpuid));
    struct exit_record e = cpuid_exit();
    assert_int_equal(vcpu_skip_instruction(&v, &e), 0);
    assert_int_equal(v.hw.regs.rip, 0x9003);
    assert_int_equal(failures, 0);
}

static void test_other_bytes_stop_the_vm(void **state)
{
    (void)state;
    long_mode(0);
    v.hw.regs.rip = 0xa000; /* INT3s: not the CPUID the exit names */
    struct exit_record e = cpuid_exit();
    assert_int_equal(vcpu_skip_instruction(&v, &e), -1);
    assert_int_equal(v.hw.regs.rip, 0xa000);
    assert_int_equal(failures, 1);
    assert_int_equal(emulated_ends, 0);
}

/*
 * 64-bit code at 0x8000 under 4-level paging with 4 KiB pages, its tables at
 * tables (PML4, PDPT, PD, PT), its page at page. Returns the PTE's gpa.
 */
static uint64_t long_mode_4k(uint64_t tables, uint64_t page)
{
    uint64_t e;
    for (int level = 0; level < 3; level++) {
        e = (tables + 0x1000 * (level + 1)) | PTE;
        memcpy(mem + tables + 0x1000 * level, &e, 8);
    }
    uint64_t pte_at = tables + 0x3000 + 8 * 8; /* linear 0x8000: PT index 8 */
    e = page | PTE;
    memcpy(mem + pte_at, &e, 8);
    mode = (struct guest_mode){.cr0 = CR0_PE | CR0_PG,
                               .cr3 = tables,
                               .cr4 = CR4_PAE,
                               .efer = EFER_LME | EFER_LMA,
                               .code_bits = 64};
    return pte_at;
}

/*
 * Under nested paging the guest remaps its code without an exit: the next
 * exit from the same RIP finds the instruction at the new page (a CPUID
 * with a CS prefix there, 3 bytes) although the last exit's walk was
 * remembered, and after a CR3 switch, the other tables' page.
 */
static void test_a_remapped_code_page_is_seen_at_the_next_exit(void **state)
{
    (void)state;
    static const uint8_t cpuid[] = {0x0f, 0xa2}, cs_cpuid[] = {0x2e, 0x0f, 0xa2};
    memcpy(mem + 0x100000, cpuid, sizeof(cpuid));
    memcpy(mem + 0x101000, cs_cpuid, sizeof(cs_cpuid));
    uint64_t pte_at = long_mode_4k(0x10000, 0x100000);
    struct exit_record e = cpuid_exit();
    for (int exit = 0; exit < 2; exit++) {
        v.hw.regs.rip = 0x8000;
        assert_int_equal(vcpu_skip_instruction(&v, &e), 0);
        assert_int_equal(v.hw.regs.rip, 0x8002);
    }
    uint64_t pte = 0x101000 | PTE;
    memcpy(mem + pte_at, &pte, 8);
    v.hw.regs.rip = 0x8000;
    assert_int_equal(vcpu_skip_instruction(&v, &e), 0);
    assert_int_equal(v.hw.regs.rip, 0x8003);

    long_mode_4k(0x20000, 0x100000);
    v.hw.regs.rip = 0x8000;
    assert_int_equal(vcpu_skip_instruction(&v, &e), 0);
    assert_int_equal(v.hw.regs.rip, 0x8002);
    /* The first tables again, still pointing at the prefixed CPUID. */
    mode.cr3 = 0x10000;
    v.hw.regs.rip = 0x8000;
    assert_int_equal(vcpu_skip_instruction(&v, &e), 0);
    assert_int_equal(v.hw.regs.rip, 0x8003);
    assert_int_equal(failures, 0);
}

static void test_length_from_the_cpu_is_used_as_given(void **state)
{
    (void)state;
    mode = (struct guest_mode){0}; /* never read */
    v.hw.regs.rip = 0x500;
    struct exit_record e = cpuid_exit();
    e.insn_len = 3;
    assert_int_equal(vcpu_skip_instruction(&v, &e), 0);
    assert_int_equal(v.hw.regs.rip, 0x503);
    assert_int_equal(emulated_ends, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_64_bit_code_ignores_the_cs_base, setup),
        cmocka_unit_test_setup(test_protected_mode_adds_the_cs_base, setup),
        cmocka_unit_test_setup(test_prefixed_instruction_takes_the_decoder, setup),
        cmocka_unit_test_setup(test_other_bytes_stop_the_vm, setup),
        cmocka_unit_test_setup(test_a_remapped_code_page_is_seen_at_the_next_exit, setup),
        cmocka_unit_test_setup(test_length_from_the_cpu_is_used_as_given, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pure parts of the VMX backend: control derivation from capability
 * MSRs, CR0/CR4 rules, EPT entries, exit decoding, the preemption timer's
 * arithmetic and the software VM-entry checks, on recorded values of a
 * Skylake-like CPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/guest_regs.h"
#include "arch/x86/insn.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcs.h"
#include "backend/vmx/ept.h"
#include "backend/vmx/vmx_check.h"
#include "backend/vmx/vmx_controls.h"
#include "backend/vmx/vmx_exit.h"
#include "backend/vmx/vmx_timer.h"
#include "sched/spin.h"

static uint64_t cap(uint32_t forced, uint32_t allowed)
{
    return ((uint64_t)allowed << 32) | forced;
}

#define PROC2_ALL (0x0007ffffu | PROC2_XSAVES)

/* Capability MSRs modelled on a Skylake (true controls, EPT, VPID, PLE, timer). */
static struct vmx_caps skylake(void)
{
    struct vmx_caps c = {0};
    c.basic = VMX_BASIC_TRUE_CTLS | (6ull << 50) | (0x1000ull << 32) | 4;
    c.pin = cap(0x16, 0x7f);
    c.true_pin = cap(0x16, 0x7f);
    c.proc = cap(0x0401e172, 0xfff9fffe);
    c.true_proc = cap(0x04006172, 0xfff9fffe);
    c.exit = cap(0x00036dff, 0x01ffffff);
    c.true_exit = cap(0x00036dfb, 0x01ffffff);
    c.entry = cap(0x000011ff, 0x0003ffff);
    c.true_entry = cap(0x000011fb, 0x0003ffff);
    c.proc2 = cap(0, PROC2_ALL);
    c.ept_vpid = EPT_CAP_WALK4 | EPT_CAP_UC | EPT_CAP_WB | EPT_CAP_AD | EPT_CAP_INVEPT |
                 EPT_CAP_INVEPT_SINGLE | EPT_CAP_INVEPT_ALL | VPID_CAP_INVVPID | VPID_CAP_SINGLE |
                 VPID_CAP_ALL;
    c.misc = 0x7004c1e7;
    c.cr0_fixed0 = 0x80000021;
    c.cr0_fixed1 = 0xffffffff;
    c.cr4_fixed0 = 0x2000;
    c.cr4_fixed1 = 0x003727ff;
    c.phys_bits = 39;
    c.vaddr_bits = 48;
    return c;
}

/*
 * What an L1 reads under KVM's nested VMX on that Skylake host
 * (nested_vmx_setup_ctls_msrs, kvm_intel nested=1 ept=1 enable_apicv=1):
 * the host's allowed-1 bits filtered by KVM's list, the PREEMPTION_TIMER and
 * MSR-bitmap controls always offered, PAUSE exiting but no PAUSE-loop
 * exiting, EPT capabilities of its own (no UC memory type; 2M, 1G, A/D,
 * both INVEPT types), every INVVPID type, and MISC with the emulated timer's
 * rate 5 (VMX_MISC_EMULATED_PREEMPTION_TIMER_RATE), activity HLT and
 * wait-for-SIPI. The non-TRUE MSRs add the default1 bits to the TRUE ones.
 */
static struct vmx_caps kvm_nested(void)
{
    struct vmx_caps c = skylake();
    c.basic = 0x11e57ed0 | VMX_BASIC_TRUE_CTLS | (1ull << 54) | (6ull << 50) | (0x1000ull << 32);
    uint32_t pin = 0x01 | 0x08 | 0x20 | 0x80 | 0x16 | PIN_PREEMPTION_TIMER;
    c.true_pin = cap(0x16, pin);
    c.pin = cap(0x16, pin);
    uint32_t proc = PROC_INTR_WINDOW | PROC_NMI_WINDOW | PROC_TSC_OFFSET | PROC_HLT | PROC_INVLPG |
                    PROC_MWAIT | PROC_CR3_LOAD | PROC_CR3_STORE | PROC_CR8_LOAD | PROC_CR8_STORE |
                    PROC_MOV_DR | (1u << 24) | PROC_IO_BITMAPS | PROC_MTF | PROC_MONITOR |
                    PROC_RDPMC | PROC_RDTSC | PROC_PAUSE | PROC_TPR_SHADOW | PROC_SECONDARY |
                    PROC_MSR_BITMAPS | 0x0401e172;
    c.true_proc = cap(0x04006172, proc);
    c.proc = cap(0x0401e172, proc);
    /* No PROC2_PLE: KVM never offers PAUSE-loop exiting to L1. */
    uint32_t proc2 = 0x1 | PROC2_EPT | 0x4 | PROC2_RDTSCP | 0x10 | PROC2_VPID | 0x40 |
                     PROC2_UNRESTRICTED | 0x100 | 0x200 | 0x800 | PROC2_INVPCID | 0x2000 | 0x4000 |
                     0x10000 | 0x20000 | PROC2_XSAVES;
    c.proc2 = cap(0, proc2);
    uint32_t exit = 0x200 | 0x40000 | 0x80000 | 0x36dff | 0x100000 | 0x200000 | 0x400000 | 0x8000;
    c.true_exit = cap(0x36dfb, exit);
    c.exit = cap(0x36dff, exit);
    uint32_t entry = 0x200 | 0x4000 | 0x11ff | 0x8000;
    c.true_entry = cap(0x11fb, entry);
    c.entry = cap(0x11ff, entry);
    c.ept_vpid = (1ull << 0) | EPT_CAP_WALK4 | EPT_CAP_WB | EPT_CAP_INVEPT | EPT_CAP_2M |
                 EPT_CAP_1G | EPT_CAP_AD | EPT_CAP_INVEPT_SINGLE | EPT_CAP_INVEPT_ALL |
                 VPID_CAP_INVVPID | (0xfull << 40);
    c.misc = 0x20000165;
    c.cr0_fixed0 = 0x80000021;
    c.cr4_fixed0 = 0x2000;
    return c;
}

static struct vmx_controls derive_ok(const struct vmx_caps *c)
{
    struct vmx_controls k;
    char err[160] = "";
    int rc = vmx_derive_controls(c, &k, err, sizeof(err));
    if (rc)
        fail_msg("derive failed: %s", err);
    return k;
}

static void derive_fails(const struct vmx_caps *c, const char *words)
{
    struct vmx_controls k;
    char err[160] = "";
    assert_int_equal(vmx_derive_controls(c, &k, err, sizeof(err)), -1);
    if (!strstr(err, words))
        fail_msg("error '%s' does not mention '%s'", err, words);
}

/* ------------------------------------------------------------ controls */

static void test_controls_from_true_caps(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    struct vmx_controls k = derive_ok(&c);
    assert_int_equal(k.pin & (PIN_EXT_INTR | PIN_NMI | PIN_VIRTUAL_NMIS),
                     PIN_EXT_INTR | PIN_NMI | PIN_VIRTUAL_NMIS);
    assert_false(k.pin & PIN_PREEMPTION_TIMER); /* only while armed */
    uint32_t proc = PROC_TSC_OFFSET | PROC_HLT | PROC_MWAIT | PROC_IO_BITMAPS | PROC_MSR_BITMAPS |
                    PROC_MONITOR | PROC_SECONDARY | PROC_CR8_LOAD | PROC_CR8_STORE;
    assert_int_equal(k.proc & proc, proc);
    assert_false(k.proc & (PROC_CR3_LOAD | PROC_CR3_STORE | PROC_RDTSC | PROC_PAUSE |
                           PROC_INTR_WINDOW | PROC_NMI_WINDOW));
    uint32_t proc2 = PROC2_EPT | PROC2_UNRESTRICTED | PROC2_VPID | PROC2_PLE | PROC2_RDTSCP |
                     PROC2_INVPCID | PROC2_XSAVES;
    assert_int_equal(k.proc2, proc2);
    uint32_t exit = EXIT_SAVE_DEBUG | EXIT_HOST_64 | EXIT_SAVE_PAT | EXIT_LOAD_PAT |
                    EXIT_SAVE_EFER | EXIT_LOAD_EFER;
    assert_int_equal(k.exit & exit, exit);
    assert_false(k.exit & (EXIT_ACK_INTR | EXIT_SAVE_TIMER));
    uint32_t entry = ENTRY_LOAD_DEBUG | ENTRY_LOAD_PAT | ENTRY_LOAD_EFER;
    assert_int_equal(k.entry & entry, entry);
    assert_false(k.entry & (ENTRY_IA32E | ENTRY_SMM | ENTRY_DUAL_MON));
    assert_int_equal(k.missing, VMX_OPT_PAUSE_EXITING & 0); /* nothing missing */
    assert_true(k.available & VMX_OPT_PLE);
    assert_true(k.available & VMX_OPT_PREEMPTION_TIMER);
    /* PAUSE exiting only stands in for PLE: neither available nor missing with PLE. */
    assert_false((k.available | k.missing) & VMX_OPT_PAUSE_EXITING);
}

static void test_forced_bits_are_set(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    struct vmx_controls k = derive_ok(&c);
    assert_int_equal(k.pin & 0x16, 0x16);
    assert_int_equal(k.proc & 0x04006172, 0x04006172);
    assert_int_equal(k.exit & 0x00036dfb, 0x00036dfb);
    assert_int_equal(k.entry & 0x000011fb, 0x000011fb);
    /* A bit the true MSR forces beyond the default1 set is refused: pollux cannot vouch for it. */
    c.true_proc |= PROC_RDTSC;
    derive_fails(&c, "RDTSC exiting");
}

static void test_true_controls_choose_the_msr(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    /* Without bit 55 the original MSR applies, which forces CR3-load/store exiting on. */
    c.basic &= ~VMX_BASIC_TRUE_CTLS;
    derive_fails(&c, "CR3-load exiting");
    /* The original MSR is not consulted when bit 55 says the TRUE ones exist. */
    c = skylake();
    c.proc = cap(0xffffffff, 0xffffffff);
    struct vmx_controls k = derive_ok(&c);
    assert_false(k.proc & PROC_CR3_LOAD);
    /* And the TRUE MSR is not consulted without bit 55. */
    c = skylake();
    c.basic &= ~VMX_BASIC_TRUE_CTLS;
    c.proc = c.true_proc;
    c.true_pin = 0;
    c.true_exit = 0;
    c.true_entry = 0;
    k = derive_ok(&c);
    assert_true(k.pin & PIN_EXT_INTR);
    assert_int_equal(vmx_cap_exit(&c), c.exit);
}

static void test_required_features_missing(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    c.proc2 = cap(0, PROC2_ALL & ~PROC2_EPT);
    derive_fails(&c, "enable EPT");
    c = skylake();
    c.proc2 = cap(0, PROC2_ALL & ~PROC2_UNRESTRICTED);
    derive_fails(&c, "unrestricted guest");
    c = skylake();
    c.proc2 = 0; /* no secondary controls at all */
    derive_fails(&c, "enable EPT");
    c = skylake();
    c.true_proc &= ~((uint64_t)PROC_SECONDARY << 32);
    derive_fails(&c, "activate secondary controls");
    c = skylake();
    c.true_entry &= ~((uint64_t)ENTRY_LOAD_EFER << 32);
    derive_fails(&c, "load IA32_EFER");
    c = skylake();
    c.true_entry &= ~((uint64_t)ENTRY_IA32E << 32);
    derive_fails(&c, "IA-32e mode guest");
    c = skylake();
    c.true_exit |= EXIT_ACK_INTR;
    derive_fails(&c, "acknowledge interrupt on exit");
    c = skylake();
    c.true_pin &= ~((uint64_t)PIN_NMI << 32);
    derive_fails(&c, "NMI exiting");
    c = skylake();
    c.ept_vpid &= ~EPT_CAP_WB;
    derive_fails(&c, "write-back");
    c = skylake();
    c.ept_vpid &= ~EPT_CAP_INVEPT;
    derive_fails(&c, "INVEPT");
}

static void test_optional_features_missing(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    c.true_pin &= ~((uint64_t)(PIN_VIRTUAL_NMIS | PIN_PREEMPTION_TIMER) << 32);
    c.proc2 = cap(0, PROC2_EPT | PROC2_UNRESTRICTED | PROC2_VPID);
    c.ept_vpid &= ~VPID_CAP_INVVPID; /* VPID unusable without INVVPID */
    struct vmx_controls k = derive_ok(&c);
    unsigned want = VMX_OPT_VIRTUAL_NMIS | VMX_OPT_PREEMPTION_TIMER | VMX_OPT_VPID | VMX_OPT_PLE |
                    VMX_OPT_RDTSCP | VMX_OPT_INVPCID | VMX_OPT_XSAVES;
    assert_int_equal(k.missing, want);
    assert_int_equal(k.available, VMX_OPT_PAUSE_EXITING);
    assert_int_equal(k.proc2, PROC2_EPT | PROC2_UNRESTRICTED);
    assert_false(k.pin & PIN_VIRTUAL_NMIS);
    assert_string_equal(vmx_optional_name(VMX_OPT_PLE), "PAUSE-loop exiting");
    assert_string_equal(vmx_optional_name(VMX_OPT_PREEMPTION_TIMER), "VMX-preemption timer");
    /* Virtual NMIs are only used together with NMI-window exiting. */
    c = skylake();
    c.true_proc &= ~((uint64_t)PROC_NMI_WINDOW << 32);
    k = derive_ok(&c);
    assert_true(k.missing & VMX_OPT_VIRTUAL_NMIS);
    assert_false(k.pin & PIN_VIRTUAL_NMIS);
}

/* ------------------------------------------------------------ CR0/CR4 */

static void test_cr_masks_and_real_values(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    assert_int_equal(vmx_cr0_mask(&c), 0xe0000021); /* + CD, NW: VM entry leaves them alone */
    assert_int_equal(vmx_cr4_mask(&c), 0x2000 | (~0x003727ffull & 0xffffffff));
    /* Unrestricted guest: PE and PG are not forced, NE is. */
    assert_int_equal(vmx_cr0_real(&c, 0x11), 0x31);
    assert_int_equal(vmx_cr0_real(&c, 0x10), 0x30);
    assert_int_equal(vmx_cr4_real(&c, 0), 0x2000);
}

static void test_cr0_write_switches_long_mode(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    struct vmx_cr_state s = {.cr0 = 0x11, .cr4 = CR4_PAE, .efer = EFER_LME, .entry = 0x11ff};
    assert_int_equal(vmx_cr0_write(&c, &s, 0x80000011, false), 0);
    assert_true(s.efer & EFER_LMA);
    assert_true(s.entry & ENTRY_IA32E);
    assert_int_equal(s.cr0, 0x80000011);
    /* Turning paging off from 64-bit code faults; from compatibility mode it leaves long mode. */
    struct vmx_cr_state before = s;
    assert_int_equal(vmx_cr0_write(&c, &s, 0x11, true), -1);
    assert_memory_equal(&s, &before, sizeof(s));
    assert_int_equal(vmx_cr0_write(&c, &s, 0x11, false), 0);
    assert_false(s.efer & EFER_LMA);
    assert_false(s.entry & ENTRY_IA32E);
    /* Paging without LME is plain 32-bit paging. */
    s = (struct vmx_cr_state){.cr0 = 0x11};
    assert_int_equal(vmx_cr0_write(&c, &s, 0x80000011, false), 0);
    assert_false(s.efer & EFER_LMA);
    assert_false(vmx_pae_paging(&s));
    s.cr4 = CR4_PAE;
    assert_true(vmx_pae_paging(&s));
}

static void test_cr0_write_faults(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    struct vmx_cr_state s = {.cr0 = 0x11, .efer = EFER_LME};
    assert_int_equal(vmx_cr0_write(&c, &s, 0x80000011, false), -1); /* LME, PG, no PAE */
    assert_int_equal(vmx_cr0_write(&c, &s, 0x80000010, false), -1); /* PG without PE */
    assert_int_equal(vmx_cr0_write(&c, &s, 0x20000011, false), -1); /* NW without CD */
    assert_int_equal(vmx_cr0_write(&c, &s, 0x100000011ull, true), -1);
    /* Reserved bits in 31:0 are ignored; ET always reads 1. */
    assert_int_equal(vmx_cr0_write(&c, &s, 0x00000101, false), 0);
    assert_int_equal(s.cr0, 0x11);
    assert_int_equal(vmx_cr0_write(&c, &s, CR0_PE | CR0_NE | CR0_CD | CR0_NW, false), 0);
    assert_int_equal(s.cr0, CR0_PE | CR0_ET | CR0_NE | CR0_CD | CR0_NW);
}

static void test_cr4_write_and_lmsw(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    struct vmx_cr_state s = {.cr0 = 0x11};
    assert_int_equal(vmx_cr4_write(&c, &s, CR4_VMXE), -1);   /* VMX stays hidden */
    assert_int_equal(vmx_cr4_write(&c, &s, 1ull << 12), -1); /* not in CR4_FIXED1 */
    assert_int_equal(vmx_cr4_write(&c, &s, CR4_PCIDE), -1);  /* outside long mode */
    assert_int_equal(vmx_cr4_write(&c, &s, CR4_PAE | (1u << 9)), 0);
    assert_int_equal(s.cr4, CR4_PAE | (1u << 9));
    s.efer = EFER_LME | EFER_LMA;
    assert_int_equal(vmx_cr4_write(&c, &s, 0), -1); /* PAE cannot go in long mode */
    assert_int_equal(vmx_cr4_write(&c, &s, CR4_PAE | CR4_PCIDE), 0);
    /* LMSW loads PE, MP, EM, TS but cannot clear PE. */
    assert_int_equal(vmx_lmsw_value(0x80000011, 0x000e), 0x8000001f);
    assert_int_equal(vmx_lmsw_value(0x10, 0x0001), 0x11);
    assert_int_equal(vmx_lmsw_value(0x10, 0xfff0), 0x10);
}

/* ------------------------------------------------------------ EPT */

#define ARENA_PAGES 32

struct arena {
    uint8_t *mem; /* page i has "physical" address (i + 1) * 4096 */
    unsigned used;
};

static struct arena arena;

static uint64_t arena_alloc(void *ctx)
{
    struct arena *a = ctx;
    if (a->used >= ARENA_PAGES)
        return 0;
    memset(a->mem + a->used * 4096, 0, 4096);
    return (uint64_t)(++a->used) * 4096;
}

static void *arena_virt(uint64_t pa, void *ctx)
{
    struct arena *a = ctx;
    return a->mem + pa - 4096;
}

static struct pagetable ept_table(void)
{
    arena.used = 0;
    struct pagetable pt = {
        .fmt = &pt_format_ept, .alloc_table = arena_alloc, .to_virt = arena_virt, .ctx = &arena};
    assert_int_equal(pt_init(&pt), 0);
    return pt;
}

static uint64_t raw_entry(struct pagetable *pt, uint64_t va, int level)
{
    uint64_t *t = arena_virt(pt->root, &arena);
    for (int l = 3; l > level; l--)
        t = arena_virt(t[(va >> (12 + 9 * l)) & 511] & 0x000ffffffffff000ull, &arena);
    return t[(va >> (12 + 9 * level)) & 511];
}

static int ept_setup(void **state)
{
    (void)state;
    arena.mem = aligned_alloc(4096, ARENA_PAGES * 4096);
    return arena.mem ? 0 : -1;
}

static int ept_teardown(void **state)
{
    (void)state;
    free(arena.mem);
    return 0;
}

static void test_ept_large_and_small_leaves(void **state)
{
    (void)state;
    struct pagetable pt = ept_table();
    unsigned rwx = PT_READ | PT_WRITE | PT_EXEC;
    assert_int_equal(pt_map(&pt, 0, 0x40000000, 0x201000, rwx, PT_2M), 0);
    /* Tables grant RWX and nothing else. */
    assert_int_equal(raw_entry(&pt, 0, 3) & 0xfff, 0x7);
    assert_int_equal(raw_entry(&pt, 0, 2) & 0xfff, 0x7);
    /* A 2 MiB leaf: RWX, write-back (6) in bits 5:3, bit 7. */
    uint64_t e = raw_entry(&pt, 0, 1);
    assert_int_equal(e, 0x40000000 | 0x7 | (6 << 3) | (1 << 7));
    /* The 4 KiB tail: no bit 7. */
    e = raw_entry(&pt, 0x200000, 0);
    assert_int_equal(e, 0x40200000 | 0x7 | (6 << 3));
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_true(pt_lookup(&pt, 0x12345, &pa, &perms, &level));
    assert_int_equal(pa, 0x40012345);
    assert_int_equal(perms, rwx);
    assert_int_equal(level, PT_2M);
    assert_true(pt_lookup(&pt, 0x200abc, &pa, &perms, &level));
    assert_int_equal(pa, 0x40200abc);
    assert_int_equal(level, PT_4K);
    assert_false(pt_lookup(&pt, 0x201000, &pa, &perms, &level));
}

static void test_ept_permissions_and_memory_type(void **state)
{
    (void)state;
    struct pagetable pt = ept_table();
    assert_int_equal(pt_map(&pt, 0x1000, 0x5000, 0x1000, PT_READ, PT_2M), 0);
    assert_int_equal(pt_map(&pt, 0x2000, 0x6000, 0x1000, PT_EXEC, PT_2M), 0);
    assert_int_equal(pt_map(&pt, 0x3000, 0x7000, 0x1000, PT_WRITE, PT_2M), 0);
    assert_int_equal(pt_map(&pt, 0x4000, 0xfee00000, 0x1000, PT_READ | PT_WRITE | PT_UC, PT_2M), 0);
    assert_int_equal(raw_entry(&pt, 0x1000, 0) & 0xff, 0x1 | (6 << 3));
    assert_int_equal(raw_entry(&pt, 0x2000, 0) & 0xff, 0x4 | (6 << 3)); /* execute-only */
    assert_int_equal(raw_entry(&pt, 0x3000, 0) & 0xff, 0x3 | (6 << 3)); /* W implies R */
    assert_int_equal(raw_entry(&pt, 0x4000, 0) & 0xff, 0x3);            /* UC = type 0 */
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_true(pt_lookup(&pt, 0x4000, &pa, &perms, &level));
    assert_int_equal(perms, PT_READ | PT_WRITE | PT_UC);
    assert_true(pt_lookup(&pt, 0x2000, &pa, &perms, &level));
    assert_int_equal(perms, PT_EXEC);
    /* An existing mapping is never replaced. */
    assert_int_equal(pt_map(&pt, 0x1000, 0x9000, 0x1000, PT_READ, PT_2M), -1);
}

static void test_ept_pointer(void **state)
{
    (void)state;
    assert_int_equal(ept_pointer(0x123000, false), 0x123000 | (3 << 3) | 6);
    assert_int_equal(ept_pointer(0x123000, true), 0x123000 | (1 << 6) | (3 << 3) | 6);
}

/* ------------------------------------------------------------ exit decoding */

static char msg[256];

static struct exit_record decode(struct vmx_exit_info x)
{
    struct exit_record e;
    vmx_decode_exit(&x, &e, msg, sizeof(msg));
    return e;
}

static void test_io_qualification(void **state)
{
    (void)state;
    /* in al, dx with DX = 0x3fd */
    struct exit_record e = decode((struct vmx_exit_info){
        .reason = VMX_EXIT_IO, .qualification = (0x3fdull << 16) | IO_QUAL_IN, .insn_len = 1});
    assert_int_equal(e.reason, EXIT_IO);
    assert_int_equal(e.io.port, 0x3fd);
    assert_int_equal(e.io.size, 1);
    assert_true(e.io.in);
    assert_false(e.io.string);
    assert_int_equal(e.insn_len, 1);
    /* out 0xf4, eax: immediate operand (bit 6), 4 bytes */
    e = decode((struct vmx_exit_info){
        .reason = VMX_EXIT_IO, .qualification = (0xf4ull << 16) | (1 << 6) | 3, .insn_len = 2});
    assert_int_equal(e.io.port, 0xf4);
    assert_int_equal(e.io.size, 4);
    assert_false(e.io.in);
    assert_int_equal(e.insn_len, 2);
    /* rep outsw */
    e = decode(
        (struct vmx_exit_info){.reason = VMX_EXIT_IO,
                               .qualification = (0x1f0ull << 16) | IO_QUAL_STRING | IO_QUAL_REP | 1,
                               .insn_len = 3});
    assert_int_equal(e.io.size, 2);
    assert_true(e.io.string);
}

static void test_ept_violation(void **state)
{
    (void)state;
    struct exit_record e = decode((struct vmx_exit_info){.reason = VMX_EXIT_EPT_VIOLATION,
                                                         .qualification = EPT_QUAL_READ,
                                                         .guest_phys = 0xf0000000,
                                                         .insn_len = 7});
    assert_int_equal(e.reason, EXIT_NESTED_PAGE_FAULT);
    assert_int_equal(e.npf.gpa, 0xf0000000);
    assert_false(e.npf.write);
    assert_false(e.npf.fetch);
    assert_false(e.npf.present);
    assert_int_equal(e.insn_len, 0); /* not an instruction exit */
    e = decode((struct vmx_exit_info){.reason = VMX_EXIT_EPT_VIOLATION,
                                      .qualification = EPT_QUAL_WRITE | (1 << 3),
                                      .guest_phys = 0x1000});
    assert_true(e.npf.write);
    assert_true(e.npf.present); /* readable but not writable */
    e = decode((struct vmx_exit_info){.reason = VMX_EXIT_EPT_VIOLATION,
                                      .qualification = EPT_QUAL_FETCH | EPT_QUAL_READ});
    assert_true(e.npf.fetch);
}

static void test_instruction_exits(void **state)
{
    (void)state;
    static const struct {
        uint32_t reason;
        enum exit_reason want;
        int kind;
        unsigned len;
    } cases[] = {
        {VMX_EXIT_CPUID, EXIT_CPUID, INSN_CPUID, 2},
        {VMX_EXIT_HLT, EXIT_HLT, INSN_HLT, 1},
        {VMX_EXIT_PAUSE, EXIT_PAUSE, INSN_PAUSE, 2},
        {VMX_EXIT_RDMSR, EXIT_MSR_READ, INSN_RDMSR, 2},
        {VMX_EXIT_WRMSR, EXIT_MSR_WRITE, INSN_WRMSR, 2},
        {VMX_EXIT_VMCALL, EXIT_HYPERCALL, INSN_VMCALL, 3},
        {VMX_EXIT_INVD, EXIT_INVD, INSN_INVD, 2},
        {VMX_EXIT_WBINVD, EXIT_WBINVD, INSN_WBINVD, 2},
        {VMX_EXIT_XSETBV, EXIT_XSETBV, INSN_XSETBV, 3},
        {VMX_EXIT_MWAIT, EXIT_UNDEFINED, INSN_MWAIT, 3},
        {VMX_EXIT_MONITOR, EXIT_UNDEFINED, INSN_MONITOR, 3},
        {VMX_EXIT_VMXON, EXIT_UNDEFINED, -1, 5},
        {VMX_EXIT_VMCLEAR, EXIT_UNDEFINED, -1, 4},
        {VMX_EXIT_VMLAUNCH, EXIT_UNDEFINED, -1, 3},
        {VMX_EXIT_INVEPT, EXIT_UNDEFINED, -1, 5},
        {VMX_EXIT_INVVPID, EXIT_UNDEFINED, -1, 5},
        {VMX_EXIT_VMFUNC, EXIT_UNDEFINED, -1, 3},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct exit_record e =
            decode((struct vmx_exit_info){.reason = cases[i].reason, .insn_len = cases[i].len});
        assert_int_equal(e.reason, cases[i].want);
        assert_int_equal(e.insn_kind, cases[i].kind);
        assert_int_equal(e.insn_len, cases[i].len);
        assert_int_equal(e.vendor_code, cases[i].reason);
    }
    /* A length outside 1..15 is not trusted. */
    assert_int_equal(decode((struct vmx_exit_info){.reason = VMX_EXIT_CPUID}).insn_len, 0);
    assert_int_equal(
        decode((struct vmx_exit_info){.reason = VMX_EXIT_CPUID, .insn_len = 16}).insn_len, 0);
}

/*
 * The exits the exit path takes with the length alone (vmx_instruction_exit):
 * exactly the instructions'. Any exit that may carry an interrupted event, NMI
 * unblocking, a CR access to emulate, the timer or an entry failure is not one.
 */
static void test_instruction_exit_set(void **state)
{
    (void)state;
    static const uint32_t instructions[] = {
        VMX_EXIT_CPUID,    VMX_EXIT_HLT,     VMX_EXIT_INVD,    VMX_EXIT_VMCALL, VMX_EXIT_VMCLEAR,
        VMX_EXIT_VMLAUNCH, VMX_EXIT_VMPTRLD, VMX_EXIT_VMPTRST, VMX_EXIT_VMREAD, VMX_EXIT_VMRESUME,
        VMX_EXIT_VMWRITE,  VMX_EXIT_VMXOFF,  VMX_EXIT_VMXON,   VMX_EXIT_IO,     VMX_EXIT_RDMSR,
        VMX_EXIT_WRMSR,    VMX_EXIT_MWAIT,   VMX_EXIT_MONITOR, VMX_EXIT_PAUSE,  VMX_EXIT_INVEPT,
        VMX_EXIT_INVVPID,  VMX_EXIT_WBINVD,  VMX_EXIT_XSETBV,  VMX_EXIT_VMFUNC,
    };
    for (uint32_t r = 0; r < 80; r++) {
        bool instruction = false;
        for (unsigned i = 0; i < sizeof(instructions) / sizeof(instructions[0]); i++)
            instruction |= instructions[i] == r;
        assert_int_equal(vmx_instruction_exit(r) != NULL, instruction);
        /* Entry failures and the flags in the upper half take the other path. */
        assert_null(vmx_instruction_exit(r | VMX_EXIT_ENTRY_FAILURE));
        assert_null(vmx_instruction_exit(r | (1u << 27)));
        assert_null(vmx_instruction_exit(r | (1u << 28)));
    }
    static const uint32_t others[] = {
        VMX_EXIT_EXCEPTION_NMI, VMX_EXIT_EXTINT,     VMX_EXIT_TRIPLE_FAULT,
        VMX_EXIT_INIT,          VMX_EXIT_SIPI,       VMX_EXIT_INTR_WINDOW,
        VMX_EXIT_NMI_WINDOW,    VMX_EXIT_CR_ACCESS,  VMX_EXIT_BAD_GUEST,
        VMX_EXIT_BAD_MSR_LOAD,  VMX_EXIT_MCE_ENTRY,  VMX_EXIT_EPT_VIOLATION,
        VMX_EXIT_EPT_MISCONFIG, VMX_EXIT_PREEMPTION,
    };
    for (unsigned i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        assert_null(vmx_instruction_exit(others[i]));
}

/* The exit path's decode of an instruction exit is vmx_decode_exit's. */
static void test_instruction_exit_decode(void **state)
{
    (void)state;
    uint64_t in = (0x3fdull << 16) | IO_QUAL_IN, out = (0x80ull << 16) | 1;
    struct exit_record e;
    memset(&e, 0xa5, sizeof(e));
    vmx_decode_instruction_exit(vmx_instruction_exit(VMX_EXIT_IO), VMX_EXIT_IO, 1, &e);
    vmx_decode_io(in, &e);
    struct exit_record want =
        decode((struct vmx_exit_info){.reason = VMX_EXIT_IO, .qualification = in, .insn_len = 1});
    assert_int_equal(e.reason, want.reason);
    assert_int_equal(e.vendor_code, want.vendor_code);
    assert_int_equal(e.insn_len, want.insn_len);
    assert_int_equal(e.insn_kind, want.insn_kind);
    assert_int_equal(e.io.port, 0x3fd);
    assert_int_equal(e.io.size, want.io.size);
    assert_true(e.io.in);
    assert_false(e.io.string);
    memset(&e, 0xa5, sizeof(e));
    vmx_decode_instruction_exit(vmx_instruction_exit(VMX_EXIT_IO), VMX_EXIT_IO, 1, &e);
    vmx_decode_io(out, &e);
    assert_int_equal(e.io.port, 0x80);
    assert_int_equal(e.io.size, 2);
    assert_false(e.io.in);
    memset(&e, 0xa5, sizeof(e));
    vmx_decode_instruction_exit(vmx_instruction_exit(VMX_EXIT_VMCALL), VMX_EXIT_VMCALL, 3, &e);
    assert_int_equal(e.reason, EXIT_HYPERCALL);
    assert_int_equal(e.insn_kind, INSN_VMCALL);
    assert_int_equal(e.insn_len, 3);
    assert_int_equal(e.vendor_code, VMX_EXIT_VMCALL);
    /* The record's fields outside the union, whatever they held before; RDMSR as the table says. */
    memset(&e, 0xa5, sizeof(e));
    vmx_decode_instruction_exit(vmx_instruction_exit(VMX_EXIT_RDMSR), VMX_EXIT_RDMSR, 2, &e);
    assert_int_equal(e.reason, EXIT_MSR_READ);
    assert_int_equal(e.insn_kind, INSN_RDMSR);
    assert_int_equal(e.insn_len, 2);
    assert_int_equal(e.vendor_code, VMX_EXIT_RDMSR);
    /* A length outside 1-15 is no length: vmm/ then decodes the instruction itself. */
    vmx_decode_instruction_exit(vmx_instruction_exit(VMX_EXIT_CPUID), VMX_EXIT_CPUID, 16, &e);
    assert_int_equal(e.reason, EXIT_CPUID);
    assert_int_equal(e.insn_len, 0);
}

static void test_event_exits(void **state)
{
    (void)state;
    uint32_t nmi = INTR_INFO_VALID | (INTR_TYPE_NMI << INTR_INFO_TYPE_SHIFT) | 2;
    assert_int_equal(
        decode((struct vmx_exit_info){.reason = VMX_EXIT_EXCEPTION_NMI, .intr_info = nmi}).reason,
        EXIT_NMI);
    uint32_t gp = INTR_INFO_VALID | (INTR_TYPE_HW_EXCEPT << INTR_INFO_TYPE_SHIFT) | 13;
    assert_int_equal(
        decode((struct vmx_exit_info){.reason = VMX_EXIT_EXCEPTION_NMI, .intr_info = gp}).reason,
        EXIT_UNKNOWN);
    static const struct {
        uint32_t reason;
        enum exit_reason want;
    } cases[] = {
        {VMX_EXIT_EXTINT, EXIT_EXTERNAL_INTERRUPT},
        {VMX_EXIT_TRIPLE_FAULT, EXIT_SHUTDOWN},
        {VMX_EXIT_INIT, EXIT_INIT},
        {VMX_EXIT_SIPI, EXIT_SIPI},
        {VMX_EXIT_INTR_WINDOW, EXIT_INTERRUPT_WINDOW},
        {VMX_EXIT_NMI_WINDOW, EXIT_NONE},
        {VMX_EXIT_PREEMPTION, EXIT_PREEMPTION_TIMER},
        {VMX_EXIT_EPT_MISCONFIG, EXIT_UNKNOWN},
        {29 /* MOV DR: never requested */, EXIT_UNKNOWN},
        {VMX_EXIT_CR_ACCESS, EXIT_UNKNOWN}, /* vmx_state.c emulates the ones it expects */
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct exit_record e =
            decode((struct vmx_exit_info){.reason = cases[i].reason, .insn_len = 3});
        assert_int_equal(e.reason, cases[i].want);
        assert_int_equal(e.insn_len, 0);
        assert_int_equal(e.vendor_code, cases[i].reason);
    }
}

static void test_entry_failures(void **state)
{
    (void)state;
    struct exit_record e = decode((struct vmx_exit_info){
        .reason = VMX_EXIT_ENTRY_FAILURE | VMX_EXIT_BAD_GUEST,
        .failed_check = "guest TR access rights 0x89: type 9 is not a busy TSS"});
    assert_int_equal(e.reason, EXIT_ENTRY_FAILED);
    assert_string_equal(e.fail.what, "VM entry failed: invalid guest state: guest TR access "
                                     "rights 0x89: type 9 is not a busy TSS");
    assert_int_equal(e.vendor_code, VMX_EXIT_ENTRY_FAILURE | VMX_EXIT_BAD_GUEST);
    e = decode((struct vmx_exit_info){.reason = VMX_EXIT_ENTRY_FAILURE | VMX_EXIT_BAD_GUEST,
                                      .qualification = 4});
    assert_string_equal(e.fail.what, "VM entry failed: invalid guest state (qualification 4)");
    assert_int_equal(e.fail.detail, 4);
    e = decode((struct vmx_exit_info){.reason = VMX_EXIT_ENTRY_FAILURE | VMX_EXIT_BAD_MSR_LOAD,
                                      .qualification = 1});
    assert_int_equal(e.reason, EXIT_ENTRY_FAILED);
    assert_non_null(strstr(e.fail.what, "MSR loading"));
    e = decode((struct vmx_exit_info){.reason = VMX_EXIT_ENTRY_FAILURE | VMX_EXIT_MCE_ENTRY});
    assert_non_null(strstr(e.fail.what, "machine-check"));
}

static void test_cr_access_qualification(void **state)
{
    (void)state;
    struct vmx_cr_access a;
    vmx_decode_cr_access(0x00000000, &a); /* mov cr0, rax */
    assert_int_equal(a.cr, 0);
    assert_int_equal(a.type, CR_MOV_TO);
    assert_int_equal(a.gpr, 0);
    vmx_decode_cr_access(0x00000b04, &a); /* mov cr4, r11 */
    assert_int_equal(a.cr, 4);
    assert_int_equal(a.gpr, 11);
    vmx_decode_cr_access(0x00000413, &a); /* mov rsp, cr3 */
    assert_int_equal(a.cr, 3);
    assert_int_equal(a.type, CR_MOV_FROM);
    assert_int_equal(a.gpr, 4);
    vmx_decode_cr_access(0x00010030, &a); /* lmsw ax=1 */
    assert_int_equal(a.type, CR_LMSW);
    assert_int_equal(a.lmsw_source, 1);
    struct guest_regs r = {.rax = 1,
                           .rcx = 2,
                           .rdx = 3,
                           .rbx = 4,
                           .rsp = 5,
                           .rbp = 6,
                           .rsi = 7,
                           .rdi = 8,
                           .r8 = 9,
                           .r15 = 16};
    assert_int_equal(*guest_gpr(&r, 0), 1);
    assert_int_equal(*guest_gpr(&r, 1), 2);
    assert_int_equal(*guest_gpr(&r, 2), 3);
    assert_int_equal(*guest_gpr(&r, 3), 4);
    assert_int_equal(*guest_gpr(&r, 4), 5);
    assert_int_equal(*guest_gpr(&r, 5), 6);
    assert_int_equal(*guest_gpr(&r, 6), 7);
    assert_int_equal(*guest_gpr(&r, 7), 8);
    assert_int_equal(*guest_gpr(&r, 8), 9);
    assert_int_equal(*guest_gpr(&r, 15), 16);
}

/* ------------------------------------------------------------ entry checks */

static struct vmx_caps check_caps;

/* The reset state as vmx_vcpu.c builds it, with addresses and a 64-bit host filled in. */
static struct vmcs_state valid_state_on(struct vmx_caps caps, bool real_mode)
{
    check_caps = caps;
    struct vmx_controls k = derive_ok(&check_caps);
    struct vmcs_state s;
    if (real_mode)
        vmx_reset_state_real(&check_caps, &k, 0x9a, &s);
    else
        vmx_reset_state(&check_caps, &k, 0x100000, &s);
    s.ctl.io_bitmap_a = 0x10000;
    s.ctl.io_bitmap_b = 0x11000;
    s.ctl.msr_bitmap = 0x12000;
    s.ctl.eptp = ept_pointer(0x13000, true);
    s.ctl.vpid = 1;
    s.host = (struct vmx_host_state){
        .cr0 = 0x80050033,
        .cr3 = 0x127000,
        .cr4 = 0x42620,
        .efer = 0xd01,
        .pat = PAT_DEFAULT,
        .gs_base = 0x135000,
        .tr_base = 0x135100,
        .gdtr_base = 0x135080,
        .idtr_base = 0x110000,
        .rsp = 0x122000,
        .rip = 0x104000,
        .cs = 0x08,
        .ss = 0x10,
        .ds = 0x10,
        .es = 0x10,
        .tr = 0x18,
    };
    return s;
}

static struct vmcs_state valid_state(bool real_mode)
{
    return valid_state_on(skylake(), real_mode);
}

static void expect_failure(const struct vmcs_state *s, const char *words)
{
    char why[160] = "";
    if (vmx_check_entry(&check_caps, s, why, sizeof(why)) != -1)
        fail_msg("no check caught the violation expected to mention '%s'", words);
    if (!strstr(why, words))
        fail_msg("check says '%s', expected it to mention '%s'", why, words);
}

static void test_reset_states_pass(void **state)
{
    (void)state;
    char why[160] = "";
    struct vmcs_state s = valid_state(false);
    if (vmx_check_entry(&check_caps, &s, why, sizeof(why)))
        fail_msg("protected-mode reset state fails: %s", why);
    assert_int_equal(s.guest.cr0, 0x31);
    assert_int_equal(s.ctl.cr0_shadow, 0x11);
    assert_int_equal(s.guest.cr4, 0x2000);
    assert_int_equal(s.ctl.cr4_shadow, 0);
    assert_int_equal(s.guest.seg[SEG_TR].ar, 0x8b);
    assert_int_equal(s.guest.seg[SEG_LDTR].ar, AR_UNUSABLE);
    assert_int_equal(s.guest.rflags, 2);
    assert_int_equal(s.guest.link, ~0ull);
    assert_int_equal(s.guest.dr7, 0x400);
    assert_int_equal(s.guest.pat, PAT_DEFAULT);
    assert_int_equal(s.guest.rip, 0x100000);
    s = valid_state(true);
    if (vmx_check_entry(&check_caps, &s, why, sizeof(why)))
        fail_msg("real-mode reset state fails: %s", why);
    assert_int_equal(s.guest.seg[SEG_CS].sel, 0x9a00);
    assert_int_equal(s.guest.seg[SEG_CS].base, 0x9a000);
    assert_int_equal(s.guest.cr0 & CR0_PE, 0);
}

/* Each mutation breaks one rule; the checker must name it. */
static void test_guest_checks(void **state)
{
    (void)state;
    struct vmcs_state s;
#define CASE(stmt, words)                                                                          \
    do {                                                                                           \
        s = valid_state(false);                                                                    \
        stmt;                                                                                      \
        expect_failure(&s, words);                                                                 \
    } while (0)
    CASE(s.guest.cr0 &= ~CR0_NE, "CR0_FIXED0");
    CASE(s.guest.cr0 = 0x80000030, "PG set without PE");
    CASE(s.guest.cr4 &= ~CR4_VMXE, "CR4_FIXED0");
    CASE(s.guest.cr4 |= 1ull << 12, "CR4_FIXED1");
    CASE(s.guest.cr3 = 1ull << 45, "guest CR3");
    CASE(s.guest.dr7 = 1ull << 40, "DR7");
    CASE(s.guest.sysenter_eip = 1ull << 60, "SYSENTER");
    CASE(s.guest.pat = 0x0007040600070402ull, "IA32_PAT");
    CASE(s.guest.efer = 1u << 12, "IA32_EFER 0x1000 sets reserved bits");
    CASE(s.guest.efer = EFER_LMA | EFER_LME, "LMA differs from the 'IA-32e mode guest'");
    CASE(s.ctl.entry |= ENTRY_IA32E, "requires guest CR0.PG and CR4.PAE");
    CASE(s.guest.cr4 |= CR4_PCIDE, "PCIDE");
    /* Segment registers. */
    CASE(s.guest.seg[SEG_CS].ar = 0xc09a, "CS access rights 0xc09a: type 10");
    CASE(s.guest.seg[SEG_CS].ar = 0xc08b, "CS access rights 0xc08b: S");
    CASE(s.guest.seg[SEG_CS].ar = 0xc01b, "CS access rights 0xc01b: P (present)");
    CASE(s.guest.seg[SEG_CS].ar = 0xc19b, "CS access rights 0xc19b: reserved");
    CASE(s.guest.seg[SEG_CS].ar = 0xc0bb, "CS.DPL 1 differs from SS.DPL 0");
    CASE(s.guest.seg[SEG_CS].ar |= AR_UNUSABLE, "CS is marked unusable");
    CASE(s.guest.seg[SEG_CS].limit = 0xffffe, "CS: G=1 does not match the limit 0xffffe");
    CASE(s.guest.seg[SEG_DS].ar = 0x4093, "DS: G=0 does not match the limit 0xffffffff");
    CASE(s.guest.seg[SEG_DS].ar = 0xc092, "DS access rights 0xc092: type 2 is not accessed");
    CASE(s.guest.seg[SEG_ES].ar = 0xc099, "ES access rights 0xc099: code segment not readable");
    CASE(s.guest.seg[SEG_SS].ar = 0xc09b, "SS access rights 0xc09b: type 11");
    CASE(s.guest.seg[SEG_SS].base = 1ull << 32, "SS base");
    CASE(s.guest.seg[SEG_TR].ar = 0x89, "TR access rights 0x89: type 9 is not a busy TSS");
    CASE(s.guest.seg[SEG_TR].ar = 0x9b, "TR access rights 0x9b: S must be 0");
    CASE(s.guest.seg[SEG_TR].ar = 0x0b, "TR access rights 0xb: P (present)");
    CASE(s.guest.seg[SEG_TR].ar = AR_UNUSABLE, "TR is marked unusable");
    CASE(s.guest.seg[SEG_TR].sel = 4, "TR selector 0x4: TI");
    CASE(s.guest.seg[SEG_LDTR].ar = 0x83, "LDTR access rights 0x83: type 3 is not an LDT");
    CASE(s.guest.seg[SEG_FS].base = 1ull << 50, "TR/FS/GS base");
    CASE(s.guest.gdtr_limit = 0x10000, "GDTR/IDTR limit");
    /* RIP and RFLAGS. */
    CASE(s.guest.rip = 1ull << 32, "RIP 0x100000000");
    CASE(s.guest.rflags = 0, "bit 1 must be 1");
    CASE(s.guest.rflags = 0x2 | (1u << 3), "reserved bits");
    CASE(s.guest.rflags = 0x2 | RFLAGS_VM, "not a virtual-8086 segment");
    /* Activity, interruptibility, pending debug exceptions, link pointer. */
    CASE(s.guest.activity = 5, "activity state 5");
    CASE(s.guest.interruptibility = INTERRUPTIBILITY_STI, "blocking by STI with RFLAGS.IF=0");
    CASE((s.guest.rflags |= RFLAGS_IF,
          s.guest.interruptibility = INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS),
         "both set");
    CASE((s.guest.rflags |= RFLAGS_IF, s.guest.interruptibility = INTERRUPTIBILITY_STI,
          s.guest.activity = ACTIVITY_HLT),
         "must be active");
    CASE(s.guest.interruptibility = 1u << 7, "interruptibility 0x80: reserved");
    CASE(s.guest.interruptibility = INTERRUPTIBILITY_SMI, "blocking by SMI");
    CASE(s.guest.pending_dbg = 1u << 4, "pending debug exceptions 0x10");
    CASE((s.guest.activity = ACTIVITY_HLT, s.guest.pending_dbg = 1u << 14), "BS must be 0");
    CASE(s.guest.link = 0, "link pointer");
    /* PDPTEs of PAE paging (with EPT, from the VMCS). */
    CASE((s.guest.cr0 |= CR0_PG, s.guest.cr4 |= CR4_PAE, s.guest.pdpte[2] = 0x1007),
         "PDPTE2 0x1007");
#undef CASE
}

static void test_real_mode_rules(void **state)
{
    (void)state;
    struct vmcs_state s = valid_state(true);
    s.guest.seg[SEG_CS].ar = 0xfb; /* DPL 3, as SS's: CS.DPL must match */
    s.guest.seg[SEG_SS].ar = 0xf3;
    expect_failure(&s, "SS.DPL must be 0 in real mode");
    /* Real mode delivers exceptions without error codes. */
    s = valid_state(true);
    s.ctl.entry_intr_info =
        INTR_INFO_VALID | INTR_INFO_ERROR | (INTR_TYPE_HW_EXCEPT << INTR_INFO_TYPE_SHIFT) | 13;
    expect_failure(&s, "in real mode");
    s.ctl.entry_intr_info &= ~INTR_INFO_ERROR;
    char why[160];
    assert_int_equal(vmx_check_entry(&check_caps, &s, why, sizeof(why)), 0);
}

static void test_control_checks(void **state)
{
    (void)state;
    struct vmcs_state s;
#define CASE(stmt, words)                                                                          \
    do {                                                                                           \
        s = valid_state(false);                                                                    \
        stmt;                                                                                      \
        expect_failure(&s, words);                                                                 \
    } while (0)
    CASE(s.ctl.pin &= ~2u, "pin-based controls 0x0000003d: bit 1 must be 1");
    CASE(s.ctl.pin |= 1u << 7, "bit 7 is not supported");
    CASE(s.ctl.proc2 &= ~PROC2_EPT, "'unrestricted guest' requires 'enable EPT'");
    CASE(s.ctl.proc &= ~PROC_SECONDARY, "without 'activate secondary controls'");
    CASE(s.ctl.pin &= ~PIN_NMI, "'virtual NMIs' requires 'NMI exiting'");
    CASE((s.ctl.pin &= ~PIN_VIRTUAL_NMIS, s.ctl.proc |= PROC_NMI_WINDOW),
         "'NMI-window exiting' requires 'virtual NMIs'");
    CASE(s.ctl.vpid = 0, "VPID 0");
    CASE(s.ctl.eptp = 0x13000 | (2 << 3) | 6, "page-walk length");
    CASE(s.ctl.eptp = 0x13000 | (3 << 3) | 1, "memory type 1");
    CASE(s.ctl.eptp |= 1u << 8, "reserved bits");
    CASE(s.ctl.io_bitmap_a = 0x10010, "I/O bitmap A");
    CASE(s.ctl.msr_bitmap = 1ull << 40, "MSR bitmap");
    CASE(s.ctl.cr3_target_count = 5, "CR3-target count 5");
    CASE(s.ctl.exit |= EXIT_SAVE_TIMER, "'save VMX-preemption timer value'");
    CASE(s.ctl.entry |= ENTRY_SMM, "'entry to SMM'");
    /* Event injection. */
    uint32_t hw = INTR_INFO_VALID | (INTR_TYPE_HW_EXCEPT << INTR_INFO_TYPE_SHIFT);
    CASE(s.ctl.entry_intr_info = hw | 13, "exception 13 needs 'deliver error code'");
    CASE(s.ctl.entry_intr_info = hw | INTR_INFO_ERROR | 6, "'deliver error code' set");
    CASE(s.ctl.entry_intr_info = hw | 32, "vector 32 is above 31");
    CASE(s.ctl.entry_intr_info = INTR_INFO_VALID | (1u << INTR_INFO_TYPE_SHIFT), "type 1");
    CASE(s.ctl.entry_intr_info = INTR_INFO_VALID | (INTR_TYPE_NMI << INTR_INFO_TYPE_SHIFT) | 3,
         "NMI injection with vector 3");
    CASE(s.ctl.entry_intr_info = hw | 6 | (1u << 20), "bits 30:12");
    CASE((s.ctl.entry_intr_info =
              INTR_INFO_VALID | (INTR_TYPE_SW_INT << INTR_INFO_TYPE_SHIFT) | 0x80,
          s.ctl.entry_insn_len = 16),
         "instruction length 16");
    CASE(s.ctl.entry_intr_info = INTR_INFO_VALID | 0x30, "RFLAGS.IF=0");
    CASE((s.guest.rflags |= RFLAGS_IF, s.guest.interruptibility = INTERRUPTIBILITY_MOVSS,
          s.ctl.entry_intr_info = INTR_INFO_VALID | 0x30),
         "external interrupt under blocking");
    CASE((s.guest.interruptibility = INTERRUPTIBILITY_NMI,
          s.ctl.entry_intr_info = INTR_INFO_VALID | (INTR_TYPE_NMI << INTR_INFO_TYPE_SHIFT) | 2),
         "blocking by virtual NMI");
    CASE((s.guest.activity = ACTIVITY_HLT, s.ctl.entry_intr_info = hw | 6),
         "not allowed in the HLT activity state");
    /* Host state. */
    CASE(s.host.cs = 0, "host CS selector is 0");
    CASE(s.host.tr = 0x1b, "host TR selector 0x1b: RPL");
    CASE(s.host.cr4 &= ~CR4_VMXE, "host CR4");
    CASE(s.host.cr0 &= ~CR0_NE, "host CR0");
    CASE(s.host.rip = 1ull << 50, "host RIP");
    CASE(s.host.gs_base = 1ull << 50, "host FS/GS/TR/GDTR/IDTR base");
    CASE(s.ctl.exit &= ~EXIT_HOST_64, "'host address-space size' is 0");
    CASE(s.host.efer &= ~EFER_LMA, "host IA32_EFER");
#undef CASE
    /* Separately, each part checks only its own fields. */
    s = valid_state(false);
    s.guest.link = 0;
    char why[160];
    assert_int_equal(vmx_check_controls(&check_caps, &s, why, sizeof(why)), 0);
    assert_int_equal(vmx_check_host(&check_caps, &s, why, sizeof(why)), 0);
    assert_int_equal(vmx_check_guest(&check_caps, &s, why, sizeof(why)), -1);
}

/* PLE and unconditional PAUSE exiting are never set together: the latter would override PLE. */
static void test_pause_controls(void **state)
{
    (void)state;
    unsigned ple = VMX_OPT_PLE, every = VMX_OPT_PAUSE_EXITING;
    uint32_t proc = PROC_PAUSE | PROC_HLT, proc2 = PROC2_EPT;
    vmx_pause_controls(ple, PAUSE_EXIT_FILTERED, &proc, &proc2);
    assert_int_equal(proc, PROC_HLT);
    assert_int_equal(proc2, PROC2_EPT | PROC2_PLE);
    vmx_pause_controls(ple, PAUSE_EXIT_NEVER, &proc, &proc2);
    assert_int_equal(proc, PROC_HLT);
    assert_int_equal(proc2, PROC2_EPT);
    vmx_pause_controls(every, PAUSE_EXIT_EVERY, &proc, &proc2);
    assert_int_equal(proc, PROC_HLT | PROC_PAUSE);
    assert_int_equal(proc2, PROC2_EPT);
    /* Asked for what the CPU lacks: nothing rather than the wrong kind of exit. */
    vmx_pause_controls(every, PAUSE_EXIT_FILTERED, &proc, &proc2);
    assert_int_equal(proc, PROC_HLT);
    assert_int_equal(proc2, PROC2_EPT);
}

/*
 * Moving a VMCS: only where it is active may it be loaded again without
 * more; a cleared one needs host state and flushes; one active elsewhere
 * is refused until that CPU clears it.
 */
static void test_vmcs_load_rules(void **state)
{
    (void)state;
    assert_int_equal(vmx_load_action(true, 0, 0), VMX_LOAD_CURRENT);
    assert_int_equal(vmx_load_action(false, 0, 0), VMX_LOAD_PTRLD);
    assert_int_equal(vmx_load_action(false, -1, 0), VMX_LOAD_FRESH);
    assert_int_equal(vmx_load_action(false, -1, 3), VMX_LOAD_FRESH);
    assert_int_equal(vmx_load_action(false, 1, 0), VMX_LOAD_REFUSE);
    assert_int_equal(vmx_load_action(false, 0, 1), VMX_LOAD_REFUSE);
}

/* The timer fires no earlier than asked (rounded up to its rate), and the field saturates. */
static void test_timer_value(void **state)
{
    (void)state;
    assert_int_equal(vmx_timer_value(0, 7), 0);
    assert_int_equal(vmx_timer_value(1, 7), 1);
    assert_int_equal(vmx_timer_value(128, 7), 1);
    assert_int_equal(vmx_timer_value(129, 7), 2);
    assert_int_equal(vmx_timer_value(100000, 0), 100000);
    assert_int_equal(vmx_timer_value(0xffffffffull, 0), 0xffffffffu);
    assert_int_equal(vmx_timer_value(0x100000000ull, 0), 0xffffffffu);
    assert_int_equal(vmx_timer_value(UINT64_MAX, 7), 0xffffffffu);
    assert_int_equal(vmx_timer_value(0xffffffffull << 7, 7), 0xffffffffu);
}

/*
 * The deadline's distance, bounded by the backstop; with no deadline the
 * backstop alone, the same at every entry (what lets the VMCS keep it).
 */
static void test_timer_left(void **state)
{
    (void)state;
    uint64_t now = 1000000, backstop = 100000;
    assert_int_equal(vmx_timer_left(now + 500, now, 0), 500);
    assert_int_equal(vmx_timer_left(now + 500, now, backstop), 500);
    assert_int_equal(vmx_timer_left(now + 5 * backstop, now, 0), 5 * backstop);
    assert_int_equal(vmx_timer_left(now + 5 * backstop, now, backstop), backstop);
    assert_int_equal(vmx_timer_left(now, now, backstop), 0);
    assert_int_equal(vmx_timer_left(now - 1, now, backstop), 0);
    assert_int_equal(vmx_timer_left(0, now, backstop), backstop);
    assert_int_equal(vmx_timer_left(0, now + 12345, backstop), backstop);
    assert_true(vmx_timer_left(0, now, 0) == UINT64_MAX);
}

/*
 * Under KVM's nested VMX (kvm_nested): controls derive, PAUSE-loop exiting is
 * missing so every PAUSE exits and the software detector counts them, the
 * preemption timer counts at TSC >> 5, flushes are single-context, and both
 * reset states pass pollux's own VM-entry checks with the PAUSE and timer
 * controls as the backend sets them.
 */
static void test_kvm_nested_vmx(void **state)
{
    (void)state;
    struct vmx_caps c = kvm_nested();
    struct vmx_controls k = derive_ok(&c);
    assert_true(k.missing & VMX_OPT_PLE);
    unsigned want =
        VMX_OPT_PAUSE_EXITING | VMX_OPT_PREEMPTION_TIMER | VMX_OPT_VPID | VMX_OPT_VIRTUAL_NMIS;
    assert_int_equal(k.available & want, want);
    assert_int_equal(k.proc & (PROC_CR3_LOAD | PROC_CR3_STORE), 0);
    assert_int_equal(vmx_pause_hw_of(k.available), PAUSE_HW_EVERY);
    assert_int_equal(vmx_pause_hw_of(0), PAUSE_HW_NONE);

    struct spin_params p = SPIN_PARAMS_KVM;
    struct spin_choice sc;
    spin_choose(&p, vmx_pause_hw_of(k.available), false, 2000000, &sc);
    assert_int_equal(sc.detector, SPIN_DETECT_SOFTWARE);
    assert_int_equal(sc.mode, PAUSE_EXIT_EVERY);
    assert_null(sc.window);
    assert_int_equal(sc.sw.window_cycles, 2000000); /* 1000 us at 2 GHz */

    uint32_t proc = k.proc, proc2 = k.proc2;
    vmx_pause_controls(k.available, sc.mode, &proc, &proc2);
    assert_true(proc & PROC_PAUSE);
    assert_false(proc2 & PROC2_PLE);

    assert_int_equal(c.misc & VMX_MISC_TIMER_RATE, 5);
    assert_int_equal(vmx_timer_value(2000000, c.misc & VMX_MISC_TIMER_RATE), 62500);
    assert_int_equal(vmx_timer_value(33, 5), 2);

    assert_int_equal(k.invept_type, INVEPT_SINGLE);
    assert_int_equal(k.invvpid_type, INVVPID_SINGLE);

    char why[160] = "";
    for (int real = 0; real < 2; real++) {
        struct vmcs_state s = valid_state_on(c, real);
        s.ctl.proc = proc;
        s.ctl.proc2 = proc2;
        s.ctl.pin |= PIN_PREEMPTION_TIMER;
        if (vmx_check_entry(&check_caps, &s, why, sizeof(why)))
            fail_msg("%s reset state under nested KVM fails: %s", real ? "real-mode" : "protected",
                     why);
    }
}

/* The flush types follow the capabilities: all-context where single-context is missing. */
static void test_flush_types(void **state)
{
    (void)state;
    struct vmx_caps c = skylake();
    struct vmx_controls k = derive_ok(&c);
    assert_int_equal(k.invept_type, INVEPT_SINGLE);
    assert_int_equal(k.invvpid_type, INVVPID_SINGLE);
    c.ept_vpid &= ~(EPT_CAP_INVEPT_SINGLE | VPID_CAP_SINGLE);
    k = derive_ok(&c);
    assert_int_equal(k.invept_type, INVEPT_ALL);
    assert_int_equal(k.invvpid_type, INVVPID_ALL);
    assert_true(k.available & VMX_OPT_VPID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kvm_nested_vmx),
        cmocka_unit_test(test_flush_types),
        cmocka_unit_test(test_pause_controls),
        cmocka_unit_test(test_vmcs_load_rules),
        cmocka_unit_test(test_controls_from_true_caps),
        cmocka_unit_test(test_forced_bits_are_set),
        cmocka_unit_test(test_true_controls_choose_the_msr),
        cmocka_unit_test(test_required_features_missing),
        cmocka_unit_test(test_optional_features_missing),
        cmocka_unit_test(test_cr_masks_and_real_values),
        cmocka_unit_test(test_cr0_write_switches_long_mode),
        cmocka_unit_test(test_cr0_write_faults),
        cmocka_unit_test(test_cr4_write_and_lmsw),
        cmocka_unit_test_setup_teardown(test_ept_large_and_small_leaves, ept_setup, ept_teardown),
        cmocka_unit_test_setup_teardown(test_ept_permissions_and_memory_type, ept_setup,
                                        ept_teardown),
        cmocka_unit_test(test_ept_pointer),
        cmocka_unit_test(test_io_qualification),
        cmocka_unit_test(test_ept_violation),
        cmocka_unit_test(test_instruction_exits),
        cmocka_unit_test(test_instruction_exit_set),
        cmocka_unit_test(test_instruction_exit_decode),
        cmocka_unit_test(test_event_exits),
        cmocka_unit_test(test_entry_failures),
        cmocka_unit_test(test_cr_access_qualification),
        cmocka_unit_test(test_reset_states_pass),
        cmocka_unit_test(test_guest_checks),
        cmocka_unit_test(test_real_mode_rules),
        cmocka_unit_test(test_control_checks),
        cmocka_unit_test(test_timer_value),
        cmocka_unit_test(test_timer_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

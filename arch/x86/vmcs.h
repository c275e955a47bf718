/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * VMCS field encodings, control bits and exit-reason numbers (Intel SDM
 * vol. 3C, appendix B and C, chapter 24). Constants only, so host unit tests
 * include it too.
 */
#ifndef POLLUX_ARCH_X86_VMCS_H
#define POLLUX_ARCH_X86_VMCS_H

#include "arch/x86/cpu.h" /* EFER_LME, EFER_NXE, RFLAGS_IF, MSR numbers */

/* Capability MSRs beyond those arch/x86/cpu.h names. */
#define MSR_VMX_CR0_FIXED0  0x486
#define MSR_VMX_CR0_FIXED1  0x487
#define MSR_VMX_CR4_FIXED0  0x488
#define MSR_VMX_CR4_FIXED1  0x489
#define MSR_VMX_TRUE_EXIT   0x48f
#define MSR_VMX_TRUE_ENTRY  0x490
#define VMX_BASIC_REVISION  0x7fffffffull
#define VMX_BASIC_TRUE_CTLS (1ull << 55)
#define VMX_MISC_TIMER_RATE 0x1full
#define VMX_MISC_INSN_LEN_0 (1ull << 30) /* software events may be injected with length 0 */

/* IA32_VMX_EPT_VPID_CAP */
#define EPT_CAP_WALK4         (1ull << 6)
#define EPT_CAP_UC            (1ull << 8)
#define EPT_CAP_WB            (1ull << 14)
#define EPT_CAP_2M            (1ull << 16)
#define EPT_CAP_1G            (1ull << 17)
#define EPT_CAP_AD            (1ull << 21)
#define EPT_CAP_INVEPT        (1ull << 20)
#define EPT_CAP_INVEPT_SINGLE (1ull << 25)
#define EPT_CAP_INVEPT_ALL    (1ull << 26)
#define VPID_CAP_INVVPID      (1ull << 32)
#define VPID_CAP_SINGLE       (1ull << 41)
#define VPID_CAP_ALL          (1ull << 42)

/* INVEPT / INVVPID types */
#define INVEPT_SINGLE  1
#define INVEPT_ALL     2
#define INVVPID_SINGLE 1
#define INVVPID_ALL    2

/* 16-bit fields */
#define VMCS_VPID           0x0000
#define VMCS_GUEST_ES_SEL   0x0800
#define VMCS_GUEST_CS_SEL   0x0802
#define VMCS_GUEST_SS_SEL   0x0804
#define VMCS_GUEST_DS_SEL   0x0806
#define VMCS_GUEST_FS_SEL   0x0808
#define VMCS_GUEST_GS_SEL   0x080a
#define VMCS_GUEST_LDTR_SEL 0x080c
#define VMCS_GUEST_TR_SEL   0x080e
#define VMCS_HOST_ES_SEL    0x0c00
#define VMCS_HOST_CS_SEL    0x0c02
#define VMCS_HOST_SS_SEL    0x0c04
#define VMCS_HOST_DS_SEL    0x0c06
#define VMCS_HOST_FS_SEL    0x0c08
#define VMCS_HOST_GS_SEL    0x0c0a
#define VMCS_HOST_TR_SEL    0x0c0c

/* 64-bit fields */
#define VMCS_IO_BITMAP_A     0x2000
#define VMCS_IO_BITMAP_B     0x2002
#define VMCS_MSR_BITMAP      0x2004
#define VMCS_TSC_OFFSET      0x2010
#define VMCS_EPT_POINTER     0x201a
#define VMCS_XSS_EXIT_BITMAP 0x202c
#define VMCS_GUEST_PHYS_ADDR 0x2400
#define VMCS_LINK_POINTER    0x2800
#define VMCS_GUEST_DEBUGCTL  0x2802
#define VMCS_GUEST_PAT       0x2804
#define VMCS_GUEST_EFER      0x2806
#define VMCS_GUEST_PDPTE0    0x280a /* PDPTE1..3 follow at +2 each */
#define VMCS_HOST_PAT        0x2c00
#define VMCS_HOST_EFER       0x2c02

/* 32-bit fields */
#define VMCS_PIN_CONTROLS           0x4000
#define VMCS_PROC_CONTROLS          0x4002
#define VMCS_EXCEPTION_BITMAP       0x4004
#define VMCS_CR3_TARGET_COUNT       0x400a
#define VMCS_EXIT_CONTROLS          0x400c
#define VMCS_EXIT_MSR_STORE_COUNT   0x400e
#define VMCS_EXIT_MSR_LOAD_COUNT    0x4010
#define VMCS_ENTRY_CONTROLS         0x4012
#define VMCS_ENTRY_MSR_LOAD_COUNT   0x4014
#define VMCS_ENTRY_INTR_INFO        0x4016
#define VMCS_ENTRY_ERROR_CODE       0x4018
#define VMCS_ENTRY_INSN_LEN         0x401a
#define VMCS_PROC2_CONTROLS         0x401e
#define VMCS_PLE_GAP                0x4020
#define VMCS_PLE_WINDOW             0x4022
#define VMCS_INSN_ERROR             0x4400
#define VMCS_EXIT_REASON            0x4402
#define VMCS_EXIT_INTR_INFO         0x4404
#define VMCS_IDT_VECTORING_INFO     0x4408
#define VMCS_IDT_VECTORING_ERROR    0x440a
#define VMCS_EXIT_INSN_LEN          0x440c
#define VMCS_GUEST_ES_LIMIT         0x4800
#define VMCS_GUEST_CS_LIMIT         0x4802
#define VMCS_GUEST_SS_LIMIT         0x4804
#define VMCS_GUEST_DS_LIMIT         0x4806
#define VMCS_GUEST_FS_LIMIT         0x4808
#define VMCS_GUEST_GS_LIMIT         0x480a
#define VMCS_GUEST_LDTR_LIMIT       0x480c
#define VMCS_GUEST_TR_LIMIT         0x480e
#define VMCS_GUEST_GDTR_LIMIT       0x4810
#define VMCS_GUEST_IDTR_LIMIT       0x4812
#define VMCS_GUEST_ES_AR            0x4814
#define VMCS_GUEST_CS_AR            0x4816
#define VMCS_GUEST_SS_AR            0x4818
#define VMCS_GUEST_DS_AR            0x481a
#define VMCS_GUEST_FS_AR            0x481c
#define VMCS_GUEST_GS_AR            0x481e
#define VMCS_GUEST_LDTR_AR          0x4820
#define VMCS_GUEST_TR_AR            0x4822
#define VMCS_GUEST_INTERRUPTIBILITY 0x4824
#define VMCS_GUEST_ACTIVITY         0x4826
#define VMCS_GUEST_SYSENTER_CS      0x482a
#define VMCS_PREEMPTION_TIMER       0x482e
#define VMCS_HOST_SYSENTER_CS       0x4c00

/* Natural-width fields */
#define VMCS_CR0_MASK           0x6000
#define VMCS_CR4_MASK           0x6002
#define VMCS_CR0_SHADOW         0x6004
#define VMCS_CR4_SHADOW         0x6006
#define VMCS_EXIT_QUALIFICATION 0x6400
#define VMCS_GUEST_CR0          0x6800
#define VMCS_GUEST_CR3          0x6802
#define VMCS_GUEST_CR4          0x6804
#define VMCS_GUEST_ES_BASE      0x6806
#define VMCS_GUEST_CS_BASE      0x6808
#define VMCS_GUEST_SS_BASE      0x680a
#define VMCS_GUEST_DS_BASE      0x680c
#define VMCS_GUEST_FS_BASE      0x680e
#define VMCS_GUEST_GS_BASE      0x6810
#define VMCS_GUEST_LDTR_BASE    0x6812
#define VMCS_GUEST_TR_BASE      0x6814
#define VMCS_GUEST_GDTR_BASE    0x6816
#define VMCS_GUEST_IDTR_BASE    0x6818
#define VMCS_GUEST_DR7          0x681a
#define VMCS_GUEST_RSP          0x681c
#define VMCS_GUEST_RIP          0x681e
#define VMCS_GUEST_RFLAGS       0x6820
#define VMCS_GUEST_PENDING_DBG  0x6822
#define VMCS_GUEST_SYSENTER_ESP 0x6824
#define VMCS_GUEST_SYSENTER_EIP 0x6826
#define VMCS_HOST_CR0           0x6c00
#define VMCS_HOST_CR3           0x6c02
#define VMCS_HOST_CR4           0x6c04
#define VMCS_HOST_FS_BASE       0x6c06
#define VMCS_HOST_GS_BASE       0x6c08
#define VMCS_HOST_TR_BASE       0x6c0a
#define VMCS_HOST_GDTR_BASE     0x6c0c
#define VMCS_HOST_IDTR_BASE     0x6c0e
#define VMCS_HOST_SYSENTER_ESP  0x6c10
#define VMCS_HOST_SYSENTER_EIP  0x6c12
#define VMCS_HOST_RSP           0x6c14
#define VMCS_HOST_RIP           0x6c16

/* Pin-based controls */
#define PIN_EXT_INTR         (1u << 0)
#define PIN_NMI              (1u << 3)
#define PIN_VIRTUAL_NMIS     (1u << 5)
#define PIN_PREEMPTION_TIMER (1u << 6)

/* Primary processor-based controls */
#define PROC_INTR_WINDOW (1u << 2)
#define PROC_TSC_OFFSET  (1u << 3)
#define PROC_HLT         (1u << 7)
#define PROC_INVLPG      (1u << 9)
#define PROC_MWAIT       (1u << 10)
#define PROC_RDPMC       (1u << 11)
#define PROC_RDTSC       (1u << 12)
#define PROC_CR3_LOAD    (1u << 15)
#define PROC_CR3_STORE   (1u << 16)
#define PROC_CR8_LOAD    (1u << 19)
#define PROC_CR8_STORE   (1u << 20)
#define PROC_TPR_SHADOW  (1u << 21)
#define PROC_NMI_WINDOW  (1u << 22)
#define PROC_MOV_DR      (1u << 23)
#define PROC_IO_BITMAPS  (1u << 25)
#define PROC_MTF         (1u << 27)
#define PROC_MSR_BITMAPS (1u << 28)
#define PROC_MONITOR     (1u << 29)
#define PROC_PAUSE       (1u << 30)
#define PROC_SECONDARY   (1u << 31)

/* Secondary processor-based controls */
#define PROC2_EPT          (1u << 1)
#define PROC2_RDTSCP       (1u << 3)
#define PROC2_VPID         (1u << 5)
#define PROC2_UNRESTRICTED (1u << 7)
#define PROC2_PLE          (1u << 10)
#define PROC2_INVPCID      (1u << 12)
#define PROC2_XSAVES       (1u << 20)

/* VM-exit controls */
#define EXIT_SAVE_DEBUG (1u << 2)
#define EXIT_HOST_64    (1u << 9)
#define EXIT_ACK_INTR   (1u << 15)
#define EXIT_SAVE_PAT   (1u << 18)
#define EXIT_LOAD_PAT   (1u << 19)
#define EXIT_SAVE_EFER  (1u << 20)
#define EXIT_LOAD_EFER  (1u << 21)
#define EXIT_SAVE_TIMER (1u << 22)

/* VM-entry controls */
#define ENTRY_LOAD_DEBUG (1u << 2)
#define ENTRY_IA32E      (1u << 9)
#define ENTRY_SMM        (1u << 10)
#define ENTRY_DUAL_MON   (1u << 11)
#define ENTRY_LOAD_PAT   (1u << 14)
#define ENTRY_LOAD_EFER  (1u << 15)

/* Interruption information (entry, exit, IDT vectoring) */
#define INTR_INFO_VECTOR      0xffu
#define INTR_INFO_TYPE_SHIFT  8
#define INTR_INFO_TYPE        (7u << INTR_INFO_TYPE_SHIFT)
#define INTR_INFO_ERROR       (1u << 11)
#define INTR_INFO_NMI_UNBLOCK (1u << 12)
#define INTR_INFO_VALID       (1u << 31)
#define INTR_TYPE_EXT         0u
#define INTR_TYPE_NMI         2u
#define INTR_TYPE_HW_EXCEPT   3u
#define INTR_TYPE_SW_INT      4u
#define INTR_TYPE_PRIV_SW     5u
#define INTR_TYPE_SW_EXCEPT   6u
#define INTR_TYPE_OTHER       7u

/* Guest interruptibility state */
#define INTERRUPTIBILITY_STI   (1u << 0)
#define INTERRUPTIBILITY_MOVSS (1u << 1)
#define INTERRUPTIBILITY_SMI   (1u << 2)
#define INTERRUPTIBILITY_NMI   (1u << 3)

/* Guest activity state */
#define ACTIVITY_ACTIVE   0
#define ACTIVITY_HLT      1
#define ACTIVITY_SHUTDOWN 2
#define ACTIVITY_SIPI     3

/* Segment access rights (VMCS format) */
#define AR_TYPE      0xfu
#define AR_S         (1u << 4)
#define AR_DPL_SHIFT 5
#define AR_P         (1u << 7)
#define AR_L         (1u << 13)
#define AR_DB        (1u << 14)
#define AR_G         (1u << 15)
#define AR_UNUSABLE  (1u << 16)

/* Basic exit reasons (bits 15:0 of the exit-reason field) */
#define VMX_EXIT_EXCEPTION_NMI 0
#define VMX_EXIT_EXTINT        1
#define VMX_EXIT_TRIPLE_FAULT  2
#define VMX_EXIT_INIT          3
#define VMX_EXIT_SIPI          4
#define VMX_EXIT_INTR_WINDOW   7
#define VMX_EXIT_NMI_WINDOW    8
#define VMX_EXIT_CPUID         10
#define VMX_EXIT_HLT           12
#define VMX_EXIT_INVD          13
#define VMX_EXIT_VMCALL        18
#define VMX_EXIT_VMCLEAR       19
#define VMX_EXIT_VMLAUNCH      20
#define VMX_EXIT_VMPTRLD       21
#define VMX_EXIT_VMPTRST       22
#define VMX_EXIT_VMREAD        23
#define VMX_EXIT_VMRESUME      24
#define VMX_EXIT_VMWRITE       25
#define VMX_EXIT_VMXOFF        26
#define VMX_EXIT_VMXON         27
#define VMX_EXIT_CR_ACCESS     28
#define VMX_EXIT_IO            30
#define VMX_EXIT_RDMSR         31
#define VMX_EXIT_WRMSR         32
#define VMX_EXIT_BAD_GUEST     33
#define VMX_EXIT_BAD_MSR_LOAD  34
#define VMX_EXIT_MWAIT         36
#define VMX_EXIT_MONITOR       39
#define VMX_EXIT_PAUSE         40
#define VMX_EXIT_MCE_ENTRY     41
#define VMX_EXIT_EPT_VIOLATION 48
#define VMX_EXIT_EPT_MISCONFIG 49
#define VMX_EXIT_INVEPT        50
#define VMX_EXIT_PREEMPTION    52
#define VMX_EXIT_INVVPID       53
#define VMX_EXIT_WBINVD        54
#define VMX_EXIT_XSETBV        55
#define VMX_EXIT_VMFUNC        59
#define VMX_EXIT_ENTRY_FAILURE (1u << 31) /* in the full exit-reason field */

/* Exit qualification: I/O instructions */
#define IO_QUAL_SIZE   0x7u
#define IO_QUAL_IN     (1u << 3)
#define IO_QUAL_STRING (1u << 4)
#define IO_QUAL_REP    (1u << 5)

/* Exit qualification: EPT violations */
#define EPT_QUAL_READ        (1u << 0)
#define EPT_QUAL_WRITE       (1u << 1)
#define EPT_QUAL_FETCH       (1u << 2)
#define EPT_QUAL_PERMS       (7u << 3) /* what the EPT entry allowed; 0 = not present */
#define EPT_QUAL_NMI_UNBLOCK (1u << 12)

/* Exit qualification: control-register accesses */
#define CR_QUAL_NUMBER     0xfu
#define CR_QUAL_TYPE_SHIFT 4
#define CR_QUAL_REG_SHIFT  8
#define CR_QUAL_LMSW_SHIFT 16

/* RFLAGS and PAE PDPTE bits the backend reasons about (CR0, CR4, EFER: arch/x86/regs.h) */
#define RFLAGS_FIXED   (1ull << 1)
#define RFLAGS_VM      (1ull << 17)
#define PDPTE_RESERVED 0x1e6ull /* bits 2:1 and 8:5 of a present PAE PDPTE */

/* VM-instruction error numbers (SDM 30.4) that entry failures report. */
#define VMXERR_LAUNCH_NOT_CLEAR    4
#define VMXERR_RESUME_NOT_LAUNCHED 5
#define VMXERR_BAD_CONTROLS        7
#define VMXERR_BAD_HOST            8
#define VMXERR_BAD_EVENT_BLOCKING  26

#endif

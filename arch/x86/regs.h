/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Architectural constants: control-register, EFER and other MSR bits, MSR
 * numbers (Intel SDM vol. 3A ch. 2, AMD APM vol. 2 ch. 3). Defined here
 * once, for the hypervisor, its assembly (boot/entry.S, trampoline.S) and
 * the host unit tests: constants only, no code. Guest tests have their own
 * (guest-tests/runtime/cpu.h).
 */
#ifndef POLLUX_ARCH_X86_REGS_H
#define POLLUX_ARCH_X86_REGS_H

/*
 * Control-register bits are 64-bit (~CR0_PG keeps the high half); EFER's are
 * unsigned int, as they always were here (~EFER_LMA is a 32-bit mask).
 */
#ifdef __ASSEMBLY__
#define X86_BIT(n)   (1 << (n))
#define X86_BIT32(n) (1 << (n))
#else
#define X86_BIT(n)   (1ull << (n))
#define X86_BIT32(n) (1u << (n))
#endif

#define CR0_PE X86_BIT(0)
#define CR0_MP X86_BIT(1)
#define CR0_EM X86_BIT(2)
#define CR0_TS X86_BIT(3)
#define CR0_ET X86_BIT(4)
#define CR0_NE X86_BIT(5)
#define CR0_WP X86_BIT(16)
#define CR0_NW X86_BIT(29)
#define CR0_CD X86_BIT(30)
#define CR0_PG X86_BIT(31)

#define CR4_PSE        X86_BIT(4)
#define CR4_PAE        X86_BIT(5)
#define CR4_OSFXSR     X86_BIT(9)
#define CR4_OSXMMEXCPT X86_BIT(10)
#define CR4_LA57       X86_BIT(12)
#define CR4_VMXE       X86_BIT(13)
#define CR4_PCIDE      X86_BIT(17)
#define CR4_OSXSAVE    X86_BIT(18)
#define CR4_PKE        X86_BIT(22)

#define MSR_APIC_BASE          0x1b
#define MSR_FEATURE_CONTROL    0x3a
#define MSR_SYSENTER_CS        0x174
#define MSR_SYSENTER_ESP       0x175
#define MSR_SYSENTER_EIP       0x176
#define MSR_PAT                0x277
#define MSR_VMX_BASIC          0x480
#define MSR_VMX_PINBASED       0x481
#define MSR_VMX_PROCBASED      0x482
#define MSR_VMX_EXIT           0x483
#define MSR_VMX_ENTRY          0x484
#define MSR_VMX_MISC           0x485
#define MSR_VMX_PROCBASED2     0x48b
#define MSR_VMX_EPT_VPID_CAP   0x48c
#define MSR_VMX_TRUE_PINBASED  0x48d
#define MSR_VMX_TRUE_PROCBASED 0x48e
#define MSR_TSC_DEADLINE       0x6e0
#define MSR_EFER               0xc0000080
#define MSR_STAR               0xc0000081
#define MSR_LSTAR              0xc0000082
#define MSR_CSTAR              0xc0000083
#define MSR_SFMASK             0xc0000084
#define MSR_FS_BASE            0xc0000100
#define MSR_GS_BASE            0xc0000101
#define MSR_KERNEL_GS_BASE     0xc0000102
#define MSR_VM_CR              0xc0010114

#define EFER_SCE  X86_BIT32(0)
#define EFER_LME  X86_BIT32(8)
#define EFER_LMA  X86_BIT32(10)
#define EFER_NXE  X86_BIT32(11)
#define EFER_SVME X86_BIT32(12)

#define APIC_BASE_ENABLE   X86_BIT32(11) /* IA32_APIC_BASE: the local APIC is on */
#define APIC_BASE_X2APIC   X86_BIT32(10) /* IA32_APIC_BASE: ... in x2APIC mode (EXTD) */
#define FEATURE_CTL_LOCKED X86_BIT(0)
#define FEATURE_CTL_VMXON  X86_BIT(2)            /* VMXON allowed outside SMX */
#define PAT_DEFAULT        0x0007040600070406ull /* IA32_PAT at reset */

/* The local APIC's LVT entries: the mask bit. */
#define LVT_MASKED X86_BIT32(16)

/* CPUID leaf 1, ECX. */
#define CPUID1_X2APIC       X86_BIT32(21)
#define CPUID1_TSC_DEADLINE X86_BIT32(24)

#endif

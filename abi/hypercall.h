/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hypercall ABI (docs/hypercalls.md), shared by pollux and its guests.
 * A guest executes VMMCALL (AMD) or VMCALL (Intel) with the call number in
 * EAX/RAX and arguments in EBX, ECX, EDX; the result comes back in EAX/RAX.
 * Only constants here, so freestanding 32-bit guests can include it: abi/ is
 * the floor below every other (docs/architecture.md).
 */
#ifndef POLLUX_ABI_HYPERCALL_H
#define POLLUX_ABI_HYPERCALL_H

/* pollux's own range, 0x504C0000 ("PL") + n: KVM's numbers keep KVM's meaning. */
#define HC_EXIT 0x504C0000u /* EBX = exit code: the VM stops with it (reason "hypercall") */
#define HC_PUTS 0x504C0001u /* EBX = guest-physical address, ECX = length (<= HC_PUTS_MAX) */
#define HC_NOP  0x504C0002u /* does nothing; returns 0 (for measuring the exit path) */
/* The calling vCPU's HLT exits so far (plain and Idle HLT), its low 32 bits in EAX. */
#define HC_HLT_EXITS 0x504C0003u
/*
 * The counting build only (arch/x86/exit_counts.h; elsewhere HC_ENOSYS): EBX =
 * guest-physical address of HC_EXIT_COUNTS_WORDS 32-bit words, filled with
 * the host CPU's index, the calling vCPU's exits so far and the CPU's
 * counters (EXIT_COUNT_* order), low 32 bits, as pollux found them handling the call.
 */
#define HC_EXIT_COUNTS       0x504C0004u
#define HC_EXIT_COUNTS_WORDS (2 + EXIT_COUNT_KINDS)

/* The counters of HC_EXIT_COUNTS, in their order. */
#define EXIT_COUNT_VMREAD     0
#define EXIT_COUNT_VMWRITE    1
#define EXIT_COUNT_VMCB_READ  2
#define EXIT_COUNT_VMCB_WRITE 3
#define EXIT_COUNT_RDMSR      4
#define EXIT_COUNT_WRMSR      5
#define EXIT_COUNT_XSETBV     6
#define EXIT_COUNT_VMLOAD     7
#define EXIT_COUNT_VMSAVE     8
#define EXIT_COUNT_KINDS      9

#define HC_PUTS_MAX 4096

#define HC_OK     0
#define HC_EFAULT ((unsigned long)-2) /* bad address or length */
#define HC_ENOSYS ((unsigned long)-1) /* unknown call number */
#define HC_EPERM  ((unsigned long)-3) /* called from CPL > 0 */

/* CPUID leaf 0x40000000 returns this signature in EBX, ECX, EDX. */
#define POLLUX_CPUID_SIGNATURE "pollux\0\0\0\0\0\0"
#define POLLUX_CPUID_BASE      0x40000000u
#define POLLUX_CPUID_TIMING    0x40000010u /* EAX = TSC kHz, EBX = APIC timer kHz (0: none) */

#endif

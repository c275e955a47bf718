/*
 * The hypercall ABI (docs/hypercalls.md), shared by pollux and its guests.
 * A guest executes VMMCALL (AMD) or VMCALL (Intel) with the call number in
 * EAX/RAX and arguments in EBX, ECX, EDX; the result comes back in EAX/RAX.
 * Only constants here, so freestanding 32-bit guests can include it.
 */
#ifndef POLLUX_VMM_HYPERCALL_H
#define POLLUX_VMM_HYPERCALL_H

#define HC_EXIT 0 /* EBX = exit code: the VM stops with that code (reason "hypercall") */
#define HC_PUTS                                                                                    \
    1            /* EBX = guest-physical address, ECX = length (<= HC_PUTS_MAX): console output    \
                  */
#define HC_NOP 2 /* does nothing; returns 0 (for measuring the exit path) */
/* The calling vCPU's HLT exits so far (plain and Idle HLT), its low 32 bits in EAX. */
#define HC_HLT_EXITS 0x504C0003u

#define HC_PUTS_MAX 4096

#define HC_OK     0
#define HC_EFAULT ((unsigned long)-2) /* bad address or length */
#define HC_ENOSYS ((unsigned long)-1) /* unknown call number */
#define HC_EPERM  ((unsigned long)-3) /* called from CPL > 0 */

/* CPUID leaf 0x40000000 returns this signature in EBX, ECX, EDX. */
#define POLLUX_CPUID_SIGNATURE "pollux\0\0\0\0\0\0"
#define POLLUX_CPUID_BASE      0x40000000u
#define POLLUX_CPUID_TIMING    0x40000010u /* EAX = TSC kHz, EBX = APIC timer kHz (0: none) */

struct vcpu;
/* pollux's side: handle the call in v's registers, return the value for RAX. */
unsigned long vmm_hypercall(struct vcpu *v);

#endif

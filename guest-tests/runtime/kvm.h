/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual ABI as a guest sees it (Linux's
 * arch/x86/include/uapi/asm/kvm_para.h): the CPUID leaves, feature bits,
 * MSRs, hypercall numbers and results, and the steal-time record. The
 * guests' own copy, so that they check pollux against KVM's numbers rather
 * than against pollux's.
 */
#ifndef POLLUX_GUEST_KVM_H
#define POLLUX_GUEST_KVM_H

#include "abi/kvm.h"
#include "guest-tests/runtime/runtime.h"

/* Results, as EAX holds them in 32-bit code. */
#define KVM_RESULT_EINVAL ((uint32_t)-KVM_EINVAL)
#define KVM_RESULT_ENOSYS ((uint32_t)-KVM_ENOSYS)

/* 64-byte aligned: the MSR's low 6 bits are the enable bit and reserved bits. */
struct kvm_steal_time {
    uint64_t steal;
    uint32_t version;
    uint32_t flags;
    uint8_t preempted;
    uint8_t u8_pad[3];
    uint32_t pad[11];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct kvm_steal_time) == 64, "struct kvm_steal_time is 64 bytes");

/* CPUID 0x40000100 names KVM and reaches 0x40000101. */
static inline bool kvm_signature_found(void)
{
    struct cpuid_regs sig = cpuid(KVM_CPUID_SIGNATURE, 0);
    return sig.eax >= KVM_CPUID_FEATURES && sig.ebx == 0x4b4d564bu && sig.ecx == 0x564b4d56u &&
           sig.edx == 0x4du;
}

#endif

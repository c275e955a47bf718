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

#include "guest-tests/runtime/runtime.h"

#define KVM_CPUID_SIGNATURE 0x40000100u
#define KVM_CPUID_FEATURES  0x40000101u

/* Bit numbers in CPUID 0x40000101 EAX. */
#define KVM_FEATURE_CLOCKSOURCE2           3
#define KVM_FEATURE_STEAL_TIME             5
#define KVM_FEATURE_PV_UNHALT              7
#define KVM_FEATURE_PV_TLB_FLUSH           9
#define KVM_FEATURE_PV_SEND_IPI            11
#define KVM_FEATURE_POLL_CONTROL           12
#define KVM_FEATURE_PV_SCHED_YIELD         13
#define KVM_FEATURE_CLOCKSOURCE_STABLE_BIT 24

#define MSR_KVM_STEAL_TIME   0x4b564d03u
#define MSR_KVM_POLL_CONTROL 0x4b564d05u
#define KVM_MSR_ENABLED      1u

/* struct kvm_steal_time's preempted byte. */
#define KVM_VCPU_PREEMPTED 1u
#define KVM_VCPU_FLUSH_TLB 2u

#define KVM_HC_KICK_CPU    5
#define KVM_HC_SEND_IPI    10
#define KVM_HC_SCHED_YIELD 11

/* Results, as EAX holds them in 32-bit code. */
#define KVM_RESULT_EINVAL ((uint32_t)-22)
#define KVM_RESULT_ENOSYS ((uint32_t)-1000)

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

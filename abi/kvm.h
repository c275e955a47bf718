/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual ABI as pollux offers it (docs/hypercalls.md,
 * docs/linux.md), shared by pollux and its guests: the CPUID leaves and
 * feature bits, the MSRs, the steal-time record's preempted bits, the
 * hypercall numbers and the errno values their results negate.
 */
#ifndef POLLUX_ABI_KVM_H
#define POLLUX_ABI_KVM_H

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
#define KVM_MSR_ENABLED      1u /* bit 0 of MSR_KVM_STEAL_TIME */

/* struct kvm_steal_time's preempted byte. */
#define KVM_VCPU_PREEMPTED (1u << 0)
#define KVM_VCPU_FLUSH_TLB (1u << 1)

#define KVM_HC_KICK_CPU    5
#define KVM_HC_SEND_IPI    10
#define KVM_HC_SCHED_YIELD 11

/* A hypercall's failure: RAX holds the negated value. */
#define KVM_EPERM  1
#define KVM_EINVAL 22
#define KVM_ENOSYS 1000

#endif

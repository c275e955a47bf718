/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual interface, as much of it as pollux implements, so that
 * an unmodified Linux guest finds it: the signature leaf at 0x40000100 (a
 * base Linux scans; 0x40000000 stays pollux's own), the feature leaf that
 * names exactly the features below, and their MSRs.
 *
 * Implemented: KVM_FEATURE_POLL_CONTROL. MSR_KVM_POLL_CONTROL bit 0 says
 * whether the host may halt-poll for this vCPU (Linux's cpuidle-haltpoll
 * clears it and polls in the guest instead); reset value 1; any other bit
 * is reserved (#GP). KVM_FEATURE_CLOCKSOURCE2 with
 * KVM_FEATURE_CLOCKSOURCE_STABLE_BIT: kvmclock through the _NEW MSRs
 * (vmm/dev/kvmclock.h), its TSC-stable flag honoured.
 *
 * Per VM (pv=, vmm/vm_policy.h), the scheduling interfaces: steal time with
 * the preempted flag and the PV TLB flush request (vmm/dev/steal_time.h),
 * KVM_HC_KICK_CPU (PV_UNHALT), KVM_HC_SCHED_YIELD and KVM_HC_SEND_IPI
 * (vmm/dev/kvm_pv_sched.c). pv= says what CPUID offers; as KVM, every one
 * is served whatever CPUID says, so that a guest that calls without looking
 * (kvm-unit-tests' apic test sends PV IPIs) works. With pv_enforce=on (KVM's
 * KVM_CAP_ENFORCE_PV_FEATURE_CPUID) a feature not offered behaves as if
 * pollux did not know it: its MSR is a #GP, its hypercall -KVM_ENOSYS.
 */
#ifndef POLLUX_VMM_DEV_KVM_PV_H
#define POLLUX_VMM_DEV_KVM_PV_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/kvm.h"
#include "arch/x86/cpu.h"
#include "arch/x86/virt.h"

#define KVM_SIGNATURE          "KVMKVMKVM\0\0\0"
#define KVM_POLL_CONTROL_HOST  1u /* bit 0: the host may poll */
#define KVM_POLL_CONTROL_RESET KVM_POLL_CONTROL_HOST

/* A KVM hypercall pollux answers besides those of abi/kvm.h. */
#define KVM_HC_VAPIC_POLL_IRQ 1

/* Every feature pv= chooses (the rest of 0x40000101 EAX is always offered). */
#define KVM_PV_SCHED_FEATURES                                                                      \
    ((1u << KVM_FEATURE_STEAL_TIME) | (1u << KVM_FEATURE_PV_UNHALT) |                              \
     (1u << KVM_FEATURE_PV_TLB_FLUSH) | (1u << KVM_FEATURE_PV_SEND_IPI) |                          \
     (1u << KVM_FEATURE_PV_SCHED_YIELD))

/* A vCPU's side of the scheduling interfaces. */
struct kvm_pv_vcpu {
    uint64_t steal_time_msr;  /* MSR_KVM_STEAL_TIME as written; reset at INIT */
    uint64_t runnable_cycles; /* its entity's RUNNABLE cycles the steal time counted so far */
    bool pv_unhalted;         /* kicked (KVM_HC_KICK_CPU): ends a halt even with IF=0 */
};

struct vcpu;

/* The KVM leaves: true (and r filled) for 0x40000100 and 0x40000101, offering features (pv=). */
bool kvm_pv_cpuid(uint32_t leaf, uint32_t features, struct cpuid_regs *r);

/* Is the feature (KVM_FEATURE_*) served to v? KVM's guest_pv_has: offered, or pv_enforce off. */
bool kvm_pv_has(const struct vcpu *v, unsigned feature);

/* The KVM MSRs; MSR_NOT_MINE for any other index. */
enum msr_result kvm_pv_msr_read(struct vcpu *v, uint32_t index, uint64_t *value);
enum msr_result kvm_pv_msr_write(struct vcpu *v, uint32_t index, uint64_t value);

/*
 * INIT (and creation), as KVM's kvm_vcpu_reset for INIT and RESET alike:
 * MSR_KVM_SYSTEM_TIME_NEW and MSR_KVM_STEAL_TIME off, no kick pending;
 * MSR_KVM_POLL_CONTROL and the VM's wall clock stay. v's lock held.
 */
void kvm_pv_vcpu_reset(struct vcpu *v);

/*
 * On v's own CPU: write its pvclock structure, if enabled, for its TSC
 * offset (vmm/dev/kvmclock.h). Again after each of its TSC writes.
 */
void kvmclock_update(struct vcpu *v);

/* May the host poll when this vCPU halts? (KVM's !kvm_arch_no_poll) */
bool kvm_pv_host_poll_allowed(const struct vcpu *v);

#endif

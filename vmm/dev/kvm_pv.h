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
 */
#ifndef POLLUX_VMM_DEV_KVM_PV_H
#define POLLUX_VMM_DEV_KVM_PV_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/virt.h"

#define KVM_CPUID_SIGNATURE                0x40000100u
#define KVM_CPUID_FEATURES                 0x40000101u
#define KVM_SIGNATURE                      "KVMKVMKVM\0\0\0"
#define KVM_FEATURE_CLOCKSOURCE2           3
#define KVM_FEATURE_POLL_CONTROL           12
#define KVM_FEATURE_CLOCKSOURCE_STABLE_BIT 24
#define MSR_KVM_POLL_CONTROL               0x4b564d05u
#define KVM_POLL_CONTROL_HOST              1u /* bit 0: the host may poll */
#define KVM_POLL_CONTROL_RESET             KVM_POLL_CONTROL_HOST

/* KVM's hypercall numbers and results (negative errno values of KVM's own). */
#define KVM_HC_VAPIC_POLL_IRQ 1
#define KVM_EPERM             1
#define KVM_ENOSYS            1000

struct vcpu;

/* The KVM leaves: true (and r filled) for 0x40000100 and 0x40000101. */
bool kvm_pv_cpuid(uint32_t leaf, struct cpuid_regs *r);

/* KVM's block of MSRs, 0x4b564d00-0x4b564dff. */
static inline bool kvm_pv_msr_in_range(uint32_t index)
{
    return (index >> 8) == 0x4b564du;
}

/* The KVM MSRs; MSR_NOT_MINE for any other index. */
enum msr_result kvm_pv_msr_read(struct vcpu *v, uint32_t index, uint64_t *value);
enum msr_result kvm_pv_msr_write(struct vcpu *v, uint32_t index, uint64_t value);

/*
 * A hypercall outside pollux's range, with KVM's meaning: the result for RAX.
 * nr is RAX, truncated to 32 bits outside 64-bit mode as KVM does.
 */
uint64_t kvm_pv_hypercall(uint64_t nr, unsigned cpl);

/* May the host poll when this vCPU halts? (KVM's !kvm_arch_no_poll) */
bool kvm_pv_host_poll_allowed(const struct vcpu *v);

#endif

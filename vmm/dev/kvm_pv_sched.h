/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual scheduling interfaces on a vCPU (vmm/dev/kvm_pv.h says
 * which a VM is offered, vmm/dev/steal_time.h the record's protocol):
 *   - at each entry after the vCPU was scheduled in: its steal-time record
 *     (preempted cleared, steal grown by its RUNNABLE time since the last
 *     record) and, with PV TLB flush, the flush the guest asked for;
 *   - when it leaves its CPU still runnable: preempted set, before sched/
 *     queues it anywhere (an entry on another CPU could otherwise clear it
 *     first, and the late store leave it set on a running vCPU);
 *   - KVM's hypercalls: KVM_HC_KICK_CPU, KVM_HC_SCHED_YIELD, KVM_HC_SEND_IPI.
 */
#ifndef POLLUX_VMM_DEV_KVM_PV_SCHED_H
#define POLLUX_VMM_DEV_KVM_PV_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/entity.h"

struct vcpu;

/* A KVM hypercall as the guest made it: nr in RAX, a0-a3 in RBX, RCX, RDX, RSI. */
struct kvm_hypercall {
    uint64_t nr;
    uint64_t a[4];
    bool op_64_bit; /* from 64-bit code; otherwise every value was truncated to 32 bits */
};

/* v is about to enter after it was scheduled in (the kvm-msrs device's vcpu_load, on its CPU). */
void kvm_pv_sched_in(struct vcpu *v);

/*
 * v leaves its CPU (its vcpu_put, with vcpu_run's result r, before sched/ acts on it): marked
 * preempted only if it is still runnable (SCHED_RUN_PREEMPTED), never when
 * it blocks in HLT, parks or stops.
 */
void kvm_pv_sched_out(struct vcpu *v, enum sched_run_result r);

/* A call outside pollux's range, with KVM's meaning, from CPL cpl: the result for RAX. */
uint64_t kvm_pv_hypercall(struct vcpu *v, const struct kvm_hypercall *hc, unsigned cpl);

/*
 * KVM_HC_SEND_IPI's destinations: bit i of lo names APIC ID min + i, bit i
 * of hi (uint32_t)(min + cluster) + i (cluster: 64 from 64-bit code, else
 * 32; KVM's u32 arithmetic wraps the high word's base round past 2^32).
 * Calls fn for each named ID below nids (every other is ignored, as KVM's
 * map does), and returns how many calls returned true.
 */
unsigned kvm_pv_ipi_each(uint64_t lo, uint64_t hi, uint32_t min, bool op_64_bit, unsigned nids,
                         bool (*fn)(unsigned id, void *ctx), void *ctx);

#endif

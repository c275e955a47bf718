/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's steal-time record (KVM_FEATURE_STEAL_TIME), the guest's side of
 * memory: a vCPU's guest writes the guest-physical address of a 64-byte
 * struct kvm_steal_time, 64-byte aligned, with bit 0 (enable) to
 * MSR_KVM_STEAL_TIME; bits 5:1 are reserved.
 *   struct kvm_steal_time { u64 steal; u32 version; u32 flags;
 *                           u8 preempted; u8 pad[3]; u32 pad[11]; };
 * The host writes it at each entry after the vCPU was descheduled (KVM's
 * record_steal_time): preempted cleared, version made odd (an odd version
 * left over is bumped first), steal increased by the nanoseconds the vCPU
 * was runnable but not running, version made even. When the vCPU leaves
 * its CPU still runnable, preempted = KVM_VCPU_PREEMPTED. The guest sets
 * KVM_VCPU_FLUSH_TLB in a preempted sibling's byte instead of sending it a
 * flush IPI (KVM_FEATURE_PV_TLB_FLUSH): the host then clears the byte with
 * one atomic exchange and flushes the vCPU's TLB if the bit was set.
 *
 * Pure, on a host pointer to the record: the caller finds it in guest RAM
 * (and writes nothing when it is not there).
 */
#ifndef POLLUX_VMM_DEV_STEAL_TIME_H
#define POLLUX_VMM_DEV_STEAL_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/kvm.h"

#define KVM_STEAL_ALIGNMENT_BITS 5
#define KVM_STEAL_RESERVED_MASK  (((1u << KVM_STEAL_ALIGNMENT_BITS) - 1) << 1) /* bits 5:1 */
#define KVM_STEAL_TIME_SIZE      64

/* The record's fields, as byte offsets. */
#define STEAL_TIME_STEAL     0
#define STEAL_TIME_VERSION   8
#define STEAL_TIME_PREEMPTED 16

/*
 * The record at entry, steal_ns more nanoseconds of steal. exchange: the
 * guest may set KVM_VCPU_FLUSH_TLB (PV TLB flush offered), so the byte is
 * cleared with an atomic exchange; else with a plain store. Returns what
 * the byte held (KVM_VCPU_FLUSH_TLB set: flush the vCPU's TLB now).
 */
uint8_t steal_time_record(uint8_t *st, uint64_t steal_ns, bool exchange);

/* The vCPU leaves its CPU still runnable: a plain store of KVM_VCPU_PREEMPTED. */
void steal_time_set_preempted(uint8_t *st);

/* May the guest write this value to MSR_KVM_STEAL_TIME? (Bits 5:1 are reserved.) */
static inline bool steal_time_msr_valid(uint64_t value)
{
    return !(value & KVM_STEAL_RESERVED_MASK);
}

/* The record's guest-physical address in an MSR value. */
static inline uint64_t steal_time_gpa(uint64_t value)
{
    return value & ~(uint64_t)(KVM_STEAL_TIME_SIZE - 1);
}

#endif

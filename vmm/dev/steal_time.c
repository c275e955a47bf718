/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/steal_time.h"

/* The record is 64-byte aligned (the MSR's low bits are flags): its fields are naturally aligned.
 */
static uint32_t *version_of(uint8_t *st)
{
    return (uint32_t *)(void *)(st + STEAL_TIME_VERSION);
}

static uint64_t *steal_of(uint8_t *st)
{
    return (uint64_t *)(void *)(st + STEAL_TIME_STEAL);
}

uint8_t steal_time_record(uint8_t *st, uint64_t steal_ns, bool exchange)
{
    uint8_t *preempted = st + STEAL_TIME_PREEMPTED;
    uint8_t was;
    /* Other vCPUs of the guest may set KVM_VCPU_FLUSH_TLB at any time: no store may lose it. */
    if (exchange) {
        was = __atomic_exchange_n(preempted, 0, __ATOMIC_SEQ_CST);
    } else {
        was = __atomic_load_n(preempted, __ATOMIC_RELAXED);
        __atomic_store_n(preempted, 0, __ATOMIC_RELAXED);
    }
    uint32_t version = __atomic_load_n(version_of(st), __ATOMIC_RELAXED);
    version += (version & 1) + 1; /* a leftover odd version (first use, junk) is bumped first */
    __atomic_store_n(version_of(st), version, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    uint64_t steal = __atomic_load_n(steal_of(st), __ATOMIC_RELAXED);
    __atomic_store_n(steal_of(st), steal + steal_ns, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(version_of(st), version + 1, __ATOMIC_RELAXED);
    return was;
}

void steal_time_set_preempted(uint8_t *st)
{
    __atomic_store_n(st + STEAL_TIME_PREEMPTED, (uint8_t)KVM_VCPU_PREEMPTED, __ATOMIC_RELEASE);
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/l0_steal.h"

#include "abi/kvm.h"
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/virt.h"

/* KVM's struct kvm_steal_time. */
struct l0_steal_time {
    volatile uint64_t steal;
    volatile uint32_t version; /* odd while L0 writes the record */
    uint32_t flags;
    volatile uint8_t preempted;
    uint8_t pad[3];
    uint32_t pad2[11];
} __attribute__((aligned(64)));

/* Identity mapped: the address is the physical one L0 writes to. */
static struct l0_steal_time records[MAX_CPUS];
static bool enabled[MAX_CPUS];

void l0_steal_enable(void)
{
    if (!virt_features.l0_steal_time)
        return;
    unsigned cpu = this_cpu()->cpu;
    wrmsr(MSR_KVM_STEAL_TIME, (uint64_t)&records[cpu] | KVM_MSR_ENABLED);
    __atomic_store_n(&enabled[cpu], true, __ATOMIC_RELEASE);
}

bool l0_steal_read(unsigned cpu, uint64_t *steal_ns, bool *preempted)
{
    if (cpu >= MAX_CPUS || !__atomic_load_n(&enabled[cpu], __ATOMIC_ACQUIRE))
        return false;
    const struct l0_steal_time *r = &records[cpu];
    uint32_t version;
    do {
        version = r->version;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        *steal_ns = r->steal;
        *preempted = r->preempted & KVM_VCPU_PREEMPTED;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
    } while ((version & 1) || version != r->version);
    return true;
}

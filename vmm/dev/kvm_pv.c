/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/kvm_pv.h"

#include "arch/x86/tsc.h"
#include "lib/string.h"
#include "vmm/dev/kvmclock.h"
#include "vmm/dev/steal_time.h"
#include "vmm/vm.h"

bool kvm_pv_cpuid(uint32_t leaf, uint32_t features, struct cpuid_regs *r)
{
    switch (leaf) {
    case KVM_CPUID_SIGNATURE:
        r->eax = KVM_CPUID_FEATURES;
        memcpy(&r->ebx, KVM_SIGNATURE, 4);
        memcpy(&r->ecx, KVM_SIGNATURE + 4, 4);
        memcpy(&r->edx, KVM_SIGNATURE + 8, 4);
        return true;
    case KVM_CPUID_FEATURES:
        /* No hints in EDX: KVM_HINTS_REALTIME would tell Linux that vCPUs are never preempted. */
        *r = (struct cpuid_regs){
            (1u << KVM_FEATURE_CLOCKSOURCE2) | (1u << KVM_FEATURE_POLL_CONTROL) |
                (1u << KVM_FEATURE_CLOCKSOURCE_STABLE_BIT) | (features & KVM_PV_SCHED_FEATURES),
            0, 0, 0};
        return true;
    default:
        return false;
    }
}

bool kvm_pv_has(const struct vcpu *v, unsigned feature)
{
    return !v->vm->cfg.policy.pv_enforce || (v->vm->kvm_features & (1u << feature));
}

void kvm_pv_vcpu_reset(struct vcpu *v)
{
    v->kvm_system_time = 0; /* KVM's kvmclock_reset: the old structure is never written again */
    v->pv.steal_time_msr = 0;
    __atomic_store_n(&v->pv.pv_unhalted, false, __ATOMIC_RELAXED);
}

enum msr_result kvm_pv_msr_read(struct vcpu *v, uint32_t index, uint64_t *value)
{
    if (index == MSR_KVM_STEAL_TIME && kvm_pv_has(v, KVM_FEATURE_STEAL_TIME)) {
        *value = v->pv.steal_time_msr;
        return MSR_DONE;
    }
    switch (index) {
    case MSR_KVM_POLL_CONTROL:
        *value = v->poll_control;
        return MSR_DONE;
    case MSR_KVM_SYSTEM_TIME_NEW:
        *value = v->kvm_system_time;
        return MSR_DONE;
    case MSR_KVM_WALL_CLOCK_NEW:
        *value = v->vm->kvm_wall_clock;
        return MSR_DONE;
    default:
        return MSR_NOT_MINE;
    }
}

/* A structure the guest names must be in its RAM; KVM ignores the write otherwise. */
static enum msr_result kvmclock_write(struct vcpu *v, uint32_t index, uint64_t value)
{
    if (index == MSR_KVM_WALL_CLOCK_NEW) {
        v->vm->kvm_wall_clock = value;
        uint8_t *p = vm_gpa_ptr(v->vm, value, PVCLOCK_WALL_CLOCK_SIZE);
        if (p)
            pvclock_write_wall_clock(p, &v->vm->wall_clock_version);
        return MSR_DONE;
    }
    v->kvm_system_time = value;
    kvmclock_update(v);
    return MSR_DONE;
}

void kvmclock_update(struct vcpu *v)
{
    struct vm *vm = v->vm;
    uint64_t msr = v->kvm_system_time;
    if (!(msr & KVM_SYSTEM_TIME_ENABLE))
        return;
    uint8_t *p = vm_gpa_ptr(vm, msr & ~(uint64_t)KVM_SYSTEM_TIME_ENABLE, PVCLOCK_TIME_INFO_SIZE);
    if (p)
        pvclock_write_time_info(p, &v->pvclock_version, tsc_khz,
                                pvclock_tsc_timestamp(v->hw.tsc_offset, vm->tsc_sync.offset));
}

/*
 * Enabled: the record is written at once with no new steal (KVM asks for
 * the same at the next entry), so the guest sees preempted clear and an
 * even version, and steal counts from here. Disabled: nothing is written
 * any more. Outside guest RAM: kept, and never written (vmm/dev/kvmclock.c's rule).
 */
static enum msr_result steal_time_write(struct vcpu *v, uint64_t value)
{
    if (!steal_time_msr_valid(value))
        return MSR_FAULT;
    v->pv.steal_time_msr = value;
    v->pv.runnable_cycles = v->se.cycles[SCHED_RUNNABLE];
    if (!(value & KVM_MSR_ENABLED))
        return MSR_DONE;
    uint8_t *st = vm_gpa_ptr(v->vm, steal_time_gpa(value), KVM_STEAL_TIME_SIZE);
    if (st)
        steal_time_record(st, 0, kvm_pv_has(v, KVM_FEATURE_PV_TLB_FLUSH));
    return MSR_DONE;
}

enum msr_result kvm_pv_msr_write(struct vcpu *v, uint32_t index, uint64_t value)
{
    if (index == MSR_KVM_STEAL_TIME && kvm_pv_has(v, KVM_FEATURE_STEAL_TIME))
        return steal_time_write(v, value);
    if (index == MSR_KVM_SYSTEM_TIME_NEW || index == MSR_KVM_WALL_CLOCK_NEW)
        return kvmclock_write(v, index, value);
    if (index != MSR_KVM_POLL_CONTROL)
        return MSR_NOT_MINE;
    if (value & ~(uint64_t)KVM_POLL_CONTROL_HOST)
        return MSR_FAULT;
    /* Read by the halt path on this vCPU's own CPU only: no lock needed. */
    v->poll_control = value;
    return MSR_DONE;
}

bool kvm_pv_host_poll_allowed(const struct vcpu *v)
{
    return v->poll_control & KVM_POLL_CONTROL_HOST;
}

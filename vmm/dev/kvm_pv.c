/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/kvm_pv.h"

#include "arch/x86/tsc.h"
#include "lib/string.h"
#include "vmm/dev/kvmclock.h"
#include "vmm/vm.h"

bool kvm_pv_cpuid(uint32_t leaf, struct cpuid_regs *r)
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
        *r = (struct cpuid_regs){(1u << KVM_FEATURE_CLOCKSOURCE2) |
                                     (1u << KVM_FEATURE_POLL_CONTROL) |
                                     (1u << KVM_FEATURE_CLOCKSOURCE_STABLE_BIT),
                                 0, 0, 0};
        return true;
    default:
        return false;
    }
}

enum msr_result kvm_pv_msr_read(struct vcpu *v, uint32_t index, uint64_t *value)
{
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
    if (!(value & KVM_SYSTEM_TIME_ENABLE))
        return MSR_DONE;
    uint8_t *p =
        vm_gpa_ptr(v->vm, value & ~(uint64_t)KVM_SYSTEM_TIME_ENABLE, PVCLOCK_TIME_INFO_SIZE);
    if (p)
        pvclock_write_time_info(p, &v->pvclock_version, tsc_khz);
    return MSR_DONE;
}

enum msr_result kvm_pv_msr_write(struct vcpu *v, uint32_t index, uint64_t value)
{
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

uint64_t kvm_pv_hypercall(uint64_t nr, unsigned cpl)
{
    if (cpl != 0)
        return (uint64_t)-KVM_EPERM;
    /* Pending interrupts are delivered at the next VM entry anyway: nothing to poll. */
    if (nr == KVM_HC_VAPIC_POLL_IRQ)
        return 0;
    return (uint64_t)-KVM_ENOSYS;
}

bool kvm_pv_host_poll_allowed(const struct vcpu *v)
{
    return v->poll_control & KVM_POLL_CONTROL_HOST;
}

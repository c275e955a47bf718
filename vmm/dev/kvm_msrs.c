/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's block of MSRs (0x4b564d00-0x4b564dff), per vCPU: kvmclock's
 * (vmm/dev/kvmclock.h), MSR_KVM_POLL_CONTROL and MSR_KVM_STEAL_TIME;
 * vmm/dev/kvm_pv.c has the rules.
 * An MSR of the block that KVM's rules do not know is a #GP (vmm/exit/msr.h).
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/dev/kvm_pv_sched.h"
#include "vmm/vm.h"

static enum dev_result msr_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d;
    return dev_result_of_msr(kvm_pv_msr_read(v, (uint32_t)a->addr, &a->value));
}

static enum dev_result msr_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d;
    return dev_result_of_msr(kvm_pv_msr_write(v, (uint32_t)a->addr, a->value));
}

static void *state(struct vm *vm, struct vcpu *v)
{
    (void)vm;
    return v; /* poll_control, kvm_system_time, pvclock_version: read by the halt path too */
}

/* Power-on: host polling allowed, kvmclock and steal time off. */
static void reset(struct dev_entry *d)
{
    d->vcpu->poll_control = KVM_POLL_CONTROL_RESET;
    kvm_pv_vcpu_reset(d->vcpu);
}

/* INIT turns kvmclock and steal time off (and drops a pending PV kick); poll control stays. */
static void init(struct dev_entry *d)
{
    kvm_pv_vcpu_reset(d->vcpu);
}

/* Steal time: its record at the first entry, the preempted mark when it leaves still runnable. */
static void vcpu_load(struct dev_entry *d)
{
    kvm_pv_sched_in(d->vcpu);
}

static void vcpu_put(struct dev_entry *d, enum sched_run_result r)
{
    kvm_pv_sched_out(d->vcpu, r);
}

/* kvmclock's structure holds the vCPU's TSC at kvmclock 0: before its next entry, the fast path's
 * too. */
static void tsc_written(struct dev_entry *d)
{
    kvmclock_update(d->vcpu);
}

static const struct dev_range msrs[] = {{0x4b564d00u, 0x4b564dffu}};

const struct device kvm_msrs_device = {
    .name = "kvm-msrs",
    .per_vcpu = true,
    .msrs = {msrs, 1, msr_read, msr_write},
    .reset = reset,
    .init = init,
    .vcpu_load = vcpu_load,
    .vcpu_put = vcpu_put,
    .tsc_written = tsc_written,
    .state = state,
};

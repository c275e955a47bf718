/* SPDX-License-Identifier: GPL-2.0-only */
/* The machine-check MSRs (vmm/dev/mce_state.h has the rules), per vCPU. */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/mce_state.h"
#include "vmm/dev/pc_msr_state.h"
#include "vmm/vm.h"

static enum dev_result msr_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    return dev_result_of_msr(mce_read(d->state, (uint32_t)a->addr, &a->value));
}

static enum dev_result msr_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    return dev_result_of_msr(
        mce_write(d->state, (uint32_t)a->addr, a->value, pc_msrs_mc_status_writable(&v->pc_msrs)));
}

static void *state(struct vm *vm, struct vcpu *v)
{
    (void)vm;
    return &v->mce;
}

static const struct dev_range msrs[] = {{MSR_IA32_MCG_CAP, MSR_IA32_MCG_CTL},
                                        {MSR_IA32_MC0_CTL, MCE_MSR_LAST}};

static void reset(struct dev_entry *d)
{
    mce_reset(d->state);
}

/* No init: INIT keeps them. */
const struct device mce_msrs_device = {
    .name = "mce-msrs",
    .per_vcpu = true,
    .msrs = {msrs, 2, msr_read, msr_write},
    .state = state,
    .reset = reset,
};

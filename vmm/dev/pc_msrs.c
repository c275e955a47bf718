/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The PC's MSRs (vmm/dev/pc_msr_state.h has the rules), per vCPU: the MTRRs and
 * AMD's block at 0xc0010000. An MSR of the blocks that the rules do not know
 * is a #GP (vmm/exit/msr.h).
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/pc_msr_state.h"
#include "vmm/vm.h"

static enum dev_result msr_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    return dev_result_of_msr(pc_msrs_read(d->state, (uint32_t)a->addr, &a->value));
}

static enum dev_result msr_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    return dev_result_of_msr(pc_msrs_write(d->state, (uint32_t)a->addr, a->value));
}

static void *state(struct vm *vm, struct vcpu *v)
{
    (void)vm;
    return &v->pc_msrs;
}

/* Not PAT (0x277), the vendor's. */
static const struct dev_range msrs[] = {{MSR_MTRR_CAP, MSR_MTRR_CAP},
                                        {MSR_MTRR_PHYS_BASE, MSR_MTRR_FIXED_LAST},
                                        {MSR_MTRR_DEF_TYPE, MSR_MTRR_DEF_TYPE},
                                        {0xc0010000u, 0xc0011fffu}};

static void reset(struct dev_entry *d)
{
    pc_msrs_reset(d->state);
}

/* No init: INIT keeps the MTRRs. */
const struct device pc_msrs_device = {
    .name = "pc-msrs",
    .per_vcpu = true,
    .msrs = {msrs, 4, msr_read, msr_write},
    .state = state,
    .reset = reset,
};

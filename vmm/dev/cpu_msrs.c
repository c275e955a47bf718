/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CPU's MSRs that pollux answers itself, one device per VM whose
 * callbacks take the vCPU: vmm/dev/guest_msrs.c's (IA32_SPEC_CTRL,
 * IA32_PRED_CMD, IA32_MISC_ENABLE, IA32_PKRS, IA32_XSS, IA32_TSC_AUX, each
 * where CPUID offers its feature), the TSC (the host's plus the vCPU's
 * offset) and, where CPUID offers it, IA32_TSC_ADJUST (vmm/vcpu/tsc_sync.h),
 * and what a kernel reads at boot: IA32_FEATURE_CONTROL (locked, VMX off),
 * the microcode signature (0), Intel's performance counters (read 0, writes
 * dropped; AMD's are the PC's, vmm/dev/pc_msr_state.h).
 */
#include "arch/x86/cpu.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/guest_msrs.h"
#include "vmm/vcpu/tsc_sync.h"
#include "vmm/vcpu/vcpu.h"

#define MSR_FEATURE_CTL  0x3a
#define MSR_BIOS_SIGN_ID 0x8b

static enum dev_result msr_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d;
    uint32_t index = (uint32_t)a->addr;
    if (guest_msrs_kept(index))
        return dev_result_of_msr(guest_msrs_read(&guest_features, &v->msrs, index, &a->value));
    if (index == MSR_TSC_ADJUST && !guest_features.tsc_adjust)
        return DEV_FAULT;
    a->value = index == MSR_TSC           ? rdtsc() + v->hw.tsc_offset
               : index == MSR_TSC_ADJUST  ? v->tsc_adjust
               : index == MSR_FEATURE_CTL ? FEATURE_CTL_LOCKED
                                          : 0; /* the microcode signature, the counters */
    return DEV_DONE;
}

static enum dev_result msr_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d;
    uint32_t index = (uint32_t)a->addr;
    if (guest_msrs_kept(index)) {
        bool ibpb;
        enum msr_result r = guest_msrs_write(&guest_features, &v->msrs, index, a->value, &ibpb);
        if (r == MSR_DONE && ibpb)
            wrmsr(MSR_PRED_CMD, 1);
        else if (r == MSR_DONE && (index == MSR_TSC_AUX || index == MSR_XSS || index == MSR_PKRS))
            guest_msrs_load(&v->msrs); /* the vCPU's values are the CPU's while it runs */
        return dev_result_of_msr(r);
    }
    if (index == MSR_FEATURE_CTL || (index == MSR_TSC_ADJUST && !guest_features.tsc_adjust))
        return DEV_FAULT;
    if (index == MSR_TSC || index == MSR_TSC_ADJUST)
        vcpu_write_tsc(v, index, a->value);
    return DEV_DONE; /* the microcode signature, the counters: dropped */
}

static const struct dev_range msrs[] = {
    {MSR_TSC, MSR_TSC},
    {MSR_FEATURE_CTL, MSR_TSC_ADJUST},
    {MSR_SPEC_CTRL, MSR_PRED_CMD},
    {MSR_BIOS_SIGN_ID, MSR_BIOS_SIGN_ID},
    {0xc1, 0xc8},   /* IA32_PMC0-7 */
    {0x186, 0x18d}, /* IA32_PERFEVTSEL0-7 */
    {MSR_MISC_ENABLE, MSR_MISC_ENABLE},
    {0x309, 0x30b}, /* the fixed counters */
    {0x38d, 0x390}, /* their control, the global status, control and overflow */
    {MSR_PKRS, MSR_PKRS},
    {MSR_XSS, MSR_XSS},
    {MSR_TSC_AUX, MSR_TSC_AUX},
};

const struct device cpu_msrs_device = {
    .name = "cpu-msrs",
    .msrs = {msrs, sizeof(msrs) / sizeof(msrs[0]), msr_read, msr_write},
};

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/msr.h"

#include "arch/x86/cpu.h"
#include "vmm/exit/guest_access.h"
#include "vmm/dev/device.h"
#include "vmm/vcpu/guest_msrs.h"
#include "vmm/vcpu/vcpu.h"

#define MSR_FEATURE_CTL  0x3a
#define MSR_BIOS_SIGN_ID 0x8b

static bool is_perf_counter(uint32_t i)
{
    return (i >= 0xc1 && i <= 0xc8) ||             /* Intel PMC0-7 */
           (i >= 0x186 && i <= 0x18d) ||           /* Intel PERFEVTSEL0-7 */
           (i >= 0x309 && i <= 0x30b) ||           /* Intel fixed counters */
           (i >= 0x38d && i <= 0x390) ||           /* Intel fixed/global control */
           (i >= 0xc0010000 && i <= 0xc0010007) || /* AMD legacy PERF_CTL/CTR */
           (i >= 0xc0010200 && i <= 0xc001020b);   /* AMD core PERF_CTL/CTR */
}

/* msr_read's last resort: the MSRs no keeper owns. */
int msr_read_own(struct vcpu *v, uint32_t index, uint64_t *value)
{
    if (index == MSR_TSC)
        *value = rdtsc() + v->hw.tsc_offset;
    else if (index == MSR_TSC_ADJUST && guest_features.tsc_adjust)
        *value = v->tsc_adjust;
    else if (index == MSR_FEATURE_CTL)
        *value = FEATURE_CTL_LOCKED;
    else if (index == MSR_BIOS_SIGN_ID || is_perf_counter(index))
        *value = 0;
    else
        return -1;
    return 0;
}

/* As msr_read (vmm/exit/msr.h). */
int msr_write(struct vcpu *v, uint32_t index, uint64_t value)
{
    enum msr_result r = MSR_NOT_MINE;
    bool ibpb = false;
    /* A device's first: guest_msrs_write passes every device's MSR on untouched. */
    if (msr_owner(index) == MSR_OWNER_DEVICE)
        r = msr_result_of_dev(vm_devices_msr(v, index, true, &value));
    if (r == MSR_NOT_MINE) {
        r = guest_msrs_write(&guest_features, &v->msrs, index, value, &ibpb);
        if (r == MSR_DONE && ibpb)
            wrmsr(MSR_PRED_CMD, 1);
        else if (r == MSR_DONE && (index == MSR_TSC_AUX || index == MSR_XSS || index == MSR_PKRS))
            guest_msrs_load(&v->msrs); /* the vCPU's values are the CPU's while it runs */
    }
    if (r == MSR_NOT_MINE) {
        r = virt->msr_write(&v->hw, index, value);
        vcpu_mode_forget(v); /* EFER is the vendor's */
    }
    if (r != MSR_NOT_MINE)
        return r == MSR_DONE ? 0 : -1;
    if (index == MSR_TSC || (index == MSR_TSC_ADJUST && guest_features.tsc_adjust)) {
        vcpu_write_tsc(v, index, value);
        return 0;
    }
    if (index == MSR_BIOS_SIGN_ID || is_perf_counter(index))
        return 0;
    return -1;
}

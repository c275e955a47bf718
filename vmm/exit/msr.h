/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's MSRs. Every RDMSR/WRMSR exits. The per-vCPU MSRs pollux keeps
 * itself (IA32_TSC_AUX, IA32_XSS, IA32_PKRS, IA32_SPEC_CTRL, IA32_PRED_CMD,
 * IA32_MISC_ENABLE) and the canonical check of address MSRs are
 * vmm/vcpu/guest_msrs.c's; MSRs whose guest copy lives in the VMCB/VMCS are the
 * backend's (virt->msr_read/msr_write); pollux adds a small allow-list: the
 * TSC (host TSC plus the vCPU's offset) and, where CPUID offers it,
 * IA32_TSC_ADJUST (vmm/vcpu/tsc_sync.h), the microcode signature (0),
 * IA32_FEATURE_CONTROL (locked, VMX off), the performance counters (read 0,
 * writes dropped). The local APIC's, KVM's paravirtual MSRs (vmm/dev/kvm_pv.h)
 * and the PC's (vmm/dev/pc_msr_state.h) are devices' (vmm/dev/), found through the
 * VM's device table.
 * Anything else is a #GP, as on a CPU without that MSR.
 */
#ifndef POLLUX_VMM_EXIT_MSR_H
#define POLLUX_VMM_EXIT_MSR_H

#include <stdint.h>

#include "arch/x86/virt.h"
#include "vmm/dev/device.h"
#include "vmm/vcpu/guest_msrs.h"
#include "vmm/exit/msr_owner.h"
#include "vmm/vm.h"

/* What no keeper owns: pollux's allow-list above, else #GP (-1). */
int msr_read_own(struct vcpu *v, uint32_t index, uint64_t *value);

/*
 * 0 on success; -1 means the guest gets #GP. The keeper that holds the MSR
 * (vmm/exit/msr_owner.h: a device through the VM's table, or vmm/vcpu/guest_msrs.c),
 * then the vendor's, then pollux's own. Inline: RDMSR is
 * a fast-path exit, and in the vendor's loop the calls below need no
 * registers saved of their own.
 */
static inline int msr_read(struct vcpu *v, uint32_t index, uint64_t *value)
{
    enum msr_result r;
    switch (msr_owner(index)) {
    case MSR_OWNER_DEVICE:
        r = msr_result_of_dev(vm_devices_msr(v, index, false, value));
        break;
    case MSR_OWNER_GUEST:
        r = guest_msrs_read(&guest_features, &v->msrs, index, value);
        break;
    default:
        r = MSR_NOT_MINE;
        break;
    }
    if (r == MSR_NOT_MINE)
        r = virt->msr_read(&v->hw, index, value);
    if (r == MSR_NOT_MINE)
        return msr_read_own(v, index, value);
    return r == MSR_DONE ? 0 : -1;
}

int msr_write(struct vcpu *v, uint32_t index, uint64_t value);

#endif

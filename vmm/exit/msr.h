/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's MSRs. Every RDMSR/WRMSR exits, and every MSR a guest may
 * reach has one owner in its VM's MSR map (vmm/dev/device.h), claimed as
 * ports are: a device (the local APIC's, KVM's, the PC's, the machine-check
 * bank's, and the CPU's own that pollux answers: vmm/dev/cpu_msrs.c), or
 * the vendor, for the MSRs whose guest copy lives in the VMCB or VMCS
 * (EFER, PAT, the segment bases, SYSCALL's and SYSENTER's), served by the
 * seam's msr_read and msr_write. An MSR nobody claims, or one its owner
 * does not take, is a #GP, as on a CPU without that MSR (KVM without
 * ignore_msrs).
 */
#ifndef POLLUX_VMM_EXIT_MSR_H
#define POLLUX_VMM_EXIT_MSR_H

#include <stdint.h>

#include "arch/x86/virt.h"
#include "vmm/dev/device.h"
#include "vmm/exit/guest_access.h"
#include "vmm/dev/guest_msrs.h"
#include "vmm/vm.h"

/*
 * 0 on success; -1 means the guest gets #GP. Inline: RDMSR is a fast-path
 * exit, and in the vendor's loop the vendor's MSRs (PAT) then cost one load
 * from the map and the seam's call.
 */
static inline int msr_read(struct vcpu *v, uint32_t index, uint64_t *value)
{
    if (vm_devices_msr_owner(&v->vm->devices, index) == DEV_MSR_VENDOR)
        return virt->msr_read(&v->hw, index, value) == MSR_DONE ? 0 : -1;
    return vm_devices_msr(v, index, false, value) == DEV_DONE ? 0 : -1;
}

/* As msr_read. The vendor gets only canonical addresses, and may change EFER. */
static inline int msr_write(struct vcpu *v, uint32_t index, uint64_t value)
{
    if (vm_devices_msr_owner(&v->vm->devices, index) != DEV_MSR_VENDOR)
        return vm_devices_msr(v, index, true, &value) == DEV_DONE ? 0 : -1;
    if (!guest_msr_canonical(&guest_features, index, value))
        return -1;
    enum msr_result r = virt->msr_write(&v->hw, index, value);
    vcpu_mode_forget(v);
    return r == MSR_DONE ? 0 : -1;
}

#endif

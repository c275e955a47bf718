/*
 * The guest's MSRs. Every RDMSR/WRMSR exits. The per-vCPU MSRs pollux keeps
 * itself (IA32_TSC_AUX, IA32_XSS, IA32_PKRS, IA32_SPEC_CTRL, IA32_PRED_CMD,
 * IA32_MISC_ENABLE) and the canonical check of address MSRs are
 * vmm/guest_msrs.c's; MSRs whose guest copy lives in the VMCB/VMCS are the
 * backend's (virt->msr_read/msr_write); pollux adds a small allow-list: the
 * TSC (host TSC plus the VM's offset), the microcode signature (0),
 * IA32_FEATURE_CONTROL (locked, VMX off), the performance counters (read 0,
 * writes dropped) and KVM's paravirtual MSRs (vmm/kvm_pv.h).
 * Anything else is a #GP, as on a CPU without that MSR.
 */
#ifndef POLLUX_VMM_MSR_H
#define POLLUX_VMM_MSR_H

#include <stdint.h>

#include "vmm/vm.h"

/* 0 on success; -1 means the guest gets #GP. */
int msr_read(struct vcpu *v, uint32_t index, uint64_t *value);
int msr_write(struct vcpu *v, uint32_t index, uint64_t value);

#endif

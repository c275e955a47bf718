/* SPDX-License-Identifier: GPL-2.0-only */
/* The VMX backend's entry points beyond the ops table (arch/x86/virt.h). */
#ifndef POLLUX_BACKEND_VMX_VMX_H
#define POLLUX_BACKEND_VMX_VMX_H

struct virt_vcpu;

/*
 * VMCLEAR the vCPU's VMCS on this CPU, which must be the CPU it last ran on,
 * so that another CPU can load it (its next entry is a VMLAUNCH with fresh
 * host state there). A VMCS cannot be cleared from another CPU, so the
 * scheduler must call this on the old CPU before a vCPU moves. vcpu_run
 * refuses a vCPU whose VMCS is still active elsewhere.
 */
void vmx_vcpu_unload(struct virt_vcpu *v);

#endif

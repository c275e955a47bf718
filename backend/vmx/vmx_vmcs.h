/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which VMCS is current on this CPU. A vCPU's VMCS becomes current where it
 * runs (VMPTRLD, with this CPU's host state written the first time) and
 * stays active there until VMCLEAR, which only that CPU can do
 * (vmx_vcpu_unload, backend/vmx/vmx.h). Every VMREAD and VMWRITE of a vCPU
 * goes through vmcs_load or loaded first.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_VMCS_H
#define POLLUX_BACKEND_VMX_VMX_VMCS_H

#include <stdbool.h>

#include "arch/x86/percpu.h"
#include "backend/vmx/vmx_backend.h"

/*
 * Make the vCPU's VMCS current on this CPU. False if it is still active on
 * another CPU (vmx_vcpu_unload was not called there).
 */
bool vmx_vmcs_switch(struct vmx_vcpu *s, struct percpu *p, struct vmx_cpu *c);

/* VMCLEAR: the VMCS is inactive, its next entry a VMLAUNCH. */
void vmx_vmcs_clear(struct vmx_vcpu *s);

/* Makes v's VMCS current here, or panics: it is still active on another CPU. */
struct vmx_vcpu *vmx_load_or_panic(struct virt_vcpu *v);

/* VMX_LOAD_CURRENT, the case of every VMCS access of every exit, without a call or a frame. */
static inline bool vmcs_load(struct vmx_vcpu *s)
{
    struct percpu *p = this_cpu();
    struct vmx_cpu *c = p->virt;
    if (c->current_vmcs == (uint64_t)s->vmcs)
        return true;
    return vmx_vmcs_switch(s, p, c);
}

/* The vCPU's state, its VMCS current here: for the ops vmm/ calls between runs. */
static inline struct vmx_vcpu *loaded(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    if (cpu_state()->current_vmcs == (uint64_t)s->vmcs)
        return s;
    return vmx_load_or_panic(v);
}

#endif

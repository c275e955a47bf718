/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's control state as it sees it. VMX lets the guest own most CR0
 * and CR4 bits; those the host owns (vmx.cr0_mask, vmx.cr4_mask) read from
 * the shadows, and writes that touch them exit (CR access) and are
 * emulated here, EFER.LMA, the PAE PDPTEs and the IA-32e entry control
 * following them.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_STATE_H
#define POLLUX_BACKEND_VMX_VMX_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/virt.h"
#include "backend/vmx/vmx_backend.h"
#include "backend/vmx/vmx_insn.h"

/* CR0 and CR4 as the guest sees them; s's VMCS current. */
uint64_t vmx_guest_cr0(const struct vmx_vcpu *s);
uint64_t vmx_guest_cr4(const struct vmx_vcpu *s);

void vmx_get_mode(struct virt_vcpu *v, struct guest_mode *m);

/* VMX keeps the CPL in SS.DPL; the VMCS current. */
static inline unsigned vmx_guest_cpl(void)
{
    return (vmread_nofail(VMCS_GUEST_SS_AR) >> AR_DPL_SHIFT) & 3;
}

/*
 * MOV to CR0/CR4 and LMSW that touch a bit the host owns (CR access exits
 * never leave the backend). False for accesses pollux does not expect.
 */
bool vmx_emulate_cr_access(struct virt_vcpu *v, struct vmx_vcpu *s, uint64_t qual, unsigned len);

#endif

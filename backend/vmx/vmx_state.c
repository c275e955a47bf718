/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's control registers and mode (vmx_state.h). */
#include "backend/vmx/vmx_state.h"

#include "arch/x86/cpu.h"
#include "arch/x86/guest_regs.h"
#include "arch/x86/virt.h"
#include "backend/vmx/vmx_events.h"
#include "backend/vmx/vmx_exit.h"
#include "backend/vmx/vmx_insn.h"
#include "backend/vmx/vmx_msr.h"
#include "backend/vmx/vmx_vmcs.h"

uint64_t vmx_guest_cr0(const struct vmx_vcpu *s)
{
    return (vmread(VMCS_GUEST_CR0) & ~vmx.cr0_mask) | (s->cr0_shadow & vmx.cr0_mask);
}

uint64_t vmx_guest_cr4(const struct vmx_vcpu *s)
{
    return (vmread(VMCS_GUEST_CR4) & ~vmx.cr4_mask) | (s->cr4_shadow & vmx.cr4_mask);
}

void vmx_get_mode(struct virt_vcpu *v, struct guest_mode *m)
{
    struct vmx_vcpu *s = loaded(v);
    m->cr0 = vmx_guest_cr0(s);
    m->cr3 = vmread(VMCS_GUEST_CR3);
    m->cr4 = vmx_guest_cr4(s);
    m->efer = vmread(VMCS_GUEST_EFER);
    m->cpl = vmx_guest_cpl();
    m->cs_base = vmread(VMCS_GUEST_CS_BASE);
    uint32_t cs_ar = (uint32_t)vmread(VMCS_GUEST_CS_AR);
    if (!(m->cr0 & CR0_PE))
        m->code_bits = 16;
    else if ((m->efer & EFER_LMA) && (cs_ar & AR_L))
        m->code_bits = 64;
    else
        m->code_bits = (cs_ar & AR_DB) ? 32 : 16;
}

/* PAE paging outside long mode with EPT: the PDPTEs are loaded from the VMCS at entry. */
static int load_pdptes(struct virt_vcpu *v, uint64_t cr3)
{
    const uint64_t *pdpte = virt_gpa_ptr(v->vm, cr3 & 0xffffffe0u, 32);
    if (!pdpte)
        return -1;
    for (unsigned i = 0; i < 4; i++)
        if ((pdpte[i] & 1) && ((pdpte[i] & PDPTE_RESERVED) ||
                               (vmx.caps.phys_bits < 64 && pdpte[i] >> vmx.caps.phys_bits)))
            return -1;
    for (unsigned i = 0; i < 4; i++)
        vmwrite(VMCS_GUEST_PDPTE0 + 2 * i, pdpte[i]);
    return 0;
}

bool vmx_emulate_cr_access(struct virt_vcpu *v, struct vmx_vcpu *s, uint64_t qual, unsigned len)
{
    struct vmx_cr_access a;
    vmx_decode_cr_access(qual, &a);
    struct vmx_cr_state cr = {
        .cr0 = vmx_guest_cr0(s),
        .cr4 = vmx_guest_cr4(s),
        .efer = vmread(VMCS_GUEST_EFER),
        .entry = s->entry,
    };
    bool code64 = (cr.efer & EFER_LMA) && (vmread(VMCS_GUEST_CS_AR) & AR_L);
    int rc;
    if (a.type == CR_MOV_TO && (a.cr == 0 || a.cr == 4)) {
        uint64_t value = *guest_gpr(&v->regs, a.gpr);
        if (!code64)
            value &= 0xffffffffu;
        rc = a.cr == 0 ? vmx_cr0_write(&vmx.caps, &cr, value, code64)
                       : vmx_cr4_write(&vmx.caps, &cr, value);
    } else if (a.type == CR_LMSW) {
        rc = vmx_cr0_write(&vmx.caps, &cr, vmx_lmsw_value(cr.cr0, a.lmsw_source), code64);
    } else {
        return false;
    }
    if (!rc && vmx_pae_paging(&cr))
        rc = load_pdptes(v, vmread(VMCS_GUEST_CR3));
    if (rc) {
        vmx_inject_exception(v, 13, true, 0);
        return true;
    }
    vmwrite(VMCS_GUEST_CR0, vmx_cr0_real(&vmx.caps, cr.cr0));
    vmwrite(VMCS_CR0_SHADOW, s->cr0_shadow = cr.cr0);
    vmwrite(VMCS_GUEST_CR4, vmx_cr4_real(&vmx.caps, cr.cr4));
    vmwrite(VMCS_CR4_SHADOW, s->cr4_shadow = cr.cr4);
    vmwrite(VMCS_GUEST_EFER, cr.efer);
    if (s->entry != cr.entry) {
        s->entry = cr.entry;
        controls_changed(s);
    }
    /* 64-bit code may SYSCALL or SWAPGS through MSRs it never wrote. */
    if (cr.efer & EFER_LMA)
        vmx_syscall_msrs_go_live(s);
    /* The CPU did not execute the write, so it did not flush the guest's TLB either. */
    s->flush_vpid = true;
    v->regs.rip += len;
    vmx_end_emulated_instruction(v);
    return true;
}

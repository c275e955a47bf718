/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's control registers and mode (svm_state.h). */
#include "backend/svm/svm_state.h"

#include "arch/x86/cpu.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcb.h"
#include "backend/svm/svm_backend.h"

void svm_get_mode(struct virt_vcpu *v, struct guest_mode *m)
{
    const struct vmcb *vmcb = svm(v)->vmcb;
    m->cr0 = vmcb->cr0;
    m->cr3 = vmcb->cr3;
    m->cr4 = vmcb->cr4;
    m->efer = vmcb->efer & ~(uint64_t)EFER_SVME;
    m->cpl = vmcb->cpl;
    m->cs_base = vmcb->cs.base;
    if (!(vmcb->cr0 & 1))
        m->code_bits = 16;
    else if ((vmcb->efer & EFER_LMA) && (vmcb->cs.attrib & (1u << 9)))
        m->code_bits = 64;
    else
        m->code_bits = (vmcb->cs.attrib & (1u << 10)) ? 32 : 16;
}

void svm_get_code_mode(struct virt_vcpu *v, struct guest_code_mode *m)
{
    const struct vmcb *vmcb = svm(v)->vmcb;
    m->cr0 = vmcb->cr0;
    m->cs_base = vmcb->cs.base;
    m->code64 = false;
    if (!(m->cr0 & CR0_PG))
        return;
    m->cr3 = vmcb->cr3;
    m->cr4 = vmcb->cr4;
    m->efer = vmcb->efer & ~(uint64_t)EFER_SVME;
    /* EFER.LMA (bit 10) and CS.L (attribute bit 9, moved up to 10): no branch. */
    m->code64 = (m->efer & ((uint64_t)vmcb->cs.attrib << 1)) >> 10 & 1;
}

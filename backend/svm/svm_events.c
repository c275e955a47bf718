/* SPDX-License-Identifier: GPL-2.0-only */
/* Event injection, windows and blocking (svm_events.h). */
#include "backend/svm/svm_events.h"

#include "arch/x86/cpu.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/vectors.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcb.h"
#include "backend/svm/svm_backend.h"
#include "backend/svm/svm_intr.h"

void svm_end_emulated_instruction(struct virt_vcpu *v)
{
    struct svm_vcpu *s = svm(v);
    s->vmcb->interrupt_shadow &= ~1ull;
    /* While pollux steps towards an NMI window with a TF of its own, TF is not the guest's. */
    bool guest_tf = (v->regs.rflags & RFLAGS_TF) && (!s->nmi_step || s->nmi_step_guest_tf);
    if (guest_tf) {
        s->vmcb->dr6 = dr6_single_step(s->vmcb->dr6);
        svm_inject_exception(v, VECTOR_DB, false, 0);
    }
}

bool svm_interrupt_allowed(struct virt_vcpu *v)
{
    struct svm_vcpu *s = svm(v);
    return (v->regs.rflags & RFLAGS_IF) && !(s->vmcb->interrupt_shadow & 1) && !svm_event_queued(s);
}

bool svm_in_interrupt_shadow(struct virt_vcpu *v)
{
    return svm(v)->vmcb->interrupt_shadow & 1;
}

void svm_inject_interrupt(struct virt_vcpu *v, uint8_t vector)
{
    svm(v)->vmcb->event_inj = vector | SVM_EVTINJ_TYPE_INTR | SVM_EVTINJ_VALID;
}

/*
 * A virtual interrupt the guest cannot mask by TPR: the CPU exits (VINTR)
 * when the guest could take it, i.e. once IF=1 and no shadow.
 */
void svm_set_interrupt_window(struct virt_vcpu *v, bool on)
{
    struct vmcb *vmcb = svm(v)->vmcb;
    const uint64_t vintr = SVM_VINTR_V_IRQ | SVM_VINTR_IGN_TPR | SVM_VINTR_PRIO_MAX;
    if (on) {
        vmcb->vintr |= vintr;
        vmcb->intercept_misc1 |= SVM_INTERCEPT_VINTR;
    } else {
        vmcb->vintr &= ~vintr;
        vmcb->intercept_misc1 &= ~SVM_INTERCEPT_VINTR;
    }
}

/*
 * V_IRQ means a virtual interrupt offered to the CPU: a pending vector or the
 * interrupt window's. One offered at the last entry may have been taken,
 * leaving the next pending vector to offer: the full path looks. An offer
 * replaces a window the last entry opened (for the 8259's interrupt, which
 * is never offered): with the VINTR intercept left on, the CPU would exit
 * where it should deliver.
 */
bool svm_offer_interrupt(struct virt_vcpu *v, int vector, uint32_t tpr)
{
    if (svm_setup.virq_check != SVM_VIRQ_EXACT && svm_setup.virq_check != SVM_VIRQ_AT_EQUAL)
        return false;
    struct svm_vcpu *s = svm(v);
    s->vmcb->intercept_misc1 &= ~SVM_INTERCEPT_VINTR;
    s->vmcb->vintr = svm_vintr_offer(s->vmcb->vintr, vector, tpr, svm_setup.virq_check);
    s->offered = vector;
    return true;
}

/* With V_INTR_MASKING the guest's CR8 writes go to V_TPR: exit on them while one is held back. */
void svm_update_cr8_intercept(struct virt_vcpu *v, int tpr, int max_irr)
{
    struct vmcb *vmcb = svm(v)->vmcb;
    vmcb->intercept_cr = svm_cr8_write_intercept(vmcb->intercept_cr, tpr, max_irr);
}

bool svm_nmi_allowed(struct virt_vcpu *v)
{
    struct svm_vcpu *s = svm(v);
    return !s->nmi_masked && !(s->vmcb->interrupt_shadow & 1) && !svm_event_queued(s);
}

bool svm_nmi_in_service(struct virt_vcpu *v)
{
    return svm(v)->nmi_masked; /* from the injection until the handler's IRET */
}

void svm_inject_nmi(struct virt_vcpu *v)
{
    struct svm_vcpu *s = svm(v);
    s->vmcb->event_inj = 2 | SVM_EVTINJ_TYPE_NMI | SVM_EVTINJ_VALID;
    s->nmi_masked = true;
    s->vmcb->intercept_misc1 |= SVM_INTERCEPT_IRET;
}

void svm_set_nmi_window(struct virt_vcpu *v, bool on)
{
    struct svm_vcpu *s = svm(v);
    if (!on || s->nmi_step)
        return;
    if (s->nmi_masked && !s->iret_seen) {
        s->vmcb->intercept_misc1 |= SVM_INTERCEPT_IRET; /* still in the handler */
        return;
    }
    s->nmi_step = true;
    s->nmi_step_guest_tf = v->regs.rflags & RFLAGS_TF;
    /* An IRET loads RFLAGS from the guest's stack: then TF is the guest's own again. */
    s->nmi_step_restore_tf = !s->nmi_step_guest_tf && !s->iret_seen;
    v->regs.rflags |= RFLAGS_TF;
    s->vmcb->intercept_exceptions |= 1u << VECTOR_DB;
}

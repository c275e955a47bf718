/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Events for the guest: exceptions, interrupts and NMIs injected at the next
 * entry (EVENTINJ), the interrupt window (a V_IRQ of pollux's own, VINTR
 * intercepted), V_IRQ offers of pending vectors, the NMI window SVM lacks
 * (the IRET intercept, then a single step), and the shadows and blocking
 * that say whether the guest can take one now (the virt_ops of the same
 * names). An event the last exit interrupted is re-injected by the entry
 * itself (svm.c), unless vmm/ injects one first.
 */
#ifndef POLLUX_BACKEND_SVM_SVM_EVENTS_H
#define POLLUX_BACKEND_SVM_SVM_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/vectors.h"
#include "arch/x86/virt.h"
#include "backend/svm/svm_backend.h"

struct virt_vcpu;

/* Inline: the exit path queues the #DB of the guest's own single step with it. */
static inline void svm_inject_exception(struct virt_vcpu *v, uint8_t vector, bool has_error,
                                        uint32_t error)
{
    uint64_t ev = vector | SVM_EVTINJ_TYPE_EXEPT | SVM_EVTINJ_VALID;
    /* VMRUN pushes the VMCB's RFLAGS as they are: a fault's image needs RF (vectors.h). */
    if (exception_is_fault(vector))
        v->regs.rflags |= RFLAGS_RF;
    if (has_error)
        ev |= SVM_EVTINJ_VALID_ERR | ((uint64_t)error << 32);
    svm(v)->vmcb->event_inj = ev;
}

/* An event injected now, or one interrupted at the last exit: the two words tested as one. */
static inline bool svm_event_queued(struct svm_vcpu *s)
{
    return (s->vmcb->event_inj | s->reinject) & SVM_EVTINJ_VALID;
}

/*
 * The next entry only resumes the guest: nothing injected or re-injected, no
 * V_IRQ offered at the last VMRUN or now, no NMI-window single step. The
 * exit fast path enters again at once only then (inline: it asks at every
 * such entry).
 */
static inline bool svm_entry_is_plain(struct svm_vcpu *s)
{
    return !svm_event_queued(s) && !s->virq_at_entry && !(s->vmcb->vintr & SVM_VINTR_V_IRQ) &&
           !s->nmi_step;
}

void svm_end_emulated_instruction(struct virt_vcpu *v);
bool svm_interrupt_allowed(struct virt_vcpu *v);
bool svm_in_interrupt_shadow(struct virt_vcpu *v);
void svm_inject_interrupt(struct virt_vcpu *v, uint8_t vector);
void svm_set_interrupt_window(struct virt_vcpu *v, bool on);
bool svm_offer_interrupt(struct virt_vcpu *v, int vector, uint32_t tpr);
void svm_update_cr8_intercept(struct virt_vcpu *v, int tpr, int max_irr);
bool svm_nmi_allowed(struct virt_vcpu *v);
bool svm_nmi_in_service(struct virt_vcpu *v);
void svm_inject_nmi(struct virt_vcpu *v);
void svm_set_nmi_window(struct virt_vcpu *v, bool on);

#endif

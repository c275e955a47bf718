/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Events for the guest: exceptions, interrupts and NMIs injected at the next
 * entry (VM-entry interruption information), the interrupt and NMI windows,
 * and the shadows and blocking that say whether the guest can take one now
 * (the virt_ops of the same names). An event the last exit interrupted is
 * re-injected by the entry itself (vmx.c), after any vmm/ injects.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_EVENTS_H
#define POLLUX_BACKEND_VMX_VMX_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/vmx/vmx_backend.h"

struct virt_vcpu;

/* An event fills the next entry's interruption information: vmm/'s, or the interrupted one. */
static inline bool vmx_event_queued(const struct vmx_vcpu *s)
{
    return s->event_injected || (s->reinject & INTR_INFO_VALID);
}

/*
 * The next entry only resumes the guest: nothing injected or re-injected, no
 * interrupt or NMI window armed. The exit fast path enters again at once
 * only then (inline: it asks at every such entry).
 */
static inline bool vmx_entry_is_plain(const struct vmx_vcpu *s)
{
    return !vmx_event_queued(s) && !(s->proc & (PROC_INTR_WINDOW | PROC_NMI_WINDOW));
}

void vmx_inject_exception(struct virt_vcpu *v, uint8_t vector, bool has_error, uint32_t error);
void vmx_end_emulated_instruction(struct virt_vcpu *v);
bool vmx_interrupt_allowed(struct virt_vcpu *v);
bool vmx_in_interrupt_shadow(struct virt_vcpu *v);
void vmx_inject_interrupt(struct virt_vcpu *v, uint8_t vector);
void vmx_set_interrupt_window(struct virt_vcpu *v, bool on);
bool vmx_nmi_allowed(struct virt_vcpu *v);
bool vmx_nmi_in_service(struct virt_vcpu *v);
void vmx_inject_nmi(struct virt_vcpu *v);
void vmx_set_nmi_window(struct virt_vcpu *v, bool on);

#endif

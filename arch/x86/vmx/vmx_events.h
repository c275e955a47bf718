/*
 * Events for the guest: exceptions, interrupts and NMIs injected at the next
 * entry (VM-entry interruption information), the interrupt and NMI windows,
 * and the shadows and blocking that say whether the guest can take one now
 * (the virt_ops of the same names). An event the last exit interrupted is
 * re-injected by the entry itself (vmx.c), after any vmm/ injects.
 */
#ifndef POLLUX_ARCH_X86_VMX_VMX_EVENTS_H
#define POLLUX_ARCH_X86_VMX_VMX_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

void vmx_inject_exception(struct vcpu *v, uint8_t vector, bool has_error, uint32_t error);
void vmx_end_emulated_instruction(struct vcpu *v);
bool vmx_interrupt_allowed(struct vcpu *v);
bool vmx_in_interrupt_shadow(struct vcpu *v);
void vmx_inject_interrupt(struct vcpu *v, uint8_t vector);
void vmx_set_interrupt_window(struct vcpu *v, bool on);
bool vmx_nmi_allowed(struct vcpu *v);
bool vmx_nmi_in_service(struct vcpu *v);
void vmx_inject_nmi(struct vcpu *v);
void vmx_set_nmi_window(struct vcpu *v, bool on);
bool vmx_entry_is_plain(struct vcpu *v);

#endif

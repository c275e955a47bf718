/* SPDX-License-Identifier: GPL-2.0-only */
/* Event injection, windows and blocking (vmx_events.h). */
#include "backend/vmx/vmx_events.h"

#include "arch/x86/cpu.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/vectors.h"
#include "arch/x86/virt.h"
#include "backend/vmx/vmx_backend.h"
#include "backend/vmx/vmx_insn.h"
#include "backend/vmx/vmx_state.h"
#include "backend/vmx/vmx_vmcs.h"

void vmx_inject_exception(struct virt_vcpu *v, uint8_t vector, bool has_error, uint32_t error)
{
    struct vmx_vcpu *s = loaded(v);
    uint32_t info = vector | (INTR_TYPE_HW_EXCEPT << INTR_INFO_TYPE_SHIFT) | INTR_INFO_VALID;
    /* Entry pushes the VMCS's RFLAGS as they are: a fault's image needs RF (vectors.h). */
    if (exception_is_fault(vector))
        v->regs.rflags |= RFLAGS_RF;
    /* Real mode (unrestricted guest) delivers exceptions without error codes. */
    if (has_error && (vmx_guest_cr0(s) & CR0_PE)) {
        info |= INTR_INFO_ERROR;
        vmwrite(VMCS_ENTRY_ERROR_CODE, error);
    }
    vmwrite(VMCS_ENTRY_INTR_INFO, info);
    s->event_injected = true;
}

/* The STI/MOV-SS shadow ends with the instruction; the VMCS current. */
static inline void end_interrupt_shadow(void)
{
    uint32_t x = (uint32_t)vmread_nofail(VMCS_GUEST_INTERRUPTIBILITY);
    if (x & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS))
        vmwrite_nofail(VMCS_GUEST_INTERRUPTIBILITY,
                       x & ~(INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS));
}

/* The VMCS to be made current, or a single-step #DB owed. */
static __attribute__((noinline)) void end_emulated_instruction_slow(struct virt_vcpu *v)
{
    loaded(v);
    end_interrupt_shadow();
    if (v->regs.rflags & RFLAGS_TF) {
        /* The guest's DR6 is in the CPU while it runs; an injected #DB does not touch it. */
        dr6_write(dr6_single_step(dr6_read()));
        vmx_inject_exception(v, VECTOR_DB, false, 0);
    }
}

/*
 * Every emulated instruction ends here, the exit fast path's included. The
 * common case (VMCS current, TF clear) calls nothing, so it saves no register.
 */
void vmx_end_emulated_instruction(struct virt_vcpu *v)
{
    const struct vmx_vcpu *s = v->arch;
    if (cpu_state()->current_vmcs != (uint64_t)s->vmcs || (v->regs.rflags & RFLAGS_TF)) {
        end_emulated_instruction_slow(v);
        return;
    }
    end_interrupt_shadow();
}

bool vmx_in_interrupt_shadow(struct virt_vcpu *v)
{
    loaded(v);
    return vmread(VMCS_GUEST_INTERRUPTIBILITY) & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS);
}

bool vmx_interrupt_allowed(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = loaded(v);
    uint32_t x = (uint32_t)vmread(VMCS_GUEST_INTERRUPTIBILITY);
    return (v->regs.rflags & RFLAGS_IF) && !(x & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS)) &&
           !vmx_event_queued(s);
}

void vmx_inject_interrupt(struct virt_vcpu *v, uint8_t vector)
{
    struct vmx_vcpu *s = loaded(v);
    vmwrite(VMCS_ENTRY_INTR_INFO,
            vector | (INTR_TYPE_EXT << INTR_INFO_TYPE_SHIFT) | INTR_INFO_VALID);
    s->event_injected = true;
}

void vmx_set_interrupt_window(struct virt_vcpu *v, bool on)
{
    struct vmx_vcpu *s = v->arch;
    set_proc_bit(s, PROC_INTR_WINDOW, on);
}

/* Bit 3 is blocking by virtual NMI with virtual NMIs, the guest's real NMI blocking without. */
bool vmx_nmi_allowed(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = loaded(v);
    uint32_t x = (uint32_t)vmread(VMCS_GUEST_INTERRUPTIBILITY);
    return !(x & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS | INTERRUPTIBILITY_NMI)) &&
           !vmx_event_queued(s);
}

static bool is_nmi_event(uint32_t info)
{
    return (info & INTR_INFO_VALID) &&
           ((info & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT) == INTR_TYPE_NMI;
}

bool vmx_nmi_in_service(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = loaded(v);
    if (vmread(VMCS_GUEST_INTERRUPTIBILITY) & INTERRUPTIBILITY_NMI)
        return true;
    if (s->event_injected && is_nmi_event((uint32_t)vmread(VMCS_ENTRY_INTR_INFO)))
        return true;
    return is_nmi_event(s->reinject);
}

void vmx_inject_nmi(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = loaded(v);
    vmwrite(VMCS_ENTRY_INTR_INFO, 2 | (INTR_TYPE_NMI << INTR_INFO_TYPE_SHIFT) | INTR_INFO_VALID);
    s->event_injected = true;
    set_proc_bit(s, PROC_NMI_WINDOW, false);
}

/*
 * Exit as soon as the guest can take an NMI. Disarmed by that exit (as SVM's
 * IRET intercept is) and by inject_nmi. Without virtual NMIs the CPU has no
 * such exit: the NMI then waits for the next exit of another kind.
 */
void vmx_set_nmi_window(struct virt_vcpu *v, bool on)
{
    struct vmx_vcpu *s = v->arch;
    if (vmx.ctls.available & VMX_OPT_VIRTUAL_NMIS)
        set_proc_bit(s, PROC_NMI_WINDOW, on);
}

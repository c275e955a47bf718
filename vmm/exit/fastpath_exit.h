/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exit fast path's policy: which exits it handles, and when the guest
 * may go on at once. The summary-word protocol is in vmm/exit/fastpath.h.
 *
 * The vendor's vcpu_run calls fastpath_exit right after every exit, host
 * interrupts (and GIF) still off, with the guest's registers in v->hw.regs
 * (but RSP, which an instruction exit's handler here must not read: VMX
 * leaves it in the VMCS, arch/x86/virt.h) and e decoded. Inline, and
 * included only by the vendors' vcpu_run: every exit runs it.
 */
#ifndef POLLUX_VMM_EXIT_FASTPATH_EXIT_H
#define POLLUX_VMM_EXIT_FASTPATH_EXIT_H

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "vmm/exit/exits.h"
#include "vmm/exit/fastpath.h"
#include "vmm/exit/guest_access.h"
#include "vmm/exit/hypercall.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/dev/vlapic_dev.h"
#include "vmm/vm.h"

/*
 * After a write to the local APIC (an EOI, the TPR, LINT0): an interrupt
 * that was already pending may be deliverable now, the 8259's through a
 * LINT0 just unmasked too, with no sender to say so. If not, the TPR may
 * hold one back now: the CR8 intercept follows, as the full path's entry
 * would set it.
 */
static inline enum fastpath_result after_apic_write(struct vcpu *v)
{
    if (vlapic_highest_pending(&v->lapic) >= 0 || vcpu_extint_pending(v))
        return FASTPATH_HANDLED;
    vcpu_update_cr8_intercept(v);
    return FASTPATH_REENTER;
}

/*
 * Exits whose handling never waits, never changes what runs, and reaches
 * other vCPUs only through vcpu_notify: CPUID, the NOP hypercall, MSRs,
 * port I/O to the emulated devices, CR8 (the local APIC's TPR), the xAPIC
 * page's registers (EOI, TPR, ICR, the timer), and HLT when an event
 * already ends it: the FAST entries of EXIT_HANDLERS (vmm/exit/exits.h), each
 * handled by its own handler, called directly. Returns FASTPATH_NOT_MINE
 * for the others, untouched; FASTPATH_REENTER where the exit itself leaves
 * nothing to deliver; FASTPATH_HANDLED where it does (the full path's
 * entry injects it).
 */
#define FASTPATH_SLOW(reason, handler)
#define FASTPATH_CASE(reason, handler, when, fast, then)                                           \
    case reason:                                                                                   \
        if (!(when))                                                                               \
            return FASTPATH_NOT_MINE;                                                              \
        fast(v, e);                                                                                \
        return then;

static inline enum fastpath_result handle_common_exit(struct vcpu *v, const struct exit_record *e)
{
    switch (e->reason) {
        EXIT_HANDLERS(FASTPATH_SLOW, FASTPATH_CASE)
    default:
        return FASTPATH_NOT_MINE;
    }
}

#undef FASTPATH_SLOW
#undef FASTPATH_CASE

static inline enum fastpath_result fastpath_exit(struct vcpu *v, const struct exit_record *e)
{
    v->exited_at = rdtsc();
    vcpu_mode_forget(v);
    v->stats.exits[e->reason]++;
    enum fastpath_result r = handle_common_exit(v, e);
    if (r == FASTPATH_REENTER && !fastpath_may_reenter(&v->changed, v->hw.regs.rflags))
        return FASTPATH_HANDLED;
    return r;
}

/*
 * The vendor, about to enter again after FASTPATH_REENTER: the exit's time
 * (when it takes the full path instead, vmm/vcpu/vcpu.c times it). The low 32
 * bits suffice: the fast path runs with interrupts off, for microseconds.
 */
static inline void fastpath_reentry(struct vcpu *v, const struct exit_record *e)
{
    vcpu_exit_timed(v, e->reason, (uint32_t)rdtsc() - (uint32_t)v->exited_at);
}

#endif

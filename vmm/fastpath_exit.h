/*
 * The exit fast path's policy: which exits it handles, and when the guest
 * may go on at once. The summary-word protocol is in vmm/fastpath.h.
 *
 * The vendor's vcpu_run calls fastpath_exit right after every exit, host
 * interrupts (and GIF) still off, with the guest's registers in v->regs
 * (but RSP, which an instruction exit's handler here must not read: VMX
 * leaves it in the VMCS, arch/x86/virt.h) and e decoded. Inline, and
 * included only by the vendors' vcpu_run: every exit runs it.
 */
#ifndef POLLUX_VMM_FASTPATH_EXIT_H
#define POLLUX_VMM_FASTPATH_EXIT_H

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "vmm/exits.h"
#include "vmm/fastpath.h"
#include "vmm/guest_access.h"
#include "vmm/hypercall.h"
#include "vmm/vlapic_dev.h"
#include "vmm/vm.h"

/*
 * Exits whose handling never waits, never changes what runs, and reaches
 * other vCPUs only through vcpu_notify: CPUID, the NOP hypercall, MSRs,
 * port I/O to the emulated devices, CR8 (the local APIC's TPR) and the
 * xAPIC page's registers (EOI, TPR, ICR, the timer). Each is handled by its
 * own handler, called directly. Returns false for the others, untouched;
 * *apic_write says the exit wrote the local APIC (an EOI, the TPR), which
 * can make an interrupt that was already pending deliverable without any
 * sender.
 */
static inline bool handle_common_exit(struct vcpu *v, const struct exit_record *e, bool *apic_write)
{
    switch (e->reason) {
    case EXIT_CPUID:
        handle_cpuid(v, e);
        return true;
    case EXIT_HYPERCALL:
        if ((uint32_t)v->regs.rax != HC_NOP)
            return false;
        handle_hypercall(v, e);
        return true;
    case EXIT_MSR_READ:
        handle_msr_read(v, e);
        return true;
    case EXIT_MSR_WRITE:
        handle_msr_write(v, e);
        *apic_write = true;
        return true;
    case EXIT_IO:
        if (e->io.string)
            return false;
        handle_io(v, e);
        return true;
    case EXIT_CR8:
        handle_cr8(v, e);
        *apic_write = e->cr8.write;
        return true;
    case EXIT_NESTED_PAGE_FAULT:
        if (!xapic_page_access(e))
            return false;
        handle_npf(v, e);
        *apic_write = e->npf.write;
        return true;
    default:
        return false;
    }
}

static inline enum fastpath_result fastpath_exit(struct vcpu *v, const struct exit_record *e)
{
    v->exited_at = rdtsc();
    vcpu_mode_forget(v);
    v->stats.exits[e->reason]++;
    bool apic_write = false;
    if (!handle_common_exit(v, e, &apic_write))
        return FASTPATH_NOT_MINE;
    if (apic_write && vlapic_highest_pending(&v->lapic) >= 0)
        return FASTPATH_HANDLED;
    if (!fastpath_may_reenter(&v->changed, v->regs.rflags))
        return FASTPATH_HANDLED;
    return FASTPATH_REENTER;
}

/*
 * The vendor, about to enter again after FASTPATH_REENTER: the exit's time
 * (when it takes the full path instead, vmm/vcpu.c counts it). The low 32
 * bits suffice: the fast path runs with interrupts off, for microseconds.
 */
static inline void fastpath_reentry(struct vcpu *v, const struct exit_record *e)
{
    v->stats.exit_cycles[e->reason] += (uint32_t)rdtsc() - (uint32_t)v->exited_at;
}

#endif

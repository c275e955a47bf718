/* The exit fast path's policy; the summary-word protocol is in vmm/fastpath.h. */
#include "vmm/fastpath.h"

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "vmm/exits.h"
#include "vmm/guest_access.h"
#include "vmm/hypercall.h"
#include "vmm/vlapic_dev.h"
#include "vmm/vm.h"

/*
 * Exits whose handling never waits, never changes what runs, and reaches
 * other vCPUs only through vcpu_notify: CPUID, the NOP hypercall, MSRs,
 * port I/O to the emulated devices, CR8 (the local APIC's TPR) and the
 * xAPIC page's registers (EOI, TPR, ICR, the timer).
 */
static bool common_exit(const struct vcpu *v, const struct exit_record *e)
{
    switch (e->reason) {
    case EXIT_NESTED_PAGE_FAULT:
        return xapic_page_access(e);
    case EXIT_CPUID:
    case EXIT_MSR_READ:
    case EXIT_MSR_WRITE:
    case EXIT_CR8:
        return true;
    case EXIT_HYPERCALL:
        return (uint32_t)v->regs.rax == HC_NOP;
    case EXIT_IO:
        return !e->io.string;
    default:
        return false;
    }
}

bool fastpath_may_reenter(uint32_t *changed, uint64_t rflags, bool entry_plain)
{
    return !vcpu_changes_peek(changed) && !(rflags & RFLAGS_TF) && entry_plain;
}

enum fastpath_result fastpath_exit(struct vcpu *v, const struct exit_record *e)
{
    uint64_t exited = rdtsc();
    v->exited_at = exited;
    vcpu_mode_forget(v);
    v->stats.exits[e->reason]++;
    if (!common_exit(v, e))
        return FASTPATH_NOT_MINE;
    handle_exit(v, e);
    /*
     * An EOI, a TPR write or enabling the APIC can make an interrupt that is
     * already pending deliverable without any sender: the full path injects it.
     */
    bool apic_write = e->reason == EXIT_MSR_WRITE || (e->reason == EXIT_CR8 && e->cr8.write) ||
                      (e->reason == EXIT_NESTED_PAGE_FAULT && e->npf.write);
    if (apic_write && vlapic_highest_pending(&v->lapic) >= 0)
        return FASTPATH_HANDLED;
    if (!fastpath_may_reenter(&v->changed, v->regs.rflags, virt->entry_is_plain(v)))
        return FASTPATH_HANDLED;
    v->stats.exit_cycles[e->reason] += rdtsc() - exited;
    return FASTPATH_REENTER;
}

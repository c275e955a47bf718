/*
 * Blocking and waking a vCPU, without lost wake-ups. Every event (an interrupt in the
 * local APIC's IRR, a pending NMI or INIT, a startup IPI, a stop request) is
 * made pending while holding v->lock, and the sender then calls
 * vcpu_notify() under the same lock. A halting vCPU decides to block in
 * vcpu_halt() under that lock too: it re-checks for a deliverable event and
 * only then sets BLOCKED. So either the halting side sees the event and
 * keeps running, or the sender sees BLOCKED and makes the vCPU RUNNABLE
 * (sched_wake). There is no window in between. A vCPU RUNNING on another
 * CPU is kicked with an IPI: its CPU checks for events with interrupts off
 * just before entering the guest, and an IPI arriving after that check
 * forces an immediate exit (the INTR intercept / external-interrupt
 * exiting), after which the loop injects it.
 */
#include "vmm/vcpu.h"

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "sched/sched.h"

static unsigned log2_floor(uint64_t x)
{
    unsigned n = 0;
    while (x >>= 1)
        n++;
    return n;
}

void vcpu_set_state(struct vcpu *v, enum vcpu_state s, uint64_t now)
{
    uint64_t spent = now > v->state_since ? now - v->state_since : 0;
    v->stats.cycles[v->state] += spent;
    if (v->state == VCPU_BLOCKED) {
        unsigned b = log2_floor(tsc_to_ns(spent) | 1);
        v->stats.halt_hist[b < HALT_HIST_BUCKETS ? b : HALT_HIST_BUCKETS - 1]++;
    }
    v->state = s;
    v->state_since = now;
}

/* Would this event end a halt? An interrupt only if the guest has IF=1. */
static bool has_wake_event(struct vcpu *v)
{
    if (nmi_waiting(&v->nmi) || v->init_pending || v->vm->stopping)
        return true;
    return (v->regs.rflags & RFLAGS_IF) && vlapic_highest_pending(&v->lapic) >= 0;
}

void vcpu_notify(struct vcpu *v)
{
    if (v->state == VCPU_BLOCKED && has_wake_event(v)) {
        vcpu_set_state(v, VCPU_RUNNABLE, rdtsc());
        sched_wake(v);
    } else if (v->state == VCPU_RUNNING && v->cpu != sched_this_cpu()) {
        sched_kick(v->cpu);
    }
}

void vcpu_halt(struct vcpu *v)
{
    uint64_t flags = spin_lock_irqsave(&v->lock);
    if (!has_wake_event(v)) {
        v->stats.halts++;
        vcpu_set_state(v, VCPU_BLOCKED, rdtsc());
        v->halted = true;
    }
    spin_unlock_irqrestore(&v->lock, flags);
}

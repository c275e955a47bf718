/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Halting, polling and waking a vCPU, without lost wake-ups.
 *
 * Every event (an interrupt in the local APIC's IRR, a pending NMI or INIT, a
 * startup IPI, a stop request) is made pending while holding v->se.lock, and the
 * sender then calls vcpu_notify() under the same lock, which reads the vCPU's
 * state. A halting vCPU, in vcpu_halt(), takes that lock, re-checks for a
 * deliverable event and marks itself POLLING or BLOCKED before it lets go.
 * The lock's atomic exchange is a full barrier on both sides, so neither the
 * sender's store of the event and its read of the state, nor the halting
 * side's re-check and mark, can pass each other (x86 would otherwise let a
 * store pass a later load). Either the halting side sees the event and keeps
 * running, or the sender sees the mark and ends the halt:
 *   POLLING: the vCPU's own CPU spins in sched_poll() watching the state.
 *            The sender sets it RUNNING: no IPI and no queueing; the
 *            spinning CPU sees the change and re-enters the guest.
 *   BLOCKED: the sender makes it RUNNABLE and queues it (sched_wake).
 * A poll that ends without a wake event (its window passed, or another vCPU
 * became runnable on the CPU) moves POLLING to BLOCKED under the lock; a
 * sender after that sees BLOCKED. A vCPU RUNNING on another CPU is kicked
 * with an IPI: its CPU checks for events with interrupts off just before
 * entering the guest, and an IPI arriving after that check forces an
 * immediate exit (the INTR intercept / external-interrupt exiting), after
 * which the loop injects it.
 *
 * A halt's bookkeeping (statistics, the polling window, its trace) is done
 * on the vCPU's own CPU once the halt is over (vcpu_halt_finish), never by
 * the sender, which may be an interrupt handler on another CPU.
 */
#include "vmm/vcpu/vcpu.h"

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "sched/halt_poll.h"
#include "sched/sched.h"
#include "vmm/exit/fastpath.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/console/trace.h"

const char *const vcpu_state_names[SCHED_STATE_COUNT] = {
    [SCHED_RUNNABLE] = "runnable", [SCHED_RUNNING] = "running",  [SCHED_POLLING] = "polling",
    [SCHED_BLOCKED] = "blocked",   [SCHED_PARKED] = "wait-sipi", [SCHED_STOPPED] = "stopped",
};

bool vcpu_has_wake_event(struct vcpu *v)
{
    /* A PV kick (KVM_HC_KICK_CPU) ends a halt even with IF=0: the PV qspinlock waiter's HLT. */
    if (nmi_waiting(&v->nmi) || v->init_pending || v->vm->stopping ||
        __atomic_load_n(&v->pv.pv_unhalted, __ATOMIC_SEQ_CST))
        return true;
    return (v->hw.regs.rflags & RFLAGS_IF) &&
           (vlapic_highest_pending(&v->lapic) >= 0 || vcpu_extint_pending(v));
}

void vcpu_kick_consumed(struct vcpu *v)
{
    __atomic_store_n(&v->pv.pv_unhalted, false, __ATOMIC_SEQ_CST);
}

void vcpu_init_reset(struct vcpu *v)
{
    vm_devices_init_vcpu(v->vm, v);
    nmi_reset(&v->nmi);
}

void vcpu_trace_wakeup(struct vcpu *v, enum trace_wake source, const struct vcpu *from)
{
    if (trace_on(TRACE_SCHED))
        trace_record(v->vm, TRACE_SCHED, v->hw.id, TRACE_SCHED_WAKEUP,
                     trace_pair(source, from ? from->hw.id + 1 : 0), v->se.cpu);
}

void vcpu_notify(struct vcpu *v, enum trace_wake source, const struct vcpu *from)
{
    vcpu_changes_raise(&v->changed, CHANGE_EVENT); /* before any kick: vmm/exit/fastpath.h */
    bool halted = v->se.state == SCHED_POLLING || v->se.state == SCHED_BLOCKED;
    if (halted && vcpu_has_wake_event(v)) {
        uint64_t now = rdtsc();
        v->halt.woken = now;
        v->halt.valid = !v->vm->stopping;
        v->halt.source = (uint8_t)(v->vm->stopping ? TRACE_WAKE_STOP : source);
        vcpu_trace_wakeup(v, v->halt.source, from);
        if (v->se.state == SCHED_POLLING) {
            sched_set_state(&v->se, SCHED_RUNNING, now);
            sched_note_remote_work(v->se.cpu); /* its CPU polls for that */
        } else {
            v->stats.halt_wakeup++;
            sched_set_state(&v->se, SCHED_RUNNABLE, now);
            sched_wake(&v->se);
        }
    } else if (v->se.state == SCHED_RUNNING && v->se.cpu != sched_this_cpu()) {
        sched_kick(v->se.cpu);
    }
}

uint64_t vcpu_halt_poll_max(const struct vcpu *v)
{
    return v->vm->cfg.policy.halt_poll.max_ns;
}

static void trace_window(struct vcpu *v, const struct halt_poll_change *c)
{
    if (c->kind != HALT_POLL_KEEP && trace_on(TRACE_HALT_POLL))
        trace_record(v->vm, TRACE_HALT_POLL, v->hw.id, c->kind == HALT_POLL_GROW, c->new_ns,
                     c->old_ns);
}

void vcpu_halt(struct vcpu *v)
{
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    if (vcpu_has_wake_event(v)) {
        vcpu_kick_consumed(v);
        spin_unlock_irqrestore(&v->se.lock, flags);
        return;
    }
    uint64_t now = rdtsc();
    v->stats.halts++;
    v->halt = (struct vcpu_halt){
        .active = true,
        .poll_allowed = kvm_pv_host_poll_allowed(v),
        .cpu_wanted = sched_others_waiting(),
        .valid = true,
        .start = now,
        .poll_end = now,
    };
    uint64_t window = 0;
    /* A poll would end at once, with the CPU handed over: KVM starts one anyway, pollux not. */
    if (v->halt.poll_allowed && !v->halt.cpu_wanted) {
        struct halt_poll_change c;
        window =
            halt_poll_begin(&v->halt_poll, &v->vm->cfg.policy.halt_poll, vcpu_halt_poll_max(v), &c);
        trace_window(v, &c);
    }
    if (window) {
        v->halt.polled = true;
        sched_set_state(&v->se, SCHED_POLLING, now);
        spin_unlock_irqrestore(&v->se.lock, flags);
        /* Checked where polling happens, not where it was decided: it must never count. */
        if (!kvm_pv_host_poll_allowed(v))
            v->stats.halt_attempted_poll_optout++;
        sched_poll(&v->se, now + ns_to_tsc(window));
        flags = spin_lock_irqsave(&v->se.lock);
        now = rdtsc();
        v->halt.poll_end = now;
        if (v->se.state != SCHED_POLLING) {
            /* A sender ended the halt while the CPU polled. */
            spin_unlock_irqrestore(&v->se.lock, flags);
            vcpu_halt_finish(v);
            return;
        }
    }
    v->halt.blocked = true;
    sched_set_state(&v->se, SCHED_BLOCKED, now);
    v->halted = true;
    spin_unlock_irqrestore(&v->se.lock, flags);
}

void vcpu_halt_finish(struct vcpu *v)
{
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    struct vcpu_halt h = v->halt;
    v->halt.active = false;
    if (h.active)
        vcpu_kick_consumed(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
    if (!h.active)
        return;
    struct vcpu_stats *st = &v->stats;
    /* A successful poll ends when the CPU saw the wake-up, a blocked halt when it came. */
    uint64_t halt_ns = tsc_to_ns((h.blocked ? h.woken : h.poll_end) - h.start);
    stats_hist_add(st->halt_hist, halt_ns);
    if (h.polled) {
        uint64_t poll_ns = tsc_to_ns(h.poll_end - h.start);
        st->halt_attempted_poll++;
        if (!h.blocked) {
            st->halt_successful_poll++;
            st->halt_poll_invalid += !h.valid;
            st->halt_poll_success_ns += poll_ns;
            stats_hist_add(st->halt_poll_success_hist, poll_ns);
        } else {
            st->halt_poll_fail_ns += poll_ns;
            stats_hist_add(st->halt_poll_fail_hist, poll_ns);
        }
    }
    if (h.blocked) {
        uint64_t wait_ns = tsc_to_ns(h.woken - h.poll_end);
        st->halt_wait_ns += wait_ns;
        stats_hist_add(st->halt_wait_hist, wait_ns);
    }
    if (trace_on(TRACE_HALT))
        trace_record_at(
            v->vm, h.start, TRACE_HALT, v->hw.id,
            trace_halt_flag(h.source, h.blocked, h.valid, !h.poll_allowed, h.cpu_wanted), halt_ns,
            v->halt_poll.window_ns);
    /* A guest that opted out of host polling keeps its window untouched (KVM's kvm_arch_no_poll).
     */
    if (!h.poll_allowed)
        return;
    struct halt_poll_change c = halt_poll_end(&v->halt_poll, &v->vm->cfg.policy.halt_poll,
                                              vcpu_halt_poll_max(v), halt_ns, h.valid);
    trace_window(v, &c);
}

void vcpu_timer_late(struct vcpu *v, uint64_t due, uint64_t at)
{
    struct vcpu_stats *st = &v->stats;
    uint64_t late = at > due ? at - due : 0;
    /* Host TSC = guest TSC - offset; the C-state model's exit is counted beside, not inside. */
    uint64_t idle =
        late ? sched_idle_exit_within(due - v->hw.tsc_offset, at - v->hw.tsc_offset) : 0;
    uint64_t ns = tsc_to_ns(late - idle);
    st->timer_interrupts++;
    st->timer_late_ns += ns;
    st->timer_idle_exit_ns += tsc_to_ns(idle);
    if (ns > st->timer_late_max_ns)
        st->timer_late_max_ns = ns;
    stats_hist_add(st->timer_late_hist, ns);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Running a vCPU and delivering events to it: the pieces of the vCPU life
 * cycle that vmm/ owns, called by sched/ (running) and by anything that makes
 * an event pending (IPIs, timers, stop requests).
 */
#ifndef POLLUX_VMM_VCPU_VCPU_H
#define POLLUX_VMM_VCPU_VCPU_H

#include <stdint.h>

#include "vmm/console/trace.h"
#include "vmm/vm.h"

/* The vCPU states by name: runnable, running, polling, ... (the state dump, trace=sched). */
extern const char *const vcpu_state_names[SCHED_STATE_COUNT];

/* Set up v's timer and event fields (at creation). */
void vcpu_init_events(struct vcpu *v);

/* Run v on this CPU (state RUNNING) until it must leave the CPU. */
enum sched_run_result vcpu_run(struct vcpu *v);

/* The scheduler's operations on a vCPU's entity (sched/entity.h), registered at boot. */
void vcpu_sched_register(void);

/*
 * An event for v became pending (lock held): wake it if it is halted and the
 * event would end the halt, or make its CPU leave guest mode if it is
 * running elsewhere so the event is injected. source and from (the sending
 * vCPU, or NULL) are what trace=sched says woke it.
 */
void vcpu_notify(struct vcpu *v, enum trace_wake source, const struct vcpu *from);

/* trace=sched: v was woken by source (from: the sending vCPU, or NULL). */
void vcpu_trace_wakeup(struct vcpu *v, enum trace_wake source, const struct vcpu *from);

/* Give sched/ the vCPU tracer while trace=sched is on (at boot, and when `t` changes traces). */
void vcpu_trace_update(void);

/*
 * The 8259's INT reaches v (KVM's kvm_cpu_has_extint): v is vCPU 0 of a
 * legacy_pic=on VM, the PIC asks, and v's local APIC passes LINT0
 * (vlapic_accept_pic_intr). The INT is read without devices_lock: the
 * device stores it before it tells vCPU 0 (vm_pic_kick), so a halt that
 * misses it is woken, and the entry that acts on it acknowledges under
 * the lock (vm_devices_intack), which finds the real state (spurious if it
 * fell).
 */
static inline bool vcpu_extint_pending(const struct vcpu *v)
{
    return v->hw.id == 0 && __atomic_load_n(&v->vm->extint, __ATOMIC_ACQUIRE) &&
           vlapic_accept_pic_intr(&v->lapic);
}

/*
 * An exit of reason r took cycles, from the exit to the end of its handling:
 * its time and the longest (exit_ns, exit_max_ns; npf_ns and npf_max_ns by
 * what a nested page fault reached). Counted here alone, for both paths: the
 * fast path's re-entry (vmm/exit/fastpath_exit.h) and vcpu_run after the full
 * path. Inline: the fast path runs it in the vendor's loop, at every exit.
 */
static inline void vcpu_exit_timed(struct vcpu *v, enum exit_reason r, uint64_t cycles)
{
    struct vcpu_stats *st = &v->stats;
    st->exit_cycles[r] += cycles;
    if (cycles > st->exit_max_cycles[r])
        st->exit_max_cycles[r] = cycles;
    if (r == EXIT_NESTED_PAGE_FAULT) {
        st->npf_cycles[v->npf_slot] += cycles;
        if (cycles > st->npf_max_cycles[v->npf_slot])
            st->npf_max_cycles[v->npf_slot] = cycles;
    }
}

/*
 * Whether a pending event would end a halt: an NMI, INIT, a stop request, a
 * PV kick (even with IF=0), or an interrupt the local APIC would deliver or
 * the 8259 asks for (vcpu_extint_pending) while the guest has IF=1.
 * Exact under v->se.lock. Without it (the exit fast path's HLT), a snapshot that errs only one way:
 * an event it sees stays pending until v's own CPU delivers it, and one it misses is seen by
 * vcpu_halt under the lock.
 */
bool vcpu_has_wake_event(struct vcpu *v);

/*
 * v leaves a halt (the fast path's HLT skip, vcpu_halt's early return, the
 * end of a halt that polled or blocked): a PV kick pending ends only the
 * halt it came for, as KVM clears pv_unhalted when the vCPU runs again.
 */
void vcpu_kick_consumed(struct vcpu *v);

/*
 * The local APIC timer's interrupt, for the expiry due at guest TSC due,
 * reaches the guest at guest TSC at (the entry that injects it, or that
 * offered it through V_IRQ): its lateness into v's statistics (timer_late_*),
 * less the C-state model's exit of this CPU within that time
 * (sched_idle_exit_within), which goes to timer_idle_exit_ns. On v's CPU.
 */
void vcpu_timer_late(struct vcpu *v, uint64_t due, uint64_t at);

/*
 * SVM V_IRQ, after the exit of a run with a vector offered (lock held):
 * taken, the vector the guest took during the run (or -1), moves to ISR and
 * pends again if it was accepted again meanwhile (vlapic_offer_end); the
 * timer's is late by the time of the entry that offered it.
 */
void vcpu_offer_end(struct vcpu *v, int taken);

/*
 * An AP takes its INIT (under its lock): its per-vCPU devices take their
 * INIT state (their init hooks: the local APIC's registers, KVM's kvmclock
 * and steal time) and every NMI sent or latched for it is dropped, as KVM's
 * kvm_vcpu_reset does.
 */
void vcpu_init_reset(struct vcpu *v);

/*
 * HLT with interrupts off, on v's CPU: unless an event is already
 * deliverable, poll for one (when the window allows), then block and set
 * v->halted if none came (vmm/vcpu/vcpu_events.c states the protocol).
 */
void vcpu_halt(struct vcpu *v);

/* On v's CPU once its halt is over: statistics, the next polling window, the trace. */
void vcpu_halt_finish(struct vcpu *v);

/* The halt-polling maximum in ns for v: its VM's halt_poll_ns= or the global one. */
uint64_t vcpu_halt_poll_max(const struct vcpu *v);

/*
 * The guest's WRMSR of value to v's IA32_TSC or IA32_TSC_ADJUST (index), on
 * its own CPU: v's offset moves, and no other vCPU's (vmm/vcpu/tsc_sync.h).
 */
void vcpu_write_tsc(struct vcpu *v, uint32_t index, uint64_t value);

/* Re-arm v's timer for its local APIC timer and its VM's timeout. Lock held. */
void vcpu_timer_update(struct vcpu *v);

/*
 * Tell the backend whether the TPR holds the highest IRR vector back, so
 * that a guest CR8 write lowering the TPR exits where it otherwise would not
 * (SVM's V_TPR) and the vector is delivered at once. KVM's
 * update_cr8_intercept. On v's CPU, before an entry.
 */
static inline void vcpu_update_cr8_intercept(struct vcpu *v)
{
    if (!virt->update_cr8_intercept)
        return;
    int irr = vlapic_highest_irr(&v->lapic);
    virt->update_cr8_intercept(&v->hw, (int)((v->lapic.tpr >> 4) & 0xf), irr < 0 ? -1 : irr >> 4);
}

/* Leave the CPU for good: cancel the timer, state STOPPED, and retire from the VM. */
void vcpu_retire(struct vcpu *v);

/*
 * The exit's instruction cannot complete now (a COM1 write or HC_PUTS the
 * console has no room for): left unretired, it runs again after v has been
 * off its CPU a while (vcpu_run), so no exit waits for the serial line.
 */
void vcpu_wait_console(struct vcpu *v);

#endif

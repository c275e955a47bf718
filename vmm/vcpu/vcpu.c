/* SPDX-License-Identifier: GPL-2.0-only */
/* The vCPU run loop: event injection before each entry, exits, timers. */
#include "vmm/vcpu/vcpu.h"

#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "lib/format.h"
#include "sched/sched.h"
#include "sched/watchdog.h"
#include "stats/report.h"
#include "vmm/console/profile.h"
#include "vmm/dev/device.h"
#include "vmm/exit/exits.h"
#include "vmm/exit/fastpath.h"
#include "vmm/exit/guest_access.h"
#include "vmm/vcpu/pause.h"
#include "vmm/vmm.h"

#define INSN_HLT 0xf4

static void timer_expired(struct timer *t, uint64_t now)
{
    struct vcpu *v = (struct vcpu *)((char *)t - __builtin_offsetof(struct vcpu, timer));
    struct vm *vm = v->vm;
    if (vm->deadline && now >= vm->deadline)
        vm_request_stop(vm, -1, "timeout");
    /* Before v's lock: a device takes its own, which comes after a vCPU's. */
    bool event = v->hw.id == 0 && vm_devices_expire(vm, now);
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    if (event)
        vcpu_notify(v, TRACE_WAKE_DEVICE, NULL);
    if (v->resume_at && now >= v->resume_at) {
        v->resume_at = 0;
        if (v->se.state == SCHED_BLOCKED) {
            sched_set_state(&v->se, SCHED_RUNNABLE, now);
            sched_wake(&v->se);
        }
    }
    if (vlapic_timer_expire_advanced(&v->lapic, now + v->hw.tsc_offset, v->timer_advance.cycles))
        vcpu_notify(v, TRACE_WAKE_TIMER, NULL);
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
}

/* The earlier of two host-TSC deadlines, 0 meaning none. */
static uint64_t earlier_deadline(uint64_t a, uint64_t b)
{
    return !a || (b && b < a) ? b : a;
}

void vcpu_timer_update(struct vcpu *v)
{
    /* Only a vCPU that can run has a timer: it is cancelled on its own CPU when it leaves. */
    if (v->se.state == SCHED_PARKED || v->se.state == SCHED_STOPPED) {
        timer_cancel(&v->timer);
        return;
    }
    uint64_t guest = vlapic_timer_fire_at(&v->lapic, v->timer_advance.cycles);
    uint64_t host = 0;
    if (guest) {
        /*
         * Converted relative to now: the guest chooses its TSC and its
         * deadlines, so an absolute conversion could wrap into the past and
         * fire forever.
         */
        uint64_t now = rdtsc(), gnow = now + v->hw.tsc_offset;
        uint64_t ahead = guest > gnow ? guest - gnow : 0;
        host = ahead > UINT64_MAX - now ? UINT64_MAX : now + ahead;
    }
    host = earlier_deadline(host, v->resume_at);
    /* vCPU 0's timer serves the VM's timed devices too (the PIT's channel 0, vmm/dev/pit.c). */
    if (v->hw.id == 0)
        host = earlier_deadline(host, vm_devices_deadline(&v->vm->devices));
    if (!v->vm->stopping)
        host = earlier_deadline(host, v->vm->deadline);
    /*
     * Only while it runs, and only ahead: the sample is taken at the exit the
     * timer makes, and one already due waits for the exit under way.
     */
    if (v->profile_sample && v->se.state == SCHED_RUNNING && v->profile_sample > rdtsc())
        host = earlier_deadline(host, v->profile_sample);
    if (host)
        timer_arm(&v->timer, v->se.cpu, host);
    else
        timer_cancel(&v->timer);
}

void vcpu_write_tsc(struct vcpu *v, uint32_t index, uint64_t value)
{
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    uint64_t now = rdtsc(), before = now + v->hw.tsc_offset;
    if (index == MSR_TSC_ADJUST)
        tsc_adjust_write(&v->hw.tsc_offset, &v->tsc_adjust, value);
    else
        tsc_write(&v->hw.tsc_offset, &v->tsc_adjust, value, now);
    virt->set_tsc_offset(&v->hw);
    vlapic_tsc_moved(&v->lapic, before, now + v->hw.tsc_offset);
    vcpu_timer_update(v); /* a TSC deadline is due at another host time */
    spin_unlock_irqrestore(&v->se.lock, flags);
    vm_devices_tsc_written(v);
}

void vcpu_init_events(struct vcpu *v)
{
    timer_init(&v->timer, timer_expired);
    v->sipi_vector = -1;
}

/*
 * STI; HLT with an interrupt already pending: on hardware the HLT executes
 * and the interrupt wakes it at once, with its return address after the
 * HLT. Waiting for an interrupt window instead comes to the same where the
 * CPU keeps the STI shadow across VMRUN, but QEMU before 9.1 drops it: the
 * window then opens before the HLT, the handler runs first and the HLT
 * sleeps with nothing left to wake it (a guest hang seen about once in 20
 * loaded runs of the smp boot test). So pollux completes the HLT itself.
 */
static bool hlt_in_shadow(struct vcpu *v)
{
    uint8_t insn[INSN_MAX];
    int code_bits;
    uint64_t la;
    return (v->hw.regs.rflags & RFLAGS_IF) && virt->in_interrupt_shadow(&v->hw) &&
           vcpu_fetch_insn(v, insn, &code_bits, &la) >= 1 && insn[0] == INSN_HLT;
}

static uint64_t guest_tsc(const struct vcpu *v)
{
    return rdtsc() + v->hw.tsc_offset;
}

/*
 * The timer's interrupt goes in at this entry (te from vlapic_timer_entry):
 * with interrupts off and no lock held, wait for a deadline the advance
 * fired ahead of (KVM's __wait_lapic_expire), then account its lateness,
 * or, offered through V_IRQ, keep when for vcpu_offer_end.
 */
static void timer_entry(struct vcpu *v, struct vlapic_timer_entry te, bool offered)
{
    uint64_t at = guest_tsc(v);
    if (te.wait_until && at < te.wait_until) {
        uint64_t from = at;
        while ((at = guest_tsc(v)) < te.wait_until)
            __asm__ volatile("pause" ::: "memory");
        v->stats.timer_advance_waits++;
        v->stats.timer_advance_wait_ns += tsc_to_ns(at - from);
    }
    if (offered)
        v->timer_offered_at = at;
    else
        vcpu_timer_late(v, te.due, at);
}

void vcpu_offer_end(struct vcpu *v, int taken)
{
    uint64_t due = taken >= 0 ? vlapic_timer_due(&v->lapic, (uint8_t)taken) : 0;
    vlapic_offer_end(&v->lapic, taken);
    if (due)
        vcpu_timer_late(v, due, v->timer_offered_at);
}

/*
 * Before entry, with interrupts off: INIT and startup IPIs change what runs;
 * NMIs, then the 8259's interrupt, then the highest local APIC interrupt
 * are injected if the guest can take them, else the CPU is asked to exit
 * when it can. An entry that injects or offers the timer's interrupt waits
 * for its deadline where the timer advance fired it early (timer_entry).
 */
static bool prepare_entry(struct vcpu *v, bool *window)
{
    /*
     * The common case, nothing pending and no window open, needs no lock: an
     * event that arrives after this look is followed by a kick, which makes
     * the entry exit at once. One that the TPR holds back still sets the
     * CR8 intercept.
     */
    if (!*window && !nmi_waiting(&v->nmi) && !v->init_pending && v->sipi_vector < 0 &&
        vlapic_highest_pending(&v->lapic) < 0 && !vcpu_extint_pending(v)) {
        vcpu_update_cr8_intercept(v);
        return true;
    }
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    if (v->init_pending) {
        v->init_pending = false;
        if (v->hw.id != 0) {
            vcpu_init_reset(v);
            if (v->sipi_vector < 0) {
                /* An AP goes back to waiting for a startup IPI. */
                v->sipi_armed = true;
                sched_set_state(&v->se, SCHED_PARKED, rdtsc());
                vcpu_timer_update(v);
                spin_unlock_irqrestore(&v->se.lock, flags);
                return false;
            }
            /* The startup IPI came with the INIT: restart at once (below). */
        }
    }
    if (v->sipi_vector >= 0) {
        virt->vcpu_reset_real(&v->hw, (uint8_t)v->sipi_vector);
        v->sipi_vector = -1;
    }
    if (nmi_waiting(&v->nmi)) {
        nmi_process(&v->nmi, virt->nmi_in_service(&v->hw));
        if (v->nmi.pending && virt->nmi_allowed(&v->hw)) {
            virt->inject_nmi(&v->hw);
            nmi_injected(&v->nmi);
        }
        /* The one latched behind an injected NMI waits for the end of its handler. */
        if (v->nmi.pending)
            virt->set_nmi_window(&v->hw, true);
    }
    int vector = vlapic_highest_pending(&v->lapic);
    bool extint = vcpu_extint_pending(v);
    if ((vector >= 0 || extint) && hlt_in_shadow(v)) {
        vcpu_advance(v, 1);
        v->stats.hlt_in_shadow++;
    }
    /*
     * The 8259's comes first, as KVM's kvm_cpu_get_interrupt has it. Its
     * vector is the PIC's at the interrupt acknowledge, so the acknowledge
     * is the injection: directly, never into the local APIC's IRR (no local
     * APIC EOI follows), and never offered through V_IRQ, which would take it
     * later than the acknowledge. One the guest cannot take waits for an
     * interrupt window.
     */
    if (extint && virt->interrupt_allowed(&v->hw)) {
        virt->inject_interrupt(&v->hw, vm_devices_intack(v->vm));
        extint = vcpu_extint_pending(v);
    }
    /*
     * Where the CPU takes an offered vector as soon as the guest can, every
     * pending one is offered (below), as hardware presents interrupts. QEMU
     * also needs it: after an EVENTINJ interrupt its TCG loop may deliver
     * the vector a second time (docs/virtual_interrupts.md).
     */
    struct vlapic_timer_entry injected = {0, 0}, offered_timer = {0, 0};
    if (vector >= 0 && !virt_features.virq_at_entry && virt->interrupt_allowed(&v->hw)) {
        virt->inject_interrupt(&v->hw, (uint8_t)vector);
        injected = vlapic_timer_entry(&v->lapic, &v->timer_advance, vector, guest_tsc(v));
        vlapic_ack(&v->lapic, (uint8_t)vector);
        vector = vlapic_highest_pending(&v->lapic);
    }
    /*
     * One the guest cannot take now is offered to the CPU (SVM V_IRQ), which
     * delivers it when the guest can; it stays in IRR until then, so the next
     * entry looks again, and the same vector sent before the exit that says
     * whether the guest took it pends again if it did (vlapic_offer). It lets
     * Idle HLT see the interrupt behind STI; HLT.
     */
    bool offered = false;
    if (extint) {
        /* The window, not an offer, opens the first chance (SVM: both are V_IRQ). */
        if (virt->offer_interrupt)
            virt->offer_interrupt(&v->hw, -1, v->lapic.tpr);
        virt->set_interrupt_window(&v->hw, true);
    } else {
        offered = virt->offer_interrupt && virt->offer_interrupt(&v->hw, vector, v->lapic.tpr);
        vlapic_offer(&v->lapic, offered ? vector : -1);
        if (!offered)
            virt->set_interrupt_window(&v->hw, vector >= 0);
        else
            offered_timer = vlapic_timer_entry(&v->lapic, &v->timer_advance, vector, guest_tsc(v));
    }
    *window = vector >= 0 || v->nmi.pending || extint;
    vcpu_update_cr8_intercept(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
    if (injected.due)
        timer_entry(v, injected, false);
    if (offered_timer.due)
        timer_entry(v, offered_timer, true);
    return true;
}

/*
 * profile_us=: a sample is due, so the exit that just happened is the one
 * its timer made (or came before it): count the guest's RIP there, and arm
 * the next.
 */
static void profile_sample(struct vcpu *v)
{
    uint64_t now = rdtsc();
    if (now < v->profile_sample)
        return;
    profile_add(v->vm->profile, v->hw.regs.rip, vcpu_mode(v)->cpl == 3);
    v->profile_sample = now + profile_us * tsc_khz / 1000;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
}

/*
 * v does not enter before v->resume_at: seed='s stagger before its first
 * entry, or a guest instruction to run again (vcpu_wait_console). Until
 * then it blocks with its timer armed (timer_expired wakes it); a wake-up
 * before then (an IPI) only brings it back here to block again. True if
 * it blocked.
 */
static bool vcpu_wait_to_resume(struct vcpu *v)
{
    uint64_t now = rdtsc();
    if (v->stagger_cycles) {
        v->resume_at = now + v->stagger_cycles;
        v->stagger_cycles = 0;
    }
    if (!v->resume_at)
        return false;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    bool wait = v->resume_at > now && !v->vm->stopping;
    if (wait) {
        sched_set_state(&v->se, SCHED_BLOCKED, now);
        vcpu_timer_update(v);
    } else {
        v->resume_at = 0;
    }
    spin_unlock_irqrestore(&v->se.lock, flags);
    return wait;
}

/*
 * How long a guest write the console had no room for waits before it runs
 * again: the UART's time for some 12 bytes at 115200 baud, while this CPU
 * runs others or drains the console.
 */
#define CONSOLE_FULL_RETRY_US 1000

void vcpu_wait_console(struct vcpu *v)
{
    v->resume_at = rdtsc() + CONSOLE_FULL_RETRY_US * tsc_khz / 1000;
}

enum sched_run_result vcpu_run(struct vcpu *v)
{
    struct vm *vm = v->vm;
    if (vcpu_wait_to_resume(v))
        return SCHED_RUN_BLOCKED;
    if (v->halt.active)
        vcpu_halt_finish(v); /* it blocked in its last halt, and was woken */
    pause_sched_in(v);
    vm_devices_vcpu_load(v);
    if (vm->profile && !v->profile_sample)
        v->profile_sample = rdtsc() + profile_us * tsc_khz / 1000;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
    fpu_guest_enter(&v->fpu);
    debugregs_load(&v->debug);
    guest_msrs_load(&v->msrs);
    if (virt->vcpu_load)
        virt->vcpu_load(&v->hw);
    enum sched_run_result result;
    bool window = true; /* look under the lock on the first entry */
    for (;;) {
        /* Taken before anything is looked at: vmm/exit/fastpath.h. */
        vcpu_changes_take(&v->changed);
        watchdog_beat();
        sched_let_others_run(); /* after an exit that gave another CPU work (sched.h) */
        if (vm->stopping) {
            result = SCHED_RUN_STOPPED;
            break;
        }
        if (!prepare_entry(v, &window)) {
            result = SCHED_RUN_PARKED;
            break;
        }
        sched_prepare_entry(&v->se);
        struct exit_record e;
        if (virt->vcpu_run(&v->hw, &e) == FASTPATH_NOT_MINE)
            handle_exit(v, &e);
        vcpu_exit_timed(v, e.reason, rdtsc() - v->exited_at);
        if (vm->profile)
            profile_sample(v);
        /*
         * A lone vCPU on its CPU never goes back to the scheduler loop: a
         * round due (the timer's, the key console's) is printed here, on time.
         */
        stats_poll();
        /*
         * vcpu_halt's own decision, not v->se.state: a waker may already have
         * made the vCPU RUNNABLE and queued it again.
         */
        if (v->halted) {
            v->halted = false;
            result = SCHED_RUN_BLOCKED;
            break;
        }
        if (v->resume_at && vcpu_wait_to_resume(v)) {
            result = SCHED_RUN_BLOCKED; /* a write the console had no room for */
            break;
        }
        if (v->yield_taken) {
            /* A hypercall's yield handed this CPU to a sibling (vmm/dev/kvm_pv_sched.c). */
            v->yield_taken = false;
            result = SCHED_RUN_PREEMPTED;
            break;
        }
        if (v->spin.detected) {
            v->spin.detected = false;
            if (pause_directed_yield(v)) {
                result = SCHED_RUN_PREEMPTED;
                break;
            }
        }
        if (sched_should_yield()) {
            result = SCHED_RUN_PREEMPTED;
            break;
        }
    }
    if (result == SCHED_RUN_PREEMPTED && vm->nvcpus > 1) {
        /* For its siblings' directed yields: a vCPU preempted in user mode holds no kernel lock. */
        struct guest_mode m;
        virt->get_mode(&v->hw, &m);
        v->se.preempted_in_user = m.cpl == 3;
    }
    /* Before run_one queues it: an entry elsewhere must find the mark to clear (KVM's order). */
    vm_devices_vcpu_put(v, result);
    if (virt->vcpu_put)
        virt->vcpu_put(&v->hw);
    debugregs_save(&v->debug);
    fpu_guest_leave(&v->fpu);
    return result;
}

void vcpu_retire(struct vcpu *v)
{
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    sched_set_state(&v->se, SCHED_STOPPED, rdtsc());
    spin_unlock_irqrestore(&v->se.lock, flags);
    /* After STOPPED: another vCPU re-arming v's timer (vCPU 0's, for the PIT) then cancels it. */
    timer_cancel(&v->timer);
    vmm_vcpu_retired(v->vm);
}

static struct vcpu *entity_vcpu(const struct sched_entity *e)
{
    return (struct vcpu *)((char *)e - offsetof(struct vcpu, se));
}

static enum sched_run_result run_entity(struct sched_entity *e)
{
    return vcpu_run(entity_vcpu(e));
}

static void unload_entity(struct sched_entity *e)
{
    virt->vcpu_unload(&entity_vcpu(e)->hw);
}

static void retire_entity(struct sched_entity *e)
{
    vcpu_retire(entity_vcpu(e));
}

/* Waiting for a startup IPI, it has just left its CPU: its VM stopped, or a startup IPI came. */
static enum sched_parked parked_entity(struct sched_entity *e)
{
    struct vcpu *v = entity_vcpu(e);
    if (v->vm->stopping)
        return SCHED_PARKED_RETIRE;
    return v->sipi_vector >= 0 ? SCHED_PARKED_WAKE : SCHED_PARKED_STAY;
}

static bool arm_entity(struct sched_entity *e, uint64_t deadline)
{
    return virt->set_preemption_timer(&entity_vcpu(e)->hw, deadline);
}

/* Its CPU's slice timer or a kick: the exit fast path must take the full path
 * (vmm/exit/fastpath.h). */
static void notice_entity(struct sched_entity *e)
{
    vcpu_changes_raise(&entity_vcpu(e)->changed, CHANGE_HOST);
}

static bool entity_event_pending(struct sched_entity *e)
{
    struct vcpu *v = entity_vcpu(e);
    /* A kicked vCPU is a candidate too (KVM's kvm_arch_dy_runnable). */
    return nmi_waiting(&v->nmi) || vlapic_highest_pending(&v->lapic) >= 0 ||
           vcpu_extint_pending(v) || __atomic_load_n(&v->pv.pv_unhalted, __ATOMIC_RELAXED);
}

static void name_entity(const struct sched_entity *e, char *buf, unsigned len)
{
    const struct vcpu *v = entity_vcpu(e);
    snprintf(buf, len, "%s/%u", v->vm->cfg.name, v->hw.id);
}

/* trace=sched: a state change or a move, into the VM's trace ring (vmm/console/trace.h). */
static void trace_entity(struct sched_entity *e, enum sched_trace what, uint64_t a, uint64_t b)
{
    struct vcpu *v = entity_vcpu(e);
    if (what == SCHED_TRACE_STATE)
        trace_record(v->vm, TRACE_SCHED, v->hw.id, TRACE_SCHED_STATE,
                     trace_pair((unsigned)a, (unsigned)b), e->cpu);
    else
        trace_record(v->vm, TRACE_SCHED, v->hw.id, TRACE_SCHED_MIGRATE, a, b);
}

void vcpu_trace_update(void)
{
    sched_set_tracer(trace_on(TRACE_SCHED) ? trace_entity : NULL);
}

static struct sched_entity_ops vcpu_entity_ops = {
    .run = run_entity,
    .unload = unload_entity,
    .retire = retire_entity,
    .parked = parked_entity,
    .arm_preemption = arm_entity,
    .notice = notice_entity,
    .event_pending = entity_event_pending,
    .name = name_entity,
};

void vcpu_sched_register(void)
{
    vcpu_entity_ops.unload_to_move = virt && virt->unload_to_move;
    sched_set_entity_ops(&vcpu_entity_ops);
    vcpu_trace_update();
}

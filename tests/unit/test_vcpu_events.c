/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The halt/poll/wake protocol of vmm/vcpu/vcpu_events.c, with the scheduler
 * replaced by recorders, including the race between a vCPU deciding to halt
 * (and poll) and another CPU sending it an interrupt, run on two host threads.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "vmm/dev/kvm_pv.h"
#include "vmm/console/trace.h"
#include "vmm/vcpu/vcpu.h"

uint64_t tsc_khz = 1000000;

/* Scheduler stand-ins. */
static unsigned wakes, kicks, current_cpu, polls;
static unsigned last_kick;
/* What the stand-in poll does while the vCPU is POLLING: nothing, or send it something. */
static void (*during_poll)(void);
/* The race test polls for real: spin until woken or this many rounds have passed. */
static unsigned poll_spins;
/*
 * Set by the race test. There a sender on the other thread may end the halt
 * between vcpu_halt's unlock and its call to sched_poll, so the state is not
 * checked (and cmocka's asserts may fail only on the test's own thread).
 */
static bool racing;

void sched_poll(struct sched_entity *pv, uint64_t deadline)
{
    (void)deadline;
    polls++;
    if (!racing)
        assert_int_equal(pv->state, SCHED_POLLING);
    if (during_poll)
        during_poll();
    for (unsigned i = 0;
         i < poll_spins && __atomic_load_n(&pv->state, __ATOMIC_ACQUIRE) == SCHED_POLLING; i++)
        ;
}

void sched_wake(struct sched_entity *w)
{
    (void)w;
    __atomic_add_fetch(&wakes, 1, __ATOMIC_RELAXED);
}

void sched_kick(unsigned cpu)
{
    last_kick = cpu;
    __atomic_add_fetch(&kicks, 1, __ATOMIC_RELAXED);
}

unsigned sched_this_cpu(void)
{
    return current_cpu;
}

/* The CPUs a sender said it gave work by memory (sched.h), as a bit mask. */
static unsigned noted_cpus;

void sched_note_remote_work(unsigned cpu)
{
    __atomic_or_fetch(&noted_cpus, 1u << cpu, __ATOMIC_RELAXED);
}

static bool others_waiting;

bool sched_others_waiting(void)
{
    return others_waiting;
}

/* The C-state model's last exit on this CPU (host TSC), and the window last asked about. */
static uint64_t idle_exit_from, idle_exit_to, asked_from, asked_to;

uint64_t sched_idle_exit_within(uint64_t from, uint64_t to)
{
    asked_from = from;
    asked_to = to;
    uint64_t start = idle_exit_from > from ? idle_exit_from : from;
    uint64_t end = idle_exit_to < to ? idle_exit_to : to;
    return end > start ? end - start : 0;
}

static struct vm vm;
static struct vcpu v;

/* The console stand-ins for trace_flush: count the lines, keep the last event. */
static unsigned printed;
static char flushed[256];

void kprintf(const char *fmt, ...)
{
    (void)fmt;
    printed++;
}

void console_event(const char *name, struct json *j)
{
    snprintf(flushed, sizeof(flushed), "@%s %s", name, json_end(j));
}

#define RING_RECORDS 64
static union {
    struct trace_ring ring;
    char bytes[sizeof(struct trace_ring) + RING_RECORDS * sizeof(struct trace_record)];
} ring_space;
#define ring ring_space.ring

/* The last trace record, as its console line. */
static const char *last_trace(void)
{
    static char line[192];
    assert_true(ring.next > 0);
    trace_format(&ring.rec[(ring.next - 1) % ring.size], vm.cfg.name, line, sizeof(line));
    /* Drop the time: it is the host's TSC here. */
    return strchr(line, ' ') + 1;
}

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof(vm));
    memset(&v, 0, sizeof(v));
    strcpy(vm.cfg.name, "vm0");
    v.vm = &vm;
    v.se.state = SCHED_RUNNING;
    v.poll_control = KVM_POLL_CONTROL_RESET;
    v.hw.regs.rflags = 0x202; /* IF=1 */
    vlapic_reset(&v.lapic, 0, true, 48);
    uint32_t svr = 0x1ff;
    struct vlapic_ipi ipi;
    bool send;
    vlapic_mmio_write(&v.lapic, 0xf0, svr, 0, &ipi, &send); /* software-enable */
    wakes = kicks = polls = printed = noted_cpus = 0;
    memset(&ring_space, 0, sizeof(ring_space));
    trace_ring_init(&ring, RING_RECORDS, TRACE_WINDOW_ALL);
    vm.trace = &ring;
    flushed[0] = 0;
    current_cpu = 0;
    during_poll = NULL;
    poll_spins = 0;
    racing = false;
    others_waiting = false;
    trace_mask = 0;
    vm.cfg.policy.halt_poll = (struct halt_poll_params){200000, 2, 10000, 2, HALT_POLL_ADAPTIVE};
    return 0;
}

/* INIT's device hooks (vmm/dev/device.c): recorded. */
static struct vcpu *devices_reset_for;
void vm_devices_init_vcpu(struct vm *m, struct vcpu *c)
{
    (void)m;
    devices_reset_for = c;
}

static void send_interrupt(uint8_t vector)
{
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    if (vlapic_accept(&v.lapic, vector))
        vcpu_notify(&v, TRACE_WAKE_IPI, NULL);
    spin_unlock_irqrestore(&v.se.lock, flags);
}

static void test_halt_without_events_blocks(void **state)
{
    (void)state;
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    assert_int_equal(v.stats.halts, 1);
}

static void test_halt_with_pending_interrupt_continues(void **state)
{
    (void)state;
    vlapic_accept(&v.lapic, 0x40);
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_RUNNING);
    assert_int_equal(v.stats.halts, 0);
}

static void test_interrupts_off_halt_ignores_interrupts(void **state)
{
    (void)state;
    v.hw.regs.rflags = 0x2;
    vlapic_accept(&v.lapic, 0x40);
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    send_interrupt(0x41);
    assert_int_equal(v.se.state, SCHED_BLOCKED); /* IF=0: an interrupt does not end the halt */
    assert_int_equal(wakes, 0);
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    nmi_send(&v.nmi); /* an NMI does */
    vcpu_notify(&v, TRACE_WAKE_IPI, NULL);
    spin_unlock_irqrestore(&v.se.lock, flags);
    assert_int_equal(v.se.state, SCHED_RUNNABLE);
    assert_int_equal(wakes, 1);
}

/*
 * The 8259's INT (vm->extint, as vmm/dev/pic.c keeps it) ends vCPU 0's halt
 * while its LINT0 takes it (ExtINT, or the APIC hardware-disabled) and IF=1;
 * never another vCPU's.
 */
static void test_extint_wakes_vcpu0(void **state)
{
    (void)state;
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    vm.extint = true; /* LINT0 is masked (vlapic_reset): nothing */
    vcpu_notify(&v, TRACE_WAKE_DEVICE, NULL);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    vlapic_set_lint0_extint(&v.lapic);
    v.hw.regs.rflags = 0x2; /* IF=0: nothing either */
    vcpu_notify(&v, TRACE_WAKE_DEVICE, NULL);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    v.hw.regs.rflags = 0x202;
    v.hw.id = 1; /* another vCPU: nothing */
    assert_false(vcpu_has_wake_event(&v));
    v.hw.id = 0;
    vcpu_notify(&v, TRACE_WAKE_DEVICE, NULL);
    spin_unlock_irqrestore(&v.se.lock, flags);
    assert_int_equal(v.se.state, SCHED_RUNNABLE);
    assert_int_equal(wakes, 1);
    vcpu_halt_finish(&v);
    /* Still asking: the next HLT does not halt; the APIC disabled, LINT0 is the INTR pin. */
    vcpu_halt(&v);
    assert_int_equal(v.stats.halts, 1);
    v.lapic.apic_base &= ~(uint64_t)APIC_BASE_ENABLE;
    v.lapic.lvt_lint0 = LVT_MASKED;
    assert_true(vcpu_has_wake_event(&v));
    vm.extint = false;
    assert_false(vcpu_has_wake_event(&v));
}

/* INIT drops the NMIs sent and latched before it (KVM's kvm_vcpu_reset): none is injected after. */
static void test_init_drops_pending_nmis(void **state)
{
    (void)state;
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    nmi_send(&v.nmi);
    nmi_send(&v.nmi);
    nmi_process(&v.nmi, false); /* two waiting: one to inject, one latched behind it */
    nmi_send(&v.nmi);           /* and one more sent since */
    devices_reset_for = NULL;
    vcpu_init_reset(&v);
    spin_unlock_irqrestore(&v.se.lock, flags);
    assert_false(nmi_waiting(&v.nmi));
    assert_ptr_equal(devices_reset_for, &v);
    /* With nothing left, an IF=0 halt after INIT blocks. */
    v.hw.regs.rflags = 0x2;
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
}

/* A sibling's KVM_HC_KICK_CPU, as vmm/dev/kvm_pv_sched.c sends it. */
static void pv_kick(void)
{
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    v.pv.pv_unhalted = true;
    vcpu_notify(&v, TRACE_WAKE_KICK, NULL);
    spin_unlock_irqrestore(&v.se.lock, flags);
}

/* The PV qspinlock waiter halts with IF=0: a kick wakes it, a maskable interrupt does not. */
static void test_kick_wakes_a_halt_with_interrupts_off(void **state)
{
    (void)state;
    v.hw.regs.rflags = 0x2;
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    send_interrupt(0x41);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    pv_kick();
    assert_int_equal(v.se.state, SCHED_RUNNABLE);
    assert_int_equal(wakes, 1);
    assert_true(v.pv.pv_unhalted);
    /* It runs again: that halt is over, and the kick with it. */
    vcpu_halt_finish(&v);
    assert_false(v.pv.pv_unhalted);
    v.se.state = SCHED_RUNNING;
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_BLOCKED); /* the next halt really halts */
}

/* A kick that came before the HLT ends it at once, once: vcpu_halt's early return clears it. */
static void test_kick_before_the_halt_is_consumed(void **state)
{
    (void)state;
    v.hw.regs.rflags = 0x2;
    pv_kick(); /* running: no wake-up, the flag stays */
    assert_int_equal(wakes, 0);
    assert_true(vcpu_has_wake_event(&v));
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_RUNNING);
    assert_int_equal(v.stats.halts, 0);
    assert_false(v.pv.pv_unhalted);
    assert_false(vcpu_has_wake_event(&v));
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    /* The fast path's HLT skip consumes it too. */
    v.se.state = SCHED_RUNNING;
    v.pv.pv_unhalted = true;
    vcpu_kick_consumed(&v);
    assert_false(vcpu_has_wake_event(&v));
}

/* A kick that ends a poll is a successful poll. */
static void kick_during_poll(void)
{
    pv_kick();
}

static void test_kick_ends_a_poll_successfully(void **state)
{
    (void)state;
    v.hw.regs.rflags = 0x2;
    v.halt_poll.window_ns = 50000;
    during_poll = kick_during_poll;
    vcpu_halt(&v);
    assert_int_equal(polls, 1);
    assert_int_equal(v.se.state, SCHED_RUNNING);
    assert_int_equal(v.stats.halt_successful_poll, 1);
    assert_false(v.pv.pv_unhalted);
}

static uint64_t halts_recorded(void)
{
    uint64_t n = 0;
    for (unsigned b = 0; b < HALT_HIST_BUCKETS; b++)
        n += v.stats.halt_hist[b];
    return n;
}

static void test_wake_from_block(void **state)
{
    (void)state;
    vcpu_halt(&v);
    send_interrupt(0x40);
    assert_int_equal(v.se.state, SCHED_RUNNABLE);
    assert_int_equal(wakes, 1);
    assert_int_equal(kicks, 0);
    vcpu_halt_finish(&v); /* as vcpu_run does when it runs again */
    assert_int_equal(halts_recorded(), 1);
    /* A second interrupt to a RUNNABLE vCPU needs nothing: it is injected when it runs. */
    send_interrupt(0x41);
    assert_int_equal(wakes, 1);
    assert_int_equal(kicks, 0);
}

static void test_running_elsewhere_is_kicked(void **state)
{
    (void)state;
    v.se.cpu = 1;
    current_cpu = 0;
    send_interrupt(0x40);
    assert_int_equal(kicks, 1);
    assert_int_equal(last_kick, 1);
    current_cpu = 1; /* on its own CPU the loop injects before the next entry: no IPI */
    send_interrupt(0x41);
    assert_int_equal(kicks, 1);
}

static void test_stop_wakes_a_halted_vcpu(void **state)
{
    (void)state;
    v.hw.regs.rflags = 0x2;
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    vm.stopping = true;
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    vcpu_notify(&v, TRACE_WAKE_IPI, NULL);
    spin_unlock_irqrestore(&v.se.lock, flags);
    assert_int_equal(v.se.state, SCHED_RUNNABLE);
}

static void test_state_time_accounting(void **state)
{
    (void)state;
    v.se.state = SCHED_RUNNING;
    v.se.state_since = 1000;
    sched_set_state(&v.se, SCHED_BLOCKED, 5000);
    sched_set_state(&v.se, SCHED_RUNNABLE, 5000 + 1000000); /* 1 ms at 1 GHz */
    sched_set_state(&v.se, SCHED_RUNNING, 5000 + 1000000 + 300);
    assert_int_equal(v.se.cycles[SCHED_RUNNING], 4000);
    assert_int_equal(v.se.cycles[SCHED_BLOCKED], 1000000);
    assert_int_equal(v.se.cycles[SCHED_RUNNABLE], 300);
}

/*
 * Timer lateness: from the deadline to the injection in the guest's TSC, as
 * ns; the C-state model's exit within that time (its CPU's, in host TSC)
 * counted beside it, not in it.
 */
static void test_timer_lateness_accounting(void **state)
{
    (void)state;
    v.hw.tsc_offset = 1000; /* guest = host + 1000; 1 GHz: a cycle is a ns */
    idle_exit_from = 3000;
    idle_exit_to = 4100; /* host 4000-4100 falls in the window */
    vcpu_timer_late(&v, 5000, 5300);
    assert_int_equal(asked_from, 4000);
    assert_int_equal(asked_to, 4300);
    assert_int_equal(v.stats.timer_interrupts, 1);
    assert_int_equal(v.stats.timer_late_ns, 200);
    assert_int_equal(v.stats.timer_idle_exit_ns, 100);
    assert_int_equal(v.stats.timer_late_max_ns, 200);
    assert_int_equal(v.stats.timer_late_hist[7], 1); /* 200 ns is in [2^7, 2^8) */
    /* Injected at (or before) its deadline: on time, and no idle exit is asked about. */
    asked_from = asked_to = 0;
    vcpu_timer_late(&v, 9000, 8900);
    assert_int_equal(asked_to, 0);
    assert_int_equal(v.stats.timer_interrupts, 2);
    assert_int_equal(v.stats.timer_late_hist[0], 1);
    assert_int_equal(v.stats.timer_late_ns, 200);
    /* 1500 late with no idle exit in it: the maximum moves. */
    vcpu_timer_late(&v, 20000, 21500);
    assert_int_equal(v.stats.timer_late_ns, 1700);
    assert_int_equal(v.stats.timer_late_max_ns, 1500);
    assert_int_equal(v.stats.timer_idle_exit_ns, 100);
    assert_int_equal(v.stats.timer_late_hist[10], 1);
}

/* Account a halt as vcpu_run does once it is over: a valid one, polling allowed. */
static void finish(struct vcpu_halt h)
{
    v.halt = h;
    v.halt.active = v.halt.poll_allowed = v.halt.valid = true;
    vcpu_halt_finish(&v);
}

static void test_halt_statistics(void **state)
{
    (void)state;
    /* Blocked from 1000 to 1001000 cycles at 1 GHz: a 1 ms halt, all of it waiting. */
    finish((struct vcpu_halt){.blocked = true, .start = 1000, .poll_end = 1000, .woken = 1001000});
    assert_int_equal(v.stats.halt_hist[19], 1); /* 1e6 ns is in [2^19, 2^20) */
    assert_int_equal(v.stats.halt_wait_hist[19], 1);
    assert_int_equal(v.stats.halt_wait_ns, 1000000);
    assert_int_equal(v.stats.halt_attempted_poll, 0);
    /* Polled 20 us, missed, then waited 80 us. */
    finish((struct vcpu_halt){
        .polled = true, .blocked = true, .start = 0, .poll_end = 20000, .woken = 100000});
    assert_int_equal(v.stats.halt_attempted_poll, 1);
    assert_int_equal(v.stats.halt_successful_poll, 0);
    assert_int_equal(v.stats.halt_poll_fail_ns, 20000);
    assert_int_equal(v.stats.halt_poll_fail_hist[14], 1);
    assert_int_equal(v.stats.halt_wait_ns, 1000000 + 80000);
    assert_int_equal(v.stats.halt_hist[16], 1);
    /* Caught after 5 us of polling: a success, nothing waited. */
    finish((struct vcpu_halt){.polled = true, .start = 0, .poll_end = 5000});
    assert_int_equal(v.stats.halt_successful_poll, 1);
    assert_int_equal(v.stats.halt_poll_success_ns, 5000);
    assert_int_equal(v.stats.halt_poll_success_hist[12], 1);
    assert_int_equal(v.stats.halt_wait_ns, 1000000 + 80000);
    /* Finishing twice counts once. */
    vcpu_halt_finish(&v);
    assert_int_equal(v.stats.halt_successful_poll, 1);
}

/* Interrupts that arrive while the vCPU polls. */
static void interrupt_during_poll(void)
{
    send_interrupt(0x40);
}

static void stop_during_poll(void)
{
    vm.stopping = true;
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    vcpu_notify(&v, TRACE_WAKE_IPI, NULL);
    spin_unlock_irqrestore(&v.se.lock, flags);
}

static void test_no_poll_with_a_zero_window(void **state)
{
    (void)state;
    vcpu_halt(&v); /* every window starts at 0 */
    assert_int_equal(polls, 0);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    assert_true(v.halted);
}

static void test_poll_caught_the_wakeup(void **state)
{
    (void)state;
    v.halt_poll.window_ns = 50000;
    during_poll = interrupt_during_poll;
    vcpu_halt(&v);
    assert_int_equal(polls, 1);
    /* The sender found it POLLING: no queueing, no IPI, and it keeps its CPU. */
    assert_int_equal(v.se.state, SCHED_RUNNING);
    assert_false(v.halted);
    assert_int_equal(wakes, 0);
    assert_int_equal(kicks, 0);
    assert_int_equal(v.stats.halt_wakeup, 0);
    /* vcpu_halt did the bookkeeping itself, on the vCPU's CPU. */
    assert_false(v.halt.active);
    assert_int_equal(v.stats.halt_attempted_poll, 1);
    assert_int_equal(v.stats.halt_successful_poll, 1);
    assert_int_equal(v.stats.halt_poll_invalid, 0);
    assert_int_equal(v.stats.halts, 1);
}

/*
 * A sender that ends the poll of a vCPU on another CPU hands it over by
 * memory alone: it notes that CPU (sched_note_remote_work), which then gets
 * the machine under QEMU's single-threaded TCG (issue 27's NMI storm).
 */
static void nmi_during_poll(void)
{
    current_cpu = 0; /* the sender's CPU */
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    nmi_send(&v.nmi);
    vcpu_notify(&v, TRACE_WAKE_NMI, NULL);
    spin_unlock_irqrestore(&v.se.lock, flags);
    current_cpu = 1;
}

static void test_poll_ended_from_another_cpu_is_noted(void **state)
{
    (void)state;
    v.se.cpu = current_cpu = 1;
    v.halt_poll.window_ns = 50000;
    during_poll = nmi_during_poll;
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_RUNNING);
    assert_int_equal(noted_cpus, 1u << 1);
    assert_int_equal(kicks + wakes, 0);
}

static void test_no_poll_when_another_vcpu_waits(void **state)
{
    (void)state;
    v.halt_poll.window_ns = 50000;
    others_waiting = true;
    vcpu_halt(&v);
    assert_int_equal(polls, 0);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    send_interrupt(0x40);
    vcpu_halt_finish(&v);
    assert_int_equal(v.stats.halt_attempted_poll, 0);
    /* The window still follows the halts: a short one keeps it. */
    assert_int_equal(v.halt_poll.window_ns, 50000);
}

static void test_poll_missed_then_blocked(void **state)
{
    (void)state;
    v.halt_poll.window_ns = 50000;
    vcpu_halt(&v);
    assert_int_equal(polls, 1);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    assert_true(v.halted);
    assert_true(v.halt.active);
    send_interrupt(0x40);
    assert_int_equal(v.se.state, SCHED_RUNNABLE);
    assert_int_equal(wakes, 1);
    assert_int_equal(v.stats.halt_wakeup, 1);
    vcpu_halt_finish(&v); /* as vcpu_run does when it runs again */
    assert_int_equal(v.stats.halt_attempted_poll, 1);
    assert_int_equal(v.stats.halt_successful_poll, 0);
}

static void test_stop_ends_a_poll_as_invalid(void **state)
{
    (void)state;
    v.halt_poll.window_ns = 40000;
    during_poll = stop_during_poll;
    vcpu_halt(&v);
    assert_int_equal(v.se.state, SCHED_RUNNING);
    assert_int_equal(v.stats.halt_successful_poll, 1);
    assert_int_equal(v.stats.halt_poll_invalid, 1);
    assert_int_equal(v.halt_poll.window_ns, 20000); /* shrunk, as KVM does */
}

static void test_guest_opt_out(void **state)
{
    (void)state;
    v.halt_poll.window_ns = 50000;
    v.poll_control = 0;
    trace_mask = 1u << TRACE_HALT_POLL;
    vcpu_halt(&v);
    assert_int_equal(polls, 0);
    assert_int_equal(v.se.state, SCHED_BLOCKED);
    send_interrupt(0x40);
    assert_int_equal(v.se.state, SCHED_RUNNABLE); /* its wake-ups still work */
    vcpu_halt_finish(&v);
    /* Neither used nor adjusted, and nothing traced. */
    assert_int_equal(v.halt_poll.window_ns, 50000);
    assert_int_equal(v.stats.halt_attempted_poll, 0);
    assert_int_equal(v.stats.halt_attempted_poll_optout, 0);
    assert_int_equal(ring.next, 0);
}

static void test_vm_maximum_overrides(void **state)
{
    (void)state;
    v.halt_poll.window_ns = 50000;
    vm.cfg.policy.halt_poll.max_ns = 0; /* this VM: no polling at once, whatever the window was */
    vcpu_halt(&v);
    assert_int_equal(polls, 0);
    assert_int_equal(v.halt_poll.window_ns, 0);
    assert_int_equal(vcpu_halt_poll_max(&v), 0);
    vm.cfg.policy.halt_poll.max_ns = 200000;
    assert_int_equal(vcpu_halt_poll_max(&v), 200000);
}

/* trace=ple: KVM's kvm_ple_window_update, and pollux's directed_yield decisions. */
static void test_ple_trace_lines(void **state)
{
    (void)state;
    vm.trace = &ring;
    trace_record(&vm, TRACE_PLE, 2, TRACE_PLE_GROW, 8192, 4096);
    assert_string_equal(last_trace(),
                        "vm0: kvm_ple_window_update: vcpu 2 old 4096 new 8192 (grow)");
    trace_record(&vm, TRACE_PLE, 2, TRACE_PLE_SHRINK, 3000, 65535);
    assert_string_equal(last_trace(),
                        "vm0: kvm_ple_window_update: vcpu 2 old 65535 new 3000 (shrink)");
    trace_record(&vm, TRACE_PLE, 1, TRACE_YIELD_BOOSTED, 3 + 1,
                 trace_yield_pack(YIELD_PIVOT_VCPU_ID, 1, 0, false));
    assert_string_equal(last_trace(), "vm0: directed_yield: vcpu 1 pivot vcpu_id target 3: runs it "
                                      "now (1 skipped, 0 failed)");
    trace_record(&vm, TRACE_PLE, 0, TRACE_YIELD_SLICE, 0,
                 trace_yield_pack(YIELD_PIVOT_LAST_BOOSTED, 4, 3, true));
    assert_string_equal(last_trace(), "vm0: directed_yield: vcpu 0 pivot last_boosted target none: "
                                      "gives up its slice (4 skipped, 3 failed, gave up)");
    trace_record(&vm, TRACE_PLE, 5, TRACE_YIELD_KEPT_CPU, 0,
                 trace_yield_pack(YIELD_PIVOT_NONE, 0, 0, false));
    assert_string_equal(last_trace(), "vm0: directed_yield: vcpu 5 pivot none target none: keeps "
                                      "its CPU (0 skipped, 0 failed)");
}

static void test_trace_line_format(void **state)
{
    (void)state;
    trace_mask = 1u << TRACE_HALT_POLL;
    /* A 50 us halt that blocked: the window grows from 0 to grow_start. */
    finish((struct vcpu_halt){.blocked = true, .start = 0, .poll_end = 0, .woken = 50000});
    assert_int_equal(ring.next, 1);
    assert_string_equal(last_trace(), "vm0: kvm_halt_poll_ns: vcpu 0: halt_poll_ns 10000 (grow 0)");
    /* A 1 ms halt: shrink. */
    finish((struct vcpu_halt){.blocked = true, .start = 0, .poll_end = 0, .woken = 1000000});
    assert_string_equal(last_trace(),
                        "vm0: kvm_halt_poll_ns: vcpu 0: halt_poll_ns 0 (shrink 10000)");
    /* Caught within the window: no change, no record. */
    finish((struct vcpu_halt){.blocked = true, .start = 0, .poll_end = 0, .woken = 0});
    assert_int_equal(ring.next, 2);
    /* Nothing is printed until the VM stops; then every record, in order. */
    assert_int_equal(printed, 0);
    trace_flush(&vm);
    assert_int_equal(printed, 2);
    /* Off by default. */
    trace_mask = 0;
    finish((struct vcpu_halt){.blocked = true, .start = 0, .poll_end = 0, .woken = 50000});
    assert_int_equal(ring.next, 2);
}

static void test_trace_ring_keeps_the_newest(void **state)
{
    (void)state;
    for (unsigned i = 0; i < RING_RECORDS + 5; i++)
        trace_record(&vm, TRACE_HALT_POLL, 1, 1, i + 1, i);
    assert_string_equal(last_trace(), "vm0: kvm_halt_poll_ns: vcpu 1: halt_poll_ns 69 (grow 68)");
    trace_flush(&vm);
    assert_int_equal(printed, RING_RECORDS); /* the newest; the oldest 5 are counted */
    assert_string_equal(flushed, "@trace_flush {\"vm\":\"vm0\",\"records\":64,\"dropped\":5,"
                                 "\"size\":64,\"window\":\"all\"}");
}

/* trace=sched: the timeline's records, as tools/timeline.py reads them (docs/console.md). */
static void test_sched_trace_lines(void **state)
{
    (void)state;
    trace_record(&vm, TRACE_SCHED, 3, TRACE_SCHED_STATE, trace_pair(SCHED_BLOCKED, SCHED_RUNNABLE),
                 1);
    assert_string_equal(last_trace(), "vm0: sched_state: vcpu 3 cpu 1: blocked -> runnable");
    trace_record(&vm, TRACE_SCHED, 3, TRACE_SCHED_MIGRATE, 1, 0);
    assert_string_equal(last_trace(), "vm0: sched_migrate: vcpu 3 from cpu 1 to cpu 0");
    trace_record(&vm, TRACE_SCHED, 2, TRACE_SCHED_WAKEUP, trace_pair(TRACE_WAKE_IPI, 0 + 1), 1);
    assert_string_equal(last_trace(), "vm0: sched_wakeup: vcpu 2 cpu 1: by ipi from vcpu 0");
    trace_record(&vm, TRACE_SCHED, 2, TRACE_SCHED_WAKEUP, trace_pair(TRACE_WAKE_TIMER, 0), 0);
    assert_string_equal(last_trace(), "vm0: sched_wakeup: vcpu 2 cpu 0: by timer");
    trace_record(&vm, TRACE_SCHED, 1, TRACE_SCHED_SPIN, 0, 1);
    assert_string_equal(last_trace(), "vm0: sched_spin: vcpu 1 cpu 1");
}

/* A halted vCPU woken by an IPI: the wake-up with its sender, then the state change. */
static void test_wakeup_traced_with_its_source(void **state)
{
    (void)state;
    static struct vcpu sender;
    sender.hw.id = 5;
    trace_mask = 1u << TRACE_SCHED;
    v.se.state = SCHED_BLOCKED;
    v.se.cpu = 1;
    vlapic_accept(&v.lapic, 0x40);
    vcpu_notify(&v, TRACE_WAKE_IPI, &sender);
    assert_int_equal(ring.next, 1);
    assert_string_equal(last_trace(), "vm0: sched_wakeup: vcpu 0 cpu 1: by ipi from vcpu 5");
    /* Off: nothing. */
    trace_mask = 0;
    v.se.state = SCHED_BLOCKED;
    vcpu_notify(&v, TRACE_WAKE_IPI, &sender);
    assert_int_equal(ring.next, 1);
}

/* trace=halt: one kvm_vcpu_wakeup line per halt, stamped with its start, as tools/haltreplay.py
 * reads it: the halt's time, the wake source and the window the policy had when it began. */
static void test_halt_trace_lines(void **state)
{
    (void)state;
    trace_mask = 1u << TRACE_HALT;
    v.halt_poll.window_ns = 20000;
    /* A poll that caught the wake-up 8 us in: the time is to the poll's end. */
    finish((struct vcpu_halt){
        .polled = true, .start = 1000, .poll_end = 9000, .woken = 8500, .source = TRACE_WAKE_IPI});
    assert_int_equal(ring.next, 1);
    assert_int_equal(ring.rec[0].ns, 1000);
    assert_string_equal(last_trace(),
                        "vm0: kvm_vcpu_wakeup: vcpu 0: poll time 8000 ns, polling valid: by ipi, "
                        "window 20000");
    /* One that blocked: the window before it grew from this halt. */
    finish((struct vcpu_halt){.polled = true,
                              .blocked = true,
                              .start = 0,
                              .poll_end = 20000,
                              .woken = 50000,
                              .source = TRACE_WAKE_TIMER});
    assert_string_equal(last_trace(),
                        "vm0: kvm_vcpu_wakeup: vcpu 0: wait time 50000 ns, polling valid: by "
                        "timer, window 20000");
    assert_int_equal(v.halt_poll.window_ns, 40000);
    /* No poll: another vCPU waited for the CPU (vcpu_halt records why). */
    others_waiting = true;
    vcpu_halt(&v);
    send_interrupt(0x40);
    vcpu_halt_finish(&v);
    assert_int_equal(ring.next, 3);
    assert_true(ring.rec[2].flag & TRACE_HALT_CPU_WANTED);
    assert_int_equal(ring.rec[2].flag & 0xff, TRACE_WAKE_IPI);
    assert_non_null(strstr(last_trace(), "polling valid: by ipi, window 40000, cpu wanted"));
    /* Ended by a stop request while the guest had turned host polling off. */
    v.halt = (struct vcpu_halt){
        .active = true, .blocked = true, .start = 0, .woken = 7000, .source = TRACE_WAKE_STOP};
    vcpu_halt_finish(&v);
    assert_string_equal(last_trace(),
                        "vm0: kvm_vcpu_wakeup: vcpu 0: wait time 7000 ns, polling invalid: by "
                        "stop, window 40000, guest opted out");
    /* Off: nothing. */
    trace_mask = 0;
    finish((struct vcpu_halt){.blocked = true, .woken = 5000});
    assert_int_equal(ring.next, 4);
}

/* The capture window's rule (trace_window=): 1 opens, 0 closes, other values change nothing. */
static void test_trace_window_marks(void **state)
{
    (void)state;
    bool recording = false;
    assert_int_equal(trace_window_mark(&recording, TRACE_WINDOW_MARKER, 2), TRACE_MARK_IGNORED);
    assert_false(recording);
    assert_int_equal(trace_window_mark(&recording, TRACE_WINDOW_MARKER, 1), TRACE_MARK_START);
    assert_true(recording);
    assert_int_equal(trace_window_mark(&recording, TRACE_WINDOW_MARKER, 0xff), TRACE_MARK_IGNORED);
    assert_true(recording);
    assert_int_equal(trace_window_mark(&recording, TRACE_WINDOW_MARKER, 0), TRACE_MARK_END);
    assert_false(recording);
    /* trace_window=all: always recording, the marks still reported. */
    recording = true;
    assert_int_equal(trace_window_mark(&recording, TRACE_WINDOW_ALL, 0), TRACE_MARK_END);
    assert_true(recording);
}

/* Outside a marker window nothing is recorded; the marks themselves are. */
static void test_trace_marker_window(void **state)
{
    (void)state;
    vm.vcpus[0] = &v;
    vm.nvcpus = 1;
    trace_ring_init(&ring, RING_RECORDS, TRACE_WINDOW_MARKER);
    trace_window_mode = TRACE_WINDOW_MARKER;
    trace_mask = 1u << TRACE_SCHED;
    trace_record(&vm, TRACE_SCHED, 0, TRACE_SCHED_SPIN, 0, 0);
    assert_int_equal(ring.next, 0);
    trace_marker(&vm, 0, 7); /* ignored */
    assert_int_equal(ring.next, 0);
    trace_marker(&vm, 0, 1);
    /* The mark, then each vCPU's state as the window opened. */
    assert_int_equal(ring.next, 2);
    assert_string_equal(last_trace(), "vm0: sched_state: vcpu 0 cpu 0: running -> running");
    trace_record(&vm, TRACE_SCHED, 0, TRACE_SCHED_SPIN, 0, 0);
    assert_int_equal(ring.next, 3);
    trace_marker(&vm, 0, 0);
    assert_string_equal(last_trace(), "vm0: trace_marker: vcpu 0: window end");
    trace_record(&vm, TRACE_SCHED, 0, TRACE_SCHED_SPIN, 0, 0);
    assert_int_equal(ring.next, 4);
    trace_window_mode = TRACE_WINDOW_ALL;
}

/* The race: the halting vCPU and the sender run at once, many times. */
static pthread_barrier_t barrier;
/*
 * At least RACE_ROUNDS rounds, and on until every order has happened at least
 * once (a loaded host may skew the threads for a while), RACE_ROUNDS_MAX at
 * most.
 */
#define RACE_ROUNDS     20000
#define RACE_ROUNDS_MAX 400000
static volatile bool race_over; /* written before the round's last barrier */

/* Staggered starts so the two sides meet at every point of each other's path. */
static void spin(unsigned n)
{
    for (volatile unsigned i = 0; i < n; i++)
        ;
}

static void *halter(void *arg)
{
    (void)arg;
    for (int i = 0; !race_over; i++) {
        pthread_barrier_wait(&barrier);
        spin((unsigned)(i * 7) % 97);
        /* Long polls in odd rounds, so that some catch the interrupt and some miss it. */
        poll_spins = (i & 1) ? 300000 : 100;
        vcpu_halt(&v);
        pthread_barrier_wait(&barrier);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

static void test_no_lost_wakeup_race(void **state)
{
    (void)state;
    pthread_t t;
    /*
     * Every halt polls (fixed mode), briefly: the interrupt lands before the
     * halt, during the poll, or after it blocked, and each must end the halt.
     */
    vm.cfg.policy.halt_poll.mode = HALT_POLL_FIXED;
    racing = true;
    race_over = false;
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_create(&t, NULL, halter, NULL);
    unsigned blocked_then_woken = 0, never_blocked = 0, poll_caught = 0, rounds = 0;
    for (int i = 0; !race_over; i++) {
        pthread_barrier_wait(&barrier);
        spin((unsigned)(i * 13) % 20011);
        send_interrupt(0x40);
        pthread_barrier_wait(&barrier);
        /* Both sides are done: a halted vCPU with an interrupt pending would be a lost wake-up. */
        assert_int_not_equal(v.se.state, SCHED_BLOCKED);
        assert_int_not_equal(v.se.state, SCHED_POLLING);
        if (v.se.state == SCHED_RUNNABLE)
            blocked_then_woken++;
        else
            never_blocked++;
        if (v.stats.halt_successful_poll) {
            poll_caught++;
            v.stats.halt_successful_poll = 0;
        }
        v.halt.active = false;
        v.se.state = SCHED_RUNNING;
        vlapic_ack(&v.lapic, 0x40);
        struct vlapic_ipi ipi;
        bool send;
        vlapic_mmio_write(&v.lapic, 0xb0, 0, 0, &ipi, &send); /* EOI */
        rounds++;
        bool all_seen = blocked_then_woken > 0 && never_blocked > poll_caught && poll_caught > 0;
        race_over = (rounds >= RACE_ROUNDS && all_seen) || rounds >= RACE_ROUNDS_MAX;
        pthread_barrier_wait(&barrier);
    }
    pthread_join(t, NULL);
    assert_int_equal(blocked_then_woken + never_blocked, rounds);
    /* Every order happened, so the race was really run. */
    assert_true(blocked_then_woken > 0 && never_blocked > poll_caught && poll_caught > 0);
    assert_int_equal(wakes, blocked_then_woken);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_halt_without_events_blocks, setup),
        cmocka_unit_test_setup(test_halt_with_pending_interrupt_continues, setup),
        cmocka_unit_test_setup(test_interrupts_off_halt_ignores_interrupts, setup),
        cmocka_unit_test_setup(test_extint_wakes_vcpu0, setup),
        cmocka_unit_test_setup(test_init_drops_pending_nmis, setup),
        cmocka_unit_test_setup(test_wake_from_block, setup),
        cmocka_unit_test_setup(test_kick_wakes_a_halt_with_interrupts_off, setup),
        cmocka_unit_test_setup(test_kick_before_the_halt_is_consumed, setup),
        cmocka_unit_test_setup(test_kick_ends_a_poll_successfully, setup),
        cmocka_unit_test_setup(test_poll_ended_from_another_cpu_is_noted, setup),
        cmocka_unit_test_setup(test_running_elsewhere_is_kicked, setup),
        cmocka_unit_test_setup(test_stop_wakes_a_halted_vcpu, setup),
        cmocka_unit_test_setup(test_state_time_accounting, setup),
        cmocka_unit_test_setup(test_halt_statistics, setup),
        cmocka_unit_test_setup(test_timer_lateness_accounting, setup),
        cmocka_unit_test_setup(test_no_poll_with_a_zero_window, setup),
        cmocka_unit_test_setup(test_poll_caught_the_wakeup, setup),
        cmocka_unit_test_setup(test_poll_missed_then_blocked, setup),
        cmocka_unit_test_setup(test_no_poll_when_another_vcpu_waits, setup),
        cmocka_unit_test_setup(test_stop_ends_a_poll_as_invalid, setup),
        cmocka_unit_test_setup(test_guest_opt_out, setup),
        cmocka_unit_test_setup(test_vm_maximum_overrides, setup),
        cmocka_unit_test_setup(test_trace_line_format, setup),
        cmocka_unit_test_setup(test_ple_trace_lines, setup),
        cmocka_unit_test_setup(test_trace_ring_keeps_the_newest, setup),
        cmocka_unit_test_setup(test_sched_trace_lines, setup),
        cmocka_unit_test_setup(test_wakeup_traced_with_its_source, setup),
        cmocka_unit_test_setup(test_halt_trace_lines, setup),
        cmocka_unit_test_setup(test_trace_window_marks, setup),
        cmocka_unit_test_setup(test_trace_marker_window, setup),
        cmocka_unit_test_setup(test_no_lost_wakeup_race, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

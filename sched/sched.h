/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The scheduler: per-CPU run queues, time slices, blocking and waking. It
 * schedules entities (sched/entity.h), never vCPUs as such; below, "vCPU"
 * is the entity a vCPU embeds, the only kind there is.
 *
 * Each host CPU runs the vCPUs queued on it, first come first served, for a
 * time slice each (sched_slice_us). A new vCPU is placed on the least
 * loaded CPU, or the one its VM's pin= names. vCPUs move between CPUs
 * (sched/balance.h): a CPU about to idle takes one waiting elsewhere, a
 * periodic balance evens the queues out, and a directed yield runs a
 * preempted vCPU on its spinning sibling's CPU; a pinned vCPU never moves.
 * A slice ends early when the vCPU halts with nothing to deliver (it
 * blocks), when it is caught spinning (sched_on_spin) or its VM stops. A
 * slice is enforced by the VMX preemption timer where the backend has one,
 * else by the host local APIC timer with physical interrupts intercepted,
 * so even a guest spinning with interrupts off is preempted. When the slice
 * ends and nobody else waits, the vCPU simply goes on.
 *
 * Wake-up preemption rule: a vCPU woken from a halt goes to the head of its
 * CPU's queue (it has been waiting, like a sleeper in CFS). If that CPU is
 * idle it is kicked with an IPI. If it runs another vCPU, that vCPU keeps the
 * CPU for at least sched_wakeup_granularity_us of its slice and is then
 * preempted in favour of the woken one: at once (with an IPI) if it has
 * already run that long, otherwise when it has. Waking a vCPU on the CPU it
 * runs on costs no IPI.
 */
#ifndef POLLUX_SCHED_SCHED_H
#define POLLUX_SCHED_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/entity.h"

struct deferred_work;
struct stats_table;

struct sched_params {
    uint64_t slice_us;              /* sched_slice_us: a vCPU's time slice */
    uint64_t wakeup_granularity_us; /* sched_wakeup_granularity_us: minimum run before a woken vCPU
                                       preempts */
    /*
     * idle_exit_latency_us: a model of a host C-state. A CPU woken from
     * idle (its HLT) busy-waits this long before it runs anything, as a CPU
     * leaving a deep C-state would (intel_idle's Skylake-SP C6: 133 us).
     * Emulated CPUs wake for free; without the model, halt polling's
     * saving cannot show. 0: off.
     */
    uint64_t idle_exit_latency_us;
    uint64_t seed;            /* seed: staggers each vCPU's first entry (sched/stagger.h); 0 off */
    uint64_t seed_stagger_us; /* seed_stagger_us: the longest stagger */
};

extern struct sched_params sched_params;

/*
 * The host TSC cycles within [from, to) that this CPU spent in the C-state
 * model's exit (idle_exit_latency_us) from its last idle: the part of a
 * wake-up's delay that the model, not pollux, added.
 */
uint64_t sched_idle_exit_within(uint64_t from, uint64_t to);

/* On every CPU once it is set up; guests: its virtualization backend is on (it runs vCPUs). */
void sched_cpu_init(bool guests);
bool sched_cpu_ready(unsigned cpu);

/* The host CPU for a new vCPU: pin (if >= 0) or the least loaded one. -1 if none. */
int sched_place(int pin);
/* A placed vCPU's VM is gone: it no longer loads its CPU. */
void sched_unplace(const struct sched_entity *e);

/* An entity that just became RUNNABLE (its lock held): queue it and kick per the rule above. */
void sched_wake(struct sched_entity *e);

/* Run queued vCPUs forever (APs), or until done() is true (the boot CPU). */
void sched_run(bool (*done)(void));

/* The host CPU this code runs on. */
unsigned sched_this_cpu(void);

/* Make a CPU leave guest mode or idle so it looks at its queue and timers. */
void sched_kick(unsigned cpu);

/*
 * Letting a CPU that was given work run now. Under QEMU's single-threaded
 * TCG (how pollux runs there, docs/robustness.md) every CPU runs in turn on
 * one host thread, and a CPU's turn ends only when it executes PAUSE or HLT
 * or is interrupted from QEMU's I/O thread (its timer) or its 100 ms kick:
 * an interrupt this CPU sends another (a kick) or a state the other CPU
 * polls for waits until then, while the guest on this CPU may spin without
 * exits for as long (the NMI storm of issue 27: 19 ms per NMI). So a CPU
 * that gave another one work (sched_kick, or sched_note_remote_work for a
 * hand-over by memory such as ending a halt poll) executes one PAUSE at the
 * next point that holds no lock, sched_let_others_run (the local APIC's IPI
 * delivery, the vCPU loop): QEMU runs the other CPUs then. On hardware and
 * Bochs, which run CPUs side by side, it costs a PAUSE.
 */
void sched_note_remote_work(unsigned cpu);
void sched_let_others_run(void);

/* From the vCPU loop, interrupts off: arm the slice's end before entering the guest. */
void sched_prepare_entry(struct sched_entity *e);
/* From the vCPU loop after an exit: should the vCPU give up the CPU now? */
bool sched_should_yield(void);

/*
 * From the vCPU loop: e was caught spinning (vmm/vcpu/pause.c), at CPL 0 if
 * in_kernel. Directed yield (sched/yield.h): a sibling preempted while it
 * could run is taken from whatever queue holds it and runs next on this
 * CPU, in the rest of e's slice (at least sched_wakeup_granularity_us).
 * Without one, e gives up the rest of its slice if another entity waits for
 * this CPU. *r says what the scan saw, for the caller's statistics.
 */
enum sched_spin_decision {
    SCHED_SPIN_BOOSTED,  /* a sibling runs in e's place: e leaves the CPU now */
    SCHED_SPIN_SLICE,    /* no sibling to run; another waits: e leaves the CPU now */
    SCHED_SPIN_KEPT_CPU, /* no sibling and nobody else to run: e goes on */
};
struct sched_spin_result {
    enum yield_pivot pivot;
    struct yield_outcome out;
};
enum sched_spin_decision sched_on_spin(struct sched_entity *e, bool in_kernel,
                                       struct sched_spin_result *r);

/*
 * From the vCPU loop: e yields to target, a member of its group, by name
 * (PV sched yield, the PV kick). If target waits for a CPU it is taken
 * from whatever queue holds it and runs next on this CPU, as after a
 * successful sched_on_spin: e must then leave the CPU now (PREEMPTED).
 */
enum yield_to_result sched_yield_to(struct sched_entity *e, struct sched_entity *target);

/*
 * Halt polling, on e's CPU with interrupts off: spin with PAUSE, taking host
 * interrupts (timers, kicks) between spins, until e leaves the POLLING state
 * (a wake-up came), the host TSC reaches deadline, or another vCPU waits for
 * this CPU (KVM's single_task_running()). Returns with interrupts off.
 */
void sched_poll(struct sched_entity *e, uint64_t deadline);

/*
 * Deferred work (sched/deferred.h): queue w on the CPU it is queued or runs
 * on, else on this one (a device's notify: the notifying vCPU's CPU). Its
 * scheduler loop runs it between entries, the current vCPU keeping the CPU
 * to the end of its slice first as for a queued vCPU (the work is the
 * notifying VM's, whose vCPUs wait their turn too), and an idle CPU is
 * woken for it. Any CPU, any context that may take a run queue's
 * lock.
 */
void sched_defer(struct deferred_work *w);

/*
 * w never runs again until queued anew; if it is running, wait until it has
 * returned (its owner may then free what it uses). Not from w's function.
 */
void sched_defer_cancel(struct deferred_work *w);

/* Does another vCPU, or deferred work, wait for this CPU? (A lock-free look, for the halt path.) */
bool sched_others_waiting(void);

/* A CPU's accounting, in host TSC cycles (counters), for stats/. */
struct sched_cpu_times {
    uint64_t busy, idle, poll; /* poll: the part of busy spent halt polling */
    uint64_t idle_exit;        /* the part of idle spent leaving idle (idle_exit_latency_us) */
    uint64_t deferred;         /* running deferred device work (sched_defer) */
    unsigned placed;           /* vCPUs of live VMs on it */
    unsigned cpu;
};
void sched_cpu_times(unsigned cpu, struct sched_cpu_times *out);

/* Its statistics: the rows over struct sched_cpu_times (sched/cpu_stats.c). */
extern const struct stats_table sched_cpu_stats_table;

/*
 * At boot: give stats/ the CPUs' rows, and arm the periodic statistics
 * rounds (stats_interval_ms) until done() says every VM stopped.
 */
void sched_stats_start(bool (*done)(void));

/* For a state dump (sched/watchdog.h): one line about a CPU's run queue, read without its lock. */
void sched_dump_cpu(unsigned cpu);

#endif

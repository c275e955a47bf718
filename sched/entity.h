/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the scheduler schedules: an entity with a state, a lock, a CPU it
 * is on, an optional pin and the facts the directed yield needs, grouped
 * with its siblings (the yield scans a group). sched/ never sees what an
 * entity is; its owner (vmm/: a vCPU embeds one) registers the few
 * operations sched/ cannot do itself (struct sched_entity_ops). NOVA's
 * scheduling contexts (Sc) are the model.
 */
#ifndef POLLUX_SCHED_ENTITY_H
#define POLLUX_SCHED_ENTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/spinlock.h"
#include "sched/runqueue.h"
#include "sched/yield.h"

enum sched_state {
    SCHED_RUNNABLE, /* in a run queue, or picked and about to run */
    SCHED_RUNNING,
    SCHED_POLLING, /* halted, its CPU polling for the wake-up (sched_poll) */
    SCHED_BLOCKED, /* halted, off the CPU until sched_wake */
    SCHED_PARKED,  /* off every CPU until its owner wakes it (a vCPU waiting for a startup IPI) */
    SCHED_STOPPED,
    SCHED_STATE_COUNT
};

/* An entity's siblings, which a directed yield scans (a VM's vCPUs). */
struct sched_group {
    struct sched_entity **members;
    unsigned count;
    unsigned last_boosted; /* the member the last successful directed yield ran */
    unsigned pivot;        /* its directed yield's pivot: enum yield_pivot (yield_pivot=) */
};

struct sched_entity {
    /*
     * lock protects state and whatever the owner makes pending for the
     * entity: an event is made pending and the state checked under it,
     * which is what makes blocking and waking race-free.
     */
    struct spinlock lock;
    enum sched_state state;
    uint64_t state_since;               /* host TSC of the last state change */
    uint64_t cycles[SCHED_STATE_COUNT]; /* host TSC cycles spent in each state */
    /*
     * The host CPU it is on: it runs, polls or waits there, and wake-ups,
     * kicks and its timer go there. Changed only while it is off every CPU,
     * under the run-queue locks of both CPUs (sched/sched.c).
     */
    unsigned cpu;
    int pin;            /* the only CPU it may run on, -1 if any */
    int loaded_cpu;     /* the CPU its context was last loaded on, -1 once unloaded */
    bool balance_moved; /* balancing moved it and it has not run since */
    bool on_cpu;        /* between being picked to run and having left its CPU */
    struct rq_link rq_link;
    uint64_t migrations; /* moves to another host CPU */
    /* The directed yield's facts about it (sched/yield.h). */
    struct yield_spin spin_loop; /* KVM's spin_loop: in_spin_loop, dy_eligible */
    bool preempted_in_user;      /* it last left its CPU preempted at CPL 3 */
    struct sched_group *group;
    unsigned index; /* its place in group->members */
};

/* How a run ended (sched_entity_ops.run). */
enum sched_run_result {
    SCHED_RUN_PREEMPTED, /* the slice ended or another entity should run: back on the queue */
    SCHED_RUN_BLOCKED,   /* it halted with nothing to deliver: state is BLOCKED */
    SCHED_RUN_PARKED,    /* its owner parked it: off the CPU until woken */
    SCHED_RUN_STOPPED,   /* it is done: retire it */
};

/* What a parked entity found leaving its CPU wants (sched_entity_ops.parked). */
enum sched_parked {
    SCHED_PARKED_STAY,   /* stays parked */
    SCHED_PARKED_WAKE,   /* runnable again at once (a startup IPI came while it left) */
    SCHED_PARKED_RETIRE, /* its owner is stopping: retire it */
};

/* The operations only the owner can do; registered once (sched_set_entity_ops). */
struct sched_entity_ops {
    /* Its context must be unloaded before another CPU may run it (VMX's VMCS). */
    bool unload_to_move;
    /* Run e (state RUNNING) on this CPU, interrupts off, until it must leave the CPU. */
    enum sched_run_result (*run)(struct sched_entity *e);
    /* Drop e's context from this CPU: it may next run elsewhere, or be freed. */
    void (*unload)(struct sched_entity *e);
    /* e leaves for good: its owner stops it (state STOPPED) and lets it go. Lock not held. */
    void (*retire)(struct sched_entity *e);
    /* e, parked, has just left its CPU (its lock held): what now? */
    enum sched_parked (*parked)(struct sched_entity *e);
    /* Arm e's own preemption timer for host TSC deadline (0: off); false if it has none. */
    bool (*arm_preemption)(struct sched_entity *e, uint64_t deadline);
    /* The CPU's timer or a kick came: e, running here, must look at the scheduler. */
    void (*notice)(struct sched_entity *e);
    /* The yield scan's question: does an interrupt or an NMI wait for e? */
    bool (*event_pending)(struct sched_entity *e);
    /* For a state dump: a short name of e ("vm/vcpu"). */
    void (*name)(const struct sched_entity *e, char *buf, unsigned len);
};

void sched_set_entity_ops(const struct sched_entity_ops *ops);

/* What sched/ tells its owner's tracer (sched_set_tracer) about an entity. */
enum sched_trace {
    SCHED_TRACE_STATE,   /* a: the old state, b: the new one (sched_set_state, e's lock held) */
    SCHED_TRACE_MIGRATE, /* a: the CPU it leaves, b: the one it goes to (both run queues locked) */
};

typedef void sched_tracer_fn(struct sched_entity *e, enum sched_trace what, uint64_t a, uint64_t b);

/*
 * The owner's tracer, NULL while nothing traces entities: unlike the
 * operations it changes at run time (the key console turns traces on and
 * off), and a NULL one costs its callers one predictable branch.
 */
extern sched_tracer_fn *sched_tracer;

static inline void sched_set_tracer(sched_tracer_fn *fn)
{
    __atomic_store_n(&sched_tracer, fn, __ATOMIC_RELAXED);
}

static inline void sched_trace(struct sched_entity *e, enum sched_trace what, uint64_t a,
                               uint64_t b)
{
    sched_tracer_fn *fn = __atomic_load_n(&sched_tracer, __ATOMIC_RELAXED);
    if (__builtin_expect(fn != 0, 0))
        fn(e, what, a, b);
}

/* A new entity: state as given, on cpu (sched_place's answer), pinned or not (-1). */
void sched_entity_init(struct sched_entity *e, enum sched_state state, unsigned cpu, int pin,
                       struct sched_group *group, unsigned index, uint64_t now);

/* Change e's state, charging the time since the last change to the old one. e's lock held. */
void sched_set_state(struct sched_entity *e, enum sched_state s, uint64_t now);

#endif

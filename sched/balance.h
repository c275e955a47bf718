/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Load balancing decisions: where a new vCPU goes, which vCPU a CPU about
 * to idle takes from another CPU's queue, and what the periodic balance
 * moves. Pure (the scheduler supplies the loads and the vCPUs, under its
 * locks), so every rule is unit-tested on the host
 * (tests/unit/test_balance.c); sched/sched.c does the moving.
 *
 * A vCPU may move only to a CPU its pin= allows (a hard constraint), and
 * only once it has left its CPU (its vendor context released there, see
 * balance_may_run_on). Loads count vCPUs: for placement, those placed on a
 * CPU; for balancing, those running or waiting there.
 *
 * Periodic balancing (every sched_balance_ms) moves at most one waiting
 * vCPU from the busiest CPU to the least loaded one, so that N
 * always-runnable vCPUs on M CPUs take turns on the less crowded CPUs and
 * each gets about M/N of a CPU: the vCPUs furthest behind in accumulated
 * run time should be the ones on the emptier CPU. With loads two or more
 * apart, the destination stays the emptier CPU: the waiting vCPU with the
 * least run time moves there. With loads one apart a move only swaps which
 * CPU is crowded, and the vCPUs left behind are the ones that gain: so the
 * waiting vCPU with the most run time moves, and only when everything left
 * on the busiest CPU has run less than everything on the destination.
 * tests/unit/test_balance.c simulates the rule: from three vCPUs on two
 * CPUs to nine on four, each gets within 2% of its share.
 */
#ifndef POLLUX_SCHED_BALANCE_H
#define POLLUX_SCHED_BALANCE_H

#include <stdbool.h>
#include <stdint.h>

struct balance_params {
    bool enabled; /* sched_balance=: idle pulls and periodic balancing */
    uint64_t ms;  /* sched_balance_ms: the period; 0 means four time slices */
};

extern struct balance_params balance_params;

/* The least loaded CPU that is ready (lowest index on ties), -1 if none is. */
int balance_place(const unsigned *placed, const bool *ready, unsigned ncpus);

/*
 * May a vCPU run on cpu now? pin: its pin= CPU or -1; tied_cpu: the CPU its
 * vendor context is still active on (VMX: VMCS not yet cleared), or -1;
 * on_cpu: it has not finished leaving the CPU it last ran on.
 */
bool balance_may_run_on(int pin, int tied_cpu, bool on_cpu, unsigned cpu);

/*
 * Moving a vCPU takes the run-queue locks of both CPUs, always the lower CPU
 * index first, so two CPUs moving vCPUs towards each other cannot deadlock.
 * Fills order[] with the CPUs to lock, in order; returns 1 when a == b.
 */
unsigned balance_lock_order(unsigned a, unsigned b, unsigned order[2]);

/*
 * A CPU about to idle: the other CPUs with vCPUs waiting in their queues,
 * busiest first (lower index on ties), into order[]. Returns how many.
 */
unsigned balance_pull_order(const unsigned *waiting, unsigned ncpus, unsigned self,
                            unsigned *order);

/* Per CPU, for the periodic balance: vCPUs running or waiting there. */
struct balance_cpu {
    unsigned load;
    bool ready;
};

/*
 * The busiest CPU and the least loaded ready one, when the first has more
 * vCPUs than the second (false: balanced). Ties go to the first found from
 * CPU start on: the caller moves start on at every balance, so that every
 * equally loaded CPU takes its turn (otherwise the vCPU alone on the third
 * of three CPUs would never share).
 */
bool balance_pick_cpus(const struct balance_cpu *cpus, unsigned ncpus, unsigned start,
                       unsigned *src, unsigned *dst);

/* A waiting vCPU of the busiest CPU. */
struct balance_vcpu {
    uint64_t run_cycles; /* accumulated run time */
    /*
     * balance_may_run_on the destination, and it ran since balancing last
     * moved it: a vCPU moved to the tail of a queue and moved again before
     * its turn would never run.
     */
    bool movable;
};

/* What the periodic balance sees of the two CPUs balance_pick_cpus chose. */
struct balance_move {
    unsigned src_load, dst_load;
    const struct balance_vcpu *waiting; /* the busiest CPU's waiting vCPUs */
    unsigned nwaiting;
    bool src_running;         /* the busiest CPU runs a vCPU ... */
    uint64_t src_running_run; /* ... which has run this long */
    uint64_t dst_least_run;   /* the least run time among the destination's vCPUs */
};

/* Which waiting vCPU moves (an index into waiting[]), -1 for none; see the top. */
int balance_choose(const struct balance_move *m);

#endif

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
 * Periodic balancing (every sched_balance_ms) moves one waiting vCPU from
 * the busiest CPU to the least loaded one: the waiting vCPU with the least
 * accumulated run time, so that N always-runnable vCPUs on M CPUs take
 * turns on the less crowded CPUs and each gets about M/N of a CPU. With
 * loads two or more apart it always moves; one apart, moving only swaps
 * which CPU is crowded, so it moves only when the vCPUs already on the
 * destination have all run longer than the one moved (they are ahead and
 * should now share). tests/unit/test_balance.c simulates the rule: three,
 * four, five, six and seven always-runnable vCPUs on two, three and four
 * CPUs each get within 2% of their share. It is a heuristic, not a proof:
 * in the same simulation five vCPUs on two CPUs leave one at 0.6 of the
 * others' share, so docs/scheduler.md claims only what is measured.
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

/* The movable waiting vCPU with the least run time (first on ties), -1 if none. */
int balance_pick_vcpu(const struct balance_vcpu *waiting, unsigned n);

/*
 * Move the chosen vCPU (run_cycles) from a CPU with src_load to one with
 * dst_load, whose vCPUs' least run time is dst_least_run (ignored when it
 * has none)?
 */
bool balance_should_move(unsigned src_load, unsigned dst_load, uint64_t run_cycles,
                         uint64_t dst_least_run);

#endif

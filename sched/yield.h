/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Directed yield: on a detected spin, which vCPU of the spinner's VM should
 * run in its place? The one most likely to hold the lock: a vCPU that was
 * preempted while it could run. Pure (the scheduler supplies what each
 * candidate looks like and the act of taking it), so every rule is
 * unit-tested on the host (tests/unit/test_yield.c); sched/sched.c runs it.
 *
 * The scan visits every other vCPU once, starting after a pivot and
 * wrapping (yield_pivot=):
 *   vcpu_id:      after the spinner itself (me+1 .. n-1, 0 .. me-1), the
 *                 2012 KVM proposal (../shared/seeds/003): spinners start
 *                 at different places, so they do not all try the same vCPU.
 *   last_boosted: after the VM's last successfully boosted vCPU (KVM).
 *   none:         no scan: the spinner only gives up its slice (Xen, ACRN).
 * A candidate is skipped (counted by reason) when it is on a CPU (running
 * or halt polling), halted without an interrupt pending (KVM's
 * vcpu_dy_runnable), preempted at CPL 3 while the spinner was at CPL 0 and
 * without an interrupt pending (KVM's yield_to_kernel_mode: a user-mode
 * vCPU holds no kernel lock), not allowed on the spinner's CPU (pinned
 * elsewhere), or itself a spinner whose turn it is not: a vCPU that left
 * its CPU while spinning is eligible only every other time it is
 * considered (KVM's dy_eligible), so two spinners do not keep boosting each
 * other. A candidate that passes is taken. As in KVM's kvm_vcpu_on_spin,
 * only some failures count toward YIELD_MAX_FAILED_TRIES, after which the
 * scan gives up: a candidate that is no longer waiting (it started running,
 * halted, or moved meanwhile: YIELD_GONE, KVM's yield_to returning 0) just
 * moves the scan on; one still waiting that cannot come to the spinner's
 * CPU now (its context still loaded on, or still leaving, another CPU:
 * YIELD_BUSY, the nearest case to KVM's -ESRCH, where the yield cannot
 * help) counts. Skips do not count either.
 */
#ifndef POLLUX_SCHED_YIELD_H
#define POLLUX_SCHED_YIELD_H

#include <stdbool.h>
#include <stdint.h>

#define YIELD_MAX_FAILED_TRIES 3

enum yield_pivot { YIELD_PIVOT_VCPU_ID, YIELD_PIVOT_LAST_BOOSTED, YIELD_PIVOT_NONE };

/* The pivots' names, indexed by enum yield_pivot, NULL-terminated (yield_pivot= takes them). */
extern const char *const yield_pivot_names[];

enum yield_skip {
    YIELD_SKIP_RUNNING,      /* on a CPU: running, or its CPU halt polling for it */
    YIELD_SKIP_BLOCKED,      /* halted with no interrupt pending */
    YIELD_SKIP_USER_MODE,    /* preempted at CPL 3 while the spinner was at CPL 0 */
    YIELD_SKIP_NOT_ELIGIBLE, /* itself spinning, and not its turn (dy_eligible) */
    YIELD_SKIP_PINNED,       /* pinned to another CPU than the spinner's */
    YIELD_SKIP_COUNT
};

/* Per vCPU, KVM's spin_loop: in_spin_loop while it handles a spin, until it next runs. */
struct yield_spin {
    bool in_spin_loop;
    uint8_t dy_eligible; /* toggled by other vCPUs' scans (atomically: several may scan at once) */
};

/* What a candidate looked like when the scan reached it. */
struct yield_candidate {
    bool on_cpu;            /* running, or its CPU halt polling for it */
    bool halted;            /* blocked in a halt */
    bool irq_pending;       /* an interrupt waits for it */
    bool preempted_in_user; /* it left its CPU at CPL 3 */
    bool pinned_elsewhere;  /* it may not run on the spinner's CPU */
    struct yield_spin *spin;
};

enum yield_take {
    YIELD_TAKEN,
    YIELD_GONE, /* no longer waiting: the scan moves on */
    YIELD_BUSY, /* waiting, but it cannot run here now: a failed try */
};

/* The scheduler's side: look at vCPU index, and try to make it run in the spinner's place. */
struct yield_source {
    void (*look)(void *ctx, unsigned index, struct yield_candidate *c);
    enum yield_take (*take)(void *ctx, unsigned index);
    void *ctx;
};

struct yield_outcome {
    int target;            /* the vCPU taken, -1 if none */
    unsigned failed_tries; /* YIELD_BUSY takes */
    unsigned gone;         /* YIELD_GONE takes */
    unsigned skipped[YIELD_SKIP_COUNT];
    bool gave_up; /* stopped after YIELD_MAX_FAILED_TRIES failures */
};

/* The first vCPU the scan visits; the scan then wraps, skipping the spinner. */
unsigned yield_first(enum yield_pivot pivot, unsigned me, unsigned last_boosted, unsigned n);

/*
 * Scan the n vCPUs of the spinner me (none: no scan, no target).
 * spinner_in_kernel: the spinner was at CPL 0. On success *last_boosted is
 * the target's index.
 */
void yield_scan(const struct yield_source *src, unsigned n, unsigned me, enum yield_pivot pivot,
                bool spinner_in_kernel, unsigned *last_boosted, struct yield_outcome *out);

/*
 * A yield to one named sibling (KVM's kvm_sched_yield, for PV sched yield
 * and the kick): the target is taken if it waits for a CPU, as KVM yields
 * only to a vCPU that is ready (preempted while runnable).
 */
enum yield_to_result {
    YIELD_TO_TAKEN,        /* it runs next on the caller's CPU */
    YIELD_TO_SELF,         /* the caller named itself */
    YIELD_TO_RUNNING,      /* on a CPU already (running, or its CPU halt polling) */
    YIELD_TO_NOT_RUNNABLE, /* halted, parked or stopped */
    YIELD_TO_PINNED,       /* pinned to another CPU than the caller's */
    YIELD_TO_MISSED,       /* it waited, but started elsewhere or could not come now */
};

/* The look before the take: YIELD_TO_TAKEN means "try to take it". */
enum yield_to_result yield_to_check(const struct yield_candidate *c, bool self);

/* The spinner's spin_loop around a scan (KVM's kvm_vcpu_set_in_spin_loop). */
void yield_spin_begin(struct yield_spin *s);
/* It ran again, or kept its CPU: no longer a spinner. */
void yield_spin_end(struct yield_spin *s);

#endif

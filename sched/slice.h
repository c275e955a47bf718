/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A CPU's current run and when it must end: a fresh slice, or a directed
 * yield's hand-off. Pure (host TSC values in, decisions out), so the rules
 * are unit-tested on the host (tests/unit/test_slice.c); sched/sched.c
 * keeps one per run queue, under its lock.
 *
 * The promise (docs/directed_yield.md): whatever runs here, a fresh slice
 * or a hand-off's target, runs at least sched_wakeup_granularity_us before
 * a woken vCPU takes the CPU. So every granularity test measures from
 * run_start, which a hand-off sets anew: measured from the spinner's slice
 * start, a target handed the CPU late in that slice would be preempted at
 * its first exit by any woken vCPU.
 */
#ifndef POLLUX_SCHED_SLICE_H
#define POLLUX_SCHED_SLICE_H

#include <stdbool.h>
#include <stdint.h>

struct slice {
    uint64_t run_start;  /* the current entity began running here: a slice or a hand-off */
    uint64_t end;        /* the slice's end */
    bool wakeup_pending; /* a woken entity waits at the head of the queue */
    bool resched;        /* the current entity must give up the CPU at its next exit */
};

/* A fresh slice of length cycles for the entity picked now. */
static inline void slice_begin(struct slice *s, uint64_t now, uint64_t cycles)
{
    *s = (struct slice){.run_start = now, .end = now + cycles};
}

/*
 * A directed yield's target runs now: the rest of the spinner's slice but
 * at least the granularity, counted from now. A woken entity still waiting
 * keeps waiting: it preempts the target once the target has had its due.
 */
static inline void slice_hand_off(struct slice *s, uint64_t now, uint64_t granularity)
{
    s->run_start = now;
    s->resched = false;
    if (s->end < now + granularity)
        s->end = now + granularity;
}

/* The current entity has run its granularity: a woken one may take the CPU. */
static inline bool slice_granted(const struct slice *s, uint64_t now, uint64_t granularity)
{
    return now - s->run_start >= granularity;
}

/* When the CPU must look again: the slice's end, earlier if a woken entity waits. */
static inline uint64_t slice_deadline(const struct slice *s, uint64_t granularity)
{
    uint64_t granted = s->run_start + granularity;
    return s->wakeup_pending && granted < s->end ? granted : s->end;
}

/* With others queued: must the current entity leave at this exit? */
static inline bool slice_over(const struct slice *s, uint64_t now, uint64_t granularity)
{
    return s->resched || now >= s->end || (s->wakeup_pending && slice_granted(s, now, granularity));
}

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Deferred work: what a device could not finish inside the exit that asked
 * for it (a virtqueue served up to its budget), run later by the scheduler
 * loop of one CPU between vCPU entries, with no vCPU loaded and interrupts
 * off (vhost's worker and its vhost_poll_queue are the model;
 * docs/robustness.md). An item is queued at most once: queueing one that is
 * already queued does nothing, and queueing one that is running makes it
 * run once more after it returns, so a request for work is never lost.
 * Its function does a bounded amount and says whether more is left; if so
 * it goes to the back of its CPU's list and runs again at a later pass.
 *
 * This file is the list and the item's state, pure (the caller holds the
 * lock of the list's CPU), so the rules are unit-tested on the host
 * (tests/unit/test_deferred.c). sched/sched.c keeps one list per CPU
 * under its run queue's lock and runs it (sched_defer, sched_defer_cancel,
 * in sched/sched.h).
 */
#ifndef POLLUX_SCHED_DEFERRED_H
#define POLLUX_SCHED_DEFERRED_H

#include <stdbool.h>

struct deferred_work;

/* Do a bounded part of the work: true if some is left (it runs again later). */
typedef bool (*deferred_fn)(struct deferred_work *w);

enum deferred_state {
    DEFERRED_IDLE,
    DEFERRED_QUEUED,
    DEFERRED_RUNNING,
};

struct deferred_work {
    deferred_fn fn;
    struct deferred_work *next; /* in its list, while QUEUED */
    int cpu;                    /* the list it is on or runs from; -1 while IDLE */
    enum deferred_state state;
    bool again;  /* queued while RUNNING: runs once more */
    bool cancel; /* cancelled while RUNNING: never again */
};

/* One CPU's queue, first in first out. */
struct deferred_list {
    struct deferred_work *head, **tail;
    unsigned count;
};

void deferred_init(struct deferred_work *w, deferred_fn fn);
void deferred_list_init(struct deferred_list *l);

/*
 * Queue w on l, the list of CPU cpu (l's lock held; w IDLE, or already on
 * l): true if it was added now, false if it was queued already or is
 * running (then it runs once more after it returns).
 */
bool deferred_queue_locked(struct deferred_list *l, struct deferred_work *w, unsigned cpu);

/* The first item, now RUNNING and out of the list, or NULL (l's lock held). */
struct deferred_work *deferred_take(struct deferred_list *l);

/*
 * w (taken from l) returned `more`: back at the tail if more is left or it
 * was queued meanwhile, unless cancelled; else IDLE. True if it was queued
 * again (l's lock held).
 */
bool deferred_done(struct deferred_list *l, struct deferred_work *w, bool more);

/*
 * Cancel w, on l (l's lock held): true if it is now IDLE for good until
 * queued again (it was queued, and is removed, or it was IDLE); false if
 * it is running, marked not to run again: wait until it is IDLE.
 */
bool deferred_cancel_locked(struct deferred_list *l, struct deferred_work *w);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A host CPU's queue of runnable vCPUs: a doubly linked FIFO through the
 * vCPUs' own links, so enqueue, dequeue and removal never allocate. Pure
 * list operations, unit-tested on the host; the caller holds the queue's
 * lock (sched/sched.c).
 */
#ifndef POLLUX_SCHED_RUNQUEUE_H
#define POLLUX_SCHED_RUNQUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct rq_link {
    struct rq_link *prev, *next;
    bool queued;
};

struct rq_list {
    struct rq_link head; /* sentinel: head.next is the first, head.prev the last */
    unsigned count;
};

static inline void rq_init(struct rq_list *q)
{
    q->head.prev = q->head.next = &q->head;
    q->head.queued = false;
    q->count = 0;
}

static inline bool rq_empty(const struct rq_list *q)
{
    return q->count == 0;
}

static inline void rq_insert_after(struct rq_list *q, struct rq_link *pos, struct rq_link *l)
{
    l->prev = pos;
    l->next = pos->next;
    pos->next->prev = l;
    pos->next = l;
    l->queued = true;
    q->count++;
}

/* Runs after everything queued: the round-robin position of a preempted vCPU. */
static inline void rq_push_tail(struct rq_list *q, struct rq_link *l)
{
    rq_insert_after(q, q->head.prev, l);
}

/* Runs next: a vCPU woken from a halt has been waiting and is owed the CPU first. */
static inline void rq_push_head(struct rq_list *q, struct rq_link *l)
{
    rq_insert_after(q, &q->head, l);
}

static inline void rq_remove(struct rq_list *q, struct rq_link *l)
{
    if (!l->queued)
        return;
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = NULL;
    l->queued = false;
    q->count--;
}

/* Dequeue the first entry; NULL when empty. */
static inline struct rq_link *rq_pop(struct rq_list *q)
{
    if (rq_empty(q))
        return NULL;
    struct rq_link *l = q->head.next;
    rq_remove(q, l);
    return l;
}

#endif

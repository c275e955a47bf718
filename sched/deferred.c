/* SPDX-License-Identifier: GPL-2.0-only */
/* Deferred work's list and item states (sched/deferred.h). */
#include "sched/deferred.h"

#include <stddef.h>

void deferred_init(struct deferred_work *w, deferred_fn fn)
{
    *w = (struct deferred_work){.fn = fn, .cpu = -1, .state = DEFERRED_IDLE};
}

void deferred_list_init(struct deferred_list *l)
{
    l->head = NULL;
    l->tail = &l->head;
    l->count = 0;
}

static void push_tail(struct deferred_list *l, struct deferred_work *w)
{
    w->next = NULL;
    *l->tail = w;
    l->tail = &w->next;
    l->count++;
    w->state = DEFERRED_QUEUED;
}

bool deferred_queue_locked(struct deferred_list *l, struct deferred_work *w, unsigned cpu)
{
    if (w->state == DEFERRED_RUNNING) {
        w->again = true;
        return false;
    }
    if (w->state == DEFERRED_QUEUED)
        return false;
    w->cpu = (int)cpu;
    w->cancel = false;
    push_tail(l, w);
    return true;
}

struct deferred_work *deferred_take(struct deferred_list *l)
{
    struct deferred_work *w = l->head;
    if (w == NULL)
        return NULL;
    l->head = w->next;
    if (l->head == NULL)
        l->tail = &l->head;
    l->count--;
    w->next = NULL;
    w->state = DEFERRED_RUNNING;
    w->again = false;
    return w;
}

bool deferred_done(struct deferred_list *l, struct deferred_work *w, bool more)
{
    bool requeue = (more || w->again) && !w->cancel;
    w->again = false;
    if (requeue) {
        push_tail(l, w);
        return true;
    }
    w->state = DEFERRED_IDLE;
    w->cancel = false;
    __atomic_store_n(&w->cpu, -1, __ATOMIC_RELEASE);
    return false;
}

bool deferred_cancel_locked(struct deferred_list *l, struct deferred_work *w)
{
    if (w->state == DEFERRED_RUNNING) {
        w->cancel = true;
        return false;
    }
    if (w->state == DEFERRED_QUEUED) {
        for (struct deferred_work **p = &l->head; *p; p = &(*p)->next) {
            if (*p == w) {
                *p = w->next;
                if (l->tail == &w->next)
                    l->tail = p;
                l->count--;
                break;
            }
        }
        w->next = NULL;
        w->state = DEFERRED_IDLE;
    }
    __atomic_store_n(&w->cpu, -1, __ATOMIC_RELEASE);
    return true;
}

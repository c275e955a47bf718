/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/entity.h"

sched_tracer_fn *sched_tracer;

void sched_entity_init(struct sched_entity *e, enum sched_state state, unsigned cpu, int pin,
                       struct sched_group *group, unsigned index, uint64_t now)
{
    *e = (struct sched_entity){
        .state = state,
        .state_since = now,
        .cpu = cpu,
        .pin = pin,
        .loaded_cpu = -1,
        .group = group,
        .index = index,
    }; /* the lock too: a zeroed ticket lock is free */
}

void sched_set_state(struct sched_entity *e, enum sched_state s, uint64_t now)
{
    uint64_t spent = now > e->state_since ? now - e->state_since : 0;
    e->cycles[e->state] += spent;
    sched_trace(e, SCHED_TRACE_STATE, e->state, s);
    /* Released: the polling CPU reads the state without the lock. */
    __atomic_store_n(&e->state, s, __ATOMIC_RELEASE);
    e->state_since = now;
}

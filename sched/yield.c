/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/yield.h"

#include <stddef.h>

const char *const yield_pivot_names[] = {
    [YIELD_PIVOT_VCPU_ID] = "vcpu_id",
    [YIELD_PIVOT_LAST_BOOSTED] = "last_boosted",
    [YIELD_PIVOT_NONE] = "none",
    NULL,
};

unsigned yield_first(enum yield_pivot pivot, unsigned me, unsigned last_boosted, unsigned n)
{
    unsigned after = pivot == YIELD_PIVOT_LAST_BOOSTED ? last_boosted : me;
    return (after + 1) % n;
}

void yield_spin_begin(struct yield_spin *s)
{
    __atomic_store_n(&s->in_spin_loop, true, __ATOMIC_RELAXED);
    __atomic_store_n(&s->dy_eligible, 0, __ATOMIC_RELAXED);
}

void yield_spin_end(struct yield_spin *s)
{
    __atomic_store_n(&s->in_spin_loop, false, __ATOMIC_RELAXED);
    __atomic_store_n(&s->dy_eligible, 0, __ATOMIC_RELAXED);
}

/* A spinner is eligible every other time it is considered: the toggle flips on each look. */
static bool eligible(struct yield_spin *s)
{
    if (!__atomic_load_n(&s->in_spin_loop, __ATOMIC_RELAXED))
        return true;
    return __atomic_fetch_xor(&s->dy_eligible, 1, __ATOMIC_RELAXED) & 1;
}

static int skip_reason(const struct yield_candidate *c, bool spinner_in_kernel)
{
    if (c->on_cpu)
        return YIELD_SKIP_RUNNING;
    if (c->halted && !c->irq_pending)
        return YIELD_SKIP_BLOCKED;
    if (spinner_in_kernel && c->preempted_in_user && !c->irq_pending)
        return YIELD_SKIP_USER_MODE;
    if (c->pinned_elsewhere)
        return YIELD_SKIP_PINNED;
    /* Last: the look flips the toggle, which only a candidate that could be taken may do. */
    if (!eligible(c->spin))
        return YIELD_SKIP_NOT_ELIGIBLE;
    return -1;
}

void yield_scan(const struct yield_source *src, unsigned n, unsigned me, enum yield_pivot pivot,
                bool spinner_in_kernel, unsigned *last_boosted, struct yield_outcome *out)
{
    *out = (struct yield_outcome){.target = -1};
    if (pivot == YIELD_PIVOT_NONE)
        return;
    unsigned i = yield_first(pivot, me, *last_boosted, n);
    for (unsigned visited = 0; visited < n; visited++, i = (i + 1) % n) {
        if (i == me)
            continue;
        struct yield_candidate c;
        src->look(src->ctx, i, &c);
        int why = skip_reason(&c, spinner_in_kernel);
        if (why >= 0) {
            out->skipped[why]++;
            continue;
        }
        enum yield_take took = src->take(src->ctx, i);
        if (took == YIELD_TAKEN) {
            out->target = (int)i;
            *last_boosted = i;
            return;
        }
        if (took == YIELD_GONE) {
            out->gone++;
            continue;
        }
        if (++out->failed_tries == YIELD_MAX_FAILED_TRIES) {
            out->gave_up = true;
            return;
        }
    }
}

enum yield_to_result yield_to_check(const struct yield_candidate *c, bool self)
{
    if (self)
        return YIELD_TO_SELF;
    if (c->on_cpu)
        return YIELD_TO_RUNNING;
    if (c->halted)
        return YIELD_TO_NOT_RUNNABLE;
    if (c->pinned_elsewhere)
        return YIELD_TO_PINNED;
    return YIELD_TO_TAKEN;
}

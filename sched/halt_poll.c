/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/halt_poll.h"

static struct halt_poll_change change(enum halt_poll_change_kind kind, uint64_t old_ns,
                                      uint64_t new_ns)
{
    return (struct halt_poll_change){kind, old_ns, new_ns};
}

uint64_t halt_poll_begin(struct halt_poll *hp, const struct halt_poll_params *p, uint64_t max,
                         struct halt_poll_change *c)
{
    uint64_t old = hp->window_ns;
    *c = change(HALT_POLL_KEEP, old, old);
    if (p->mode == HALT_POLL_FIXED) {
        hp->window_ns = max;
    } else if (p->mode == HALT_POLL_PREDICT && hp->predict_stale) {
        hp->predict_stale = false;
        hp->window_ns = halt_poll_predict_window(hp, max);
        if (hp->window_ns != old)
            *c =
                change(hp->window_ns > old ? HALT_POLL_GROW : HALT_POLL_SHRINK, old, hp->window_ns);
    } else if (hp->window_ns > max) {
        hp->window_ns = max;
    }
    return hp->window_ns;
}

/* KVM's grow_halt_poll_ns, capped at max so that no window (or trace line) exceeds it. */
static struct halt_poll_change grow(struct halt_poll *hp, const struct halt_poll_params *p,
                                    uint64_t max)
{
    uint64_t old = hp->window_ns, val = old;
    if (p->grow) {
        val = old * p->grow;
        if (val < p->grow_start)
            val = p->grow_start;
        if (val > max)
            val = max;
    }
    hp->window_ns = val;
    return change(HALT_POLL_GROW, old, val);
}

/* KVM's shrink_halt_poll_ns: divide, or reset with shrink 0; below grow_start means 0. */
static struct halt_poll_change shrink(struct halt_poll *hp, const struct halt_poll_params *p)
{
    uint64_t old = hp->window_ns;
    if (!old)
        return change(HALT_POLL_KEEP, 0, 0); /* nothing to shrink: not a change to trace */
    uint64_t val = p->shrink ? old / p->shrink : 0;
    if (val < p->grow_start)
        val = 0;
    hp->window_ns = val;
    return change(HALT_POLL_SHRINK, old, val);
}

static struct halt_poll_change adaptive_end(struct halt_poll *hp, const struct halt_poll_params *p,
                                            uint64_t max, uint64_t halt_ns, bool valid)
{
    uint64_t window = hp->window_ns;
    if (!valid)
        return shrink(hp, p);
    if (max == 0) {
        hp->window_ns = 0; /* already clamped at the halt's start: never a change to trace */
        return change(HALT_POLL_KEEP, window, 0);
    }
    if (halt_ns <= window)
        return change(HALT_POLL_KEEP, window, window);
    if (window && halt_ns > max)
        return shrink(hp, p);
    if (window < max && halt_ns < max)
        return grow(hp, p, max);
    return change(HALT_POLL_KEEP, window, window);
}

/* Forget the oldest halt if the ring is full, remember this one: O(n) in the sorted copy. */
static void predict_record(struct halt_poll *hp, uint64_t halt_ns)
{
    uint32_t d = halt_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)halt_ns;
    unsigned n = hp->recent_count;
    if (n == HALT_POLL_PREDICT_HALTS) {
        uint32_t old = hp->recent[hp->recent_next];
        unsigned i = 0;
        while (hp->sorted[i] != old)
            i++;
        for (n--; i < n; i++)
            hp->sorted[i] = hp->sorted[i + 1];
    }
    unsigned i = n;
    for (; i > 0 && hp->sorted[i - 1] > d; i--)
        hp->sorted[i] = hp->sorted[i - 1];
    hp->sorted[i] = d;
    hp->recent[hp->recent_next] = d;
    hp->recent_next = (hp->recent_next + 1) % HALT_POLL_PREDICT_HALTS;
    hp->recent_count = n + 1;
}

/*
 * What polling for w ns would have paid over the remembered halts: a halt
 * that ended within w is worth max (the most the rules ever spend to catch
 * one wake-up) minus the time polled for it; one that outlasted w cost w.
 * The candidates are each remembered halt plus an eighth (so the same halt
 * with a little jitter is still caught), capped at max: the best window is
 * always just past some halt's duration. Ties go to the shorter window.
 * One pass over the sorted halts: the candidates ascend with them, and so
 * does the number of halts each catches.
 */
uint64_t halt_poll_predict_window(const struct halt_poll *hp, uint64_t max)
{
    unsigned n = hp->recent_count, caught = 0;
    uint64_t caught_sum = 0, best = 0;
    int64_t best_payoff = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t d = hp->sorted[i], w = d + d / 8;
        if (w > max)
            w = max;
        for (; caught < n && hp->sorted[caught] <= w; caught++)
            caught_sum += hp->sorted[caught];
        int64_t payoff = (int64_t)(caught * max - caught_sum) - (int64_t)((n - caught) * w);
        if (payoff > best_payoff) {
            best = w;
            best_payoff = payoff;
        }
    }
    return best;
}

struct halt_poll_change halt_poll_end(struct halt_poll *hp, const struct halt_poll_params *p,
                                      uint64_t max, uint64_t halt_ns, bool valid)
{
    uint64_t old = hp->window_ns;
    switch (p->mode) {
    case HALT_POLL_FIXED:
        return change(HALT_POLL_KEEP, old, old);
    case HALT_POLL_PREDICT:
        if (valid) {
            predict_record(hp, halt_ns);
            hp->predict_stale = true;
        }
        return change(HALT_POLL_KEEP, old, old);
    default:
        return adaptive_end(hp, p, max, halt_ns, valid);
    }
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/lockup.h"

bool lockup_check(struct lockup_watch *w, const struct lockup_limits *l, uint64_t now,
                  uint64_t target_beats, uint64_t checker_beats, uint64_t target_steal,
                  bool target_preempted)
{
    uint64_t interval = w->started && now > w->last_check ? now - w->last_check : 0;
    uint64_t stolen =
        w->started && target_steal > w->target_steal ? target_steal - w->target_steal : 0;
    w->target_steal = target_steal;
    bool target_moved = !w->started || target_beats != w->target_beats;
    bool checker_moved = checker_beats != w->checker_beats;
    w->started = true;
    w->last_check = now;
    w->target_beats = target_beats;
    w->checker_beats = checker_beats;
    /*
     * A CPU is judged once it has beaten: until it enters its scheduler loop
     * it is still booting, and the first CPU loads every VM first (zeroing
     * guest RAM takes seconds under emulation).
     */
    if (target_moved || target_beats == 0) {
        w->stale = 0;
        return false;
    }
    if (checker_moved && !target_preempted) {
        uint64_t counted = interval < l->max_interval ? interval : l->max_interval;
        w->stale += counted > stolen ? counted - stolen : 0;
    }
    return w->stale >= l->timeout;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lockup detection between two CPUs, pure logic. A checker CPU looks at a
 * target CPU's heartbeat count (beats from its scheduler loop) at each of
 * its own periodic checks. The target is locked up once its count has not
 * moved for `timeout` cycles of time that counts: only the intervals in
 * which the checker itself beat, and each of those at most `max_interval`.
 * When the whole machine stalls (an emulator descheduled by a loaded host,
 * whose TSC is the host's clock) neither CPU beats, and that time says
 * nothing about the target. A target that has never beaten is still
 * booting and is not judged.
 *
 * Under a hypervisor (nested KVM) L0 can deschedule one of pollux's CPUs
 * for seconds while the others run: where L0 offers steal time, the checker
 * counts nothing while L0 reports the target preempted, and takes the
 * target's steal (time it was runnable but not run, which L0 adds when the
 * target runs again) off the time that counts.
 */
#ifndef POLLUX_SCHED_LOCKUP_H
#define POLLUX_SCHED_LOCKUP_H

#include <stdbool.h>
#include <stdint.h>

struct lockup_limits {
    uint64_t timeout;      /* cycles without a beat that make a lockup */
    uint64_t max_interval; /* the most one check interval may count */
};

/* What a checker remembers about its target; zero-initialised before the first check. */
struct lockup_watch {
    bool started;
    uint64_t last_check;    /* TSC of the last check */
    uint64_t target_beats;  /* the target's count at the last check */
    uint64_t checker_beats; /* the checker's own count at the last check */
    uint64_t stale;         /* counted cycles since the target last beat */
    uint64_t target_steal;  /* the target's steal at the last check */
};

/*
 * One check at time now: true once the target counts as locked up.
 * target_steal: L0's steal time of the target's CPU in cycles (0 without);
 * target_preempted: L0 reports that CPU descheduled now.
 */
bool lockup_check(struct lockup_watch *w, const struct lockup_limits *l, uint64_t now,
                  uint64_t target_beats, uint64_t checker_beats, uint64_t target_steal,
                  bool target_preempted);

#endif

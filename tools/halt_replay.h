/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Replaying recorded halts (trace=halt) through a halt-polling policy: the
 * hypervisor's own sched/halt_poll.c, built for the host, decides each
 * halt's window exactly as vmm/vcpu/vcpu_events.c would, and a poll of w ns
 * catches a halt whose recorded length is at most w. Used by
 * tools/haltreplay.c; docs/halt_polling.md ("Replaying halts") says what a
 * replay can and cannot predict.
 */
#ifndef POLLUX_TOOLS_HALT_REPLAY_H
#define POLLUX_TOOLS_HALT_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/halt_poll.h"

/* One kvm_vcpu_wakeup line of trace=halt (docs/console.md). */
struct halt_record {
    unsigned vcpu;
    uint64_t ns;        /* the halt's length: what an endless poll would have taken */
    uint64_t window_ns; /* the window the recorded policy had */
    bool valid;         /* ended by a guest event, not a stop request */
    bool opted_out;     /* the guest had turned host polling off: no policy polls */
    bool cpu_wanted;    /* another vCPU waited for the CPU: no policy polls */
};

/* What a policy did over a recording, with KVM's statistics' meanings. */
struct halt_replay_result {
    uint64_t halts;
    uint64_t polls;     /* halt_attempted_poll */
    uint64_t caught;    /* halt_successful_poll: the wake-up came within the window */
    uint64_t blocked;   /* halts that still blocked (no poll, or a poll that failed) */
    uint64_t poll_ns;   /* halt_poll_success_ns + halt_poll_fail_ns */
    uint64_t wasted_ns; /* halt_poll_fail_ns: polled for wake-ups that came later */
    /* Halts where a policy chooses (neither flag set), and those where it chose the recorded
     * window: all of them when it is the policy recorded. */
    uint64_t compared, same_window;
};

/*
 * Replay n records, in their order, through the policy p with maximum max,
 * each vCPU with its own window starting at 0. Returns false if out of
 * memory.
 */
bool halt_replay(const struct halt_record *r, size_t n, const struct halt_poll_params *p,
                 uint64_t max, struct halt_replay_result *out);

#endif

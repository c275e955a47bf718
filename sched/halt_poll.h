/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Halt polling policy: how long a halting vCPU's CPU spins waiting for the
 * wake-up before it blocks. Pure arithmetic, no locks and no clocks, so
 * every decision is unit-tested on the host (tests/unit/test_halt_poll.c);
 * vmm/vcpu/vcpu_events.c does the polling and calls in here.
 *
 * Contract, per halt of one vCPU whose host polling is allowed:
 *   window = halt_poll_begin(hp, params, max, &change);  poll up to window ns
 *   ... the halt ends, halt_ns after it began (polling plus blocking) ...
 *   change = halt_poll_end(hp, params, max, halt_ns, valid);
 * max is the effective maximum (the VM's halt_poll_ns= or the global one).
 * A halt that cannot poll (another vCPU waits for the CPU) may skip begin.
 * A vCPU whose guest turned polling off (MSR_KVM_POLL_CONTROL) calls
 * neither: its window is neither used nor adjusted, as in KVM.
 *
 * Modes (halt_poll_mode=):
 *   adaptive: KVM's rules (virt/kvm/kvm_main.c, kvm_vcpu_halt), with the
 *             2024 default shrink of 2: the window grows after a short halt
 *             it missed and shrinks after a long one.
 *   fixed:    always poll for max (KVM before dynamic polling).
 *   predict:  pollux's own: the window that would have paid best over the
 *             vCPU's last HALT_POLL_PREDICT_HALTS halts (docs/halt_polling.md
 *             derives the rule).
 */
#ifndef POLLUX_SCHED_HALT_POLL_H
#define POLLUX_SCHED_HALT_POLL_H

#include <stdbool.h>
#include <stdint.h>

enum halt_poll_mode { HALT_POLL_ADAPTIVE, HALT_POLL_FIXED, HALT_POLL_PREDICT };

struct halt_poll_params {
    uint64_t max_ns;     /* halt_poll_ns: the longest poll (0 turns polling off) */
    uint64_t grow;       /* halt_poll_ns_grow: the window's growth factor (0: never grows) */
    uint64_t grow_start; /* halt_poll_ns_grow_start: the first non-zero window */
    uint64_t shrink;     /* halt_poll_ns_shrink: the window's shrink divisor (0: reset to 0) */
    unsigned mode;       /* halt_poll_mode: enum halt_poll_mode */
};

/* KVM's defaults (virt/kvm/kvm_main.c, with the 2024 shrink of 2): the hypervisor options'
 * defaults. */
#define HALT_POLL_PARAMS_KVM                                                                       \
    {                                                                                              \
        .max_ns = 200000, .grow = 2, .grow_start = 10000, .shrink = 2, .mode = HALT_POLL_ADAPTIVE  \
    }

/* predict: how many recent halts it remembers. */
#define HALT_POLL_PREDICT_HALTS 16

struct halt_poll {
    uint64_t window_ns; /* halt_poll_ns of this vCPU: the next halt's poll window (a gauge) */
    /*
     * predict: the durations of the last halts in ns (saturated at 2^32-1),
     * in arrival order (a ring) and the same values in ascending order.
     */
    uint32_t recent[HALT_POLL_PREDICT_HALTS];
    uint32_t sorted[HALT_POLL_PREDICT_HALTS];
    unsigned recent_count, recent_next;
    bool predict_stale; /* halts were recorded since the window was chosen */
};

enum halt_poll_change_kind { HALT_POLL_KEEP, HALT_POLL_GROW, HALT_POLL_SHRINK };

/* What halt_poll_begin or halt_poll_end did to the window, for the kvm_halt_poll_ns trace. */
struct halt_poll_change {
    enum halt_poll_change_kind kind; /* KEEP: no trace line */
    uint64_t old_ns, new_ns;
};

/*
 * At the start of a halt: clamp the window to max and return how long to
 * poll (0: do not). predict chooses its window here rather than in
 * halt_poll_end, off the path back into the guest: the CPU is about to spin
 * or idle anyway. *change reports a window predict moved (KEEP otherwise:
 * the clamp is silent, as in KVM).
 */
uint64_t halt_poll_begin(struct halt_poll *hp, const struct halt_poll_params *p, uint64_t max,
                         struct halt_poll_change *change);

/*
 * After the halt: adjust the window from the whole halt's duration. valid is
 * false when the halt ended for a reason other than a guest event (pollux:
 * its VM is stopping); the window then shrinks, as KVM does for an invalid
 * wake-up.
 */
struct halt_poll_change halt_poll_end(struct halt_poll *hp, const struct halt_poll_params *p,
                                      uint64_t max, uint64_t halt_ns, bool valid);

/* predict's choice for the halts remembered now: the window with the best payoff. */
uint64_t halt_poll_predict_window(const struct halt_poll *hp, uint64_t max);

#endif

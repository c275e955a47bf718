/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spin detection policy: when does a vCPU executing PAUSE count as spinning
 * on a lock? Pure arithmetic, no locks and no clocks of its own, so every
 * rule is unit-tested on the host (tests/unit/test_spin.c); vmm/vcpu/pause.c
 * applies it to PAUSE exits and the backends program the hardware.
 *
 * One detector is active per vCPU, chosen at boot from what the CPU offers:
 *   ple:          VMX PAUSE-loop exiting. The CPU exits once the guest has
 *                 spun (PAUSEs at most ple_gap TSC cycles apart) for
 *                 ple_window cycles, at CPL 0 only.
 *   pause_filter: SVM pause filter. The CPU exits after pause_filter_count
 *                 PAUSEs; with a threshold, only PAUSEs at most
 *                 pause_filter_thresh cycles apart count. Where the CPU
 *                 lacks the threshold (Bochs ryzen), pollux filters by count
 *                 only and takes each exit as a spin
 *                 (pause_filter_count_only=spin, its default); KVM instead
 *                 leaves PAUSE to the guest there (svm_hardware_setup sets
 *                 pause_filter_thresh 0, svm_vm_init then pause_in_guest):
 *                 pause_filter_count_only=off, spin detection off.
 *   software:     only unconditional PAUSE exiting exists (QEMU TCG; Intel
 *                 nested KVM gives a nested hypervisor no PLE): pollux counts
 *                 PAUSE exits itself (spin_sw_pause below).
 *   off:          ple=off, or no way to intercept PAUSE.
 * The hardware windows (ple_window, pause_filter_count) grow on each spin
 * exit and shrink each time the vCPU is scheduled in, with KVM's
 * arithmetic (spin_window_grow / spin_window_shrink), one implementation for
 * both vendors.
 */
#ifndef POLLUX_SCHED_SPIN_H
#define POLLUX_SCHED_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/virt.h"

enum spin_detector {
    SPIN_DETECT_OFF,
    SPIN_DETECT_PLE,
    SPIN_DETECT_PAUSE_FILTER,
    SPIN_DETECT_SOFTWARE
};

const char *spin_detector_name(enum spin_detector d);

/* A hardware window and how it moves: KVM's ple_window* or pause_filter_count* parameters. */
struct spin_window_params {
    uint64_t gap;    /* ple_gap / pause_filter_thresh: the largest distance between two PAUSEs of
                        one loop, in TSC cycles (0 for count-only filtering) */
    uint64_t base;   /* ple_window / pause_filter_count: the initial window */
    uint64_t grow;   /* ple_window_grow / pause_filter_count_grow */
    uint64_t shrink; /* ple_window_shrink / pause_filter_count_shrink */
    uint64_t max;    /* ple_window_max / pause_filter_count_max */
};

/* The software detector's tunables (spin_sw_threshold, spin_sw_window_us). */
struct spin_sw_params {
    uint64_t threshold;     /* PAUSE exits that make a spin ... */
    uint64_t window_cycles; /* ... when they all fall within this many TSC cycles */
};

/* pause_filter_count_only=: a pause filter without a threshold detects spins, or not (KVM). */
enum spin_count_only { SPIN_COUNT_ONLY_SPIN, SPIN_COUNT_ONLY_OFF };
extern const char *const spin_count_only_names[]; /* indexed by enum, NULL-terminated */

struct spin_params {
    bool enabled;        /* ple=: false turns PAUSE interception off */
    unsigned count_only; /* pause_filter_count_only=: enum spin_count_only */
    struct spin_window_params ple, pause_filter;
    uint64_t sw_threshold, sw_window_us; /* the command line's units; see spin_sw_params */
};

/*
 * KVM's module parameters and defaults (kvm_intel ple_*, kvm_amd
 * pause_filter_*): the hypervisor options' defaults. With shrink 0 a
 * window goes back to its base whenever the vCPU is scheduled in.
 *
 * The software detector sees one exit per PAUSE, each costing a full exit:
 * about 20 us of host time under QEMU TCG, a few us under nested KVM, while
 * a spin loop executes PAUSE every few dozen cycles natively. One PAUSE
 * proves nothing (a failed cmpxchg retried once, a short delay); 8 exits in
 * a row mean the vCPU went round its loop 8 times without the lock coming
 * free, the software analogue of PLE's window of 4096 cycles of PAUSEs. The
 * window of 1000 us (a quarter of the default slice) holds 8 exits even on
 * TCG's slowest path, and PAUSEs further apart than that are separate waits,
 * not one spin.
 */
#define SPIN_PARAMS_KVM                                                                            \
    {                                                                                              \
        .enabled = true, .count_only = SPIN_COUNT_ONLY_SPIN,                                       \
        .ple = {.gap = 128, .base = 4096, .grow = 2, .shrink = 0, .max = 4294967295u},             \
        .pause_filter = {.gap = 128, .base = 3000, .grow = 2, .shrink = 0, .max = 65535},          \
        .sw_threshold = 8, .sw_window_us = 1000,                                                   \
    }

/*
 * The window after a spin exit: a modifier below the base multiplies,
 * otherwise it adds; a modifier of 0 resets to the base. The result is
 * clamped to [base, max] (a max below the base counts as the base).
 */
uint64_t spin_window_grow(uint64_t window, const struct spin_window_params *p);

/* The window when the vCPU is scheduled in: divides or subtracts, same rules and clamp. */
uint64_t spin_window_shrink(uint64_t window, const struct spin_window_params *p);

/* Per vCPU: the PAUSE exits seen in the current window. */
struct spin_sw {
    uint64_t window_start; /* host TSC of the first PAUSE exit counted */
    uint64_t count;        /* PAUSE exits since window_start */
};

/*
 * A PAUSE exit at host TSC now: true when it is the threshold-th within
 * window_cycles of the first one counted (a spin; counting starts over).
 * An exit after the window starts a new one.
 */
bool spin_sw_pause(struct spin_sw *s, const struct spin_sw_params *p, uint64_t now);

/*
 * A VM's PAUSE handling, from its spin parameters and what the CPU offers
 * (hw) and needs (backstop: PAUSE exits to preempt a guest spinning with
 * interrupts off, virt_ops pause_backstop).
 */
struct spin_choice {
    enum spin_detector detector;
    enum pause_exiting mode;
    bool backstop;                           /* PAUSE exits kept only for preemption, never spins */
    bool count_only;                         /* a pause filter without a threshold */
    const struct spin_window_params *window; /* the hardware window's, into p; NULL if none */
    /*
     * The window is a request only: L0 puts its own count and threshold into
     * the real VMCB (features.h pause_filter_by_l0). The caller sets it.
     */
    bool window_by_l0;
    uint32_t gap;
    struct spin_sw_params sw;
};

void spin_choose(const struct spin_params *p, enum pause_hw hw, bool backstop, uint64_t tsc_khz,
                 struct spin_choice *out);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lockup watchdog. Every CPU beats from its scheduler loop and from the
 * vCPU run loop, and a per-CPU timer (every watchdog_ms / 4) makes sure an
 * idle CPU or a guest that never exits still passes through one of them.
 * At each tick CPU i checks CPU i + 1 (the last checks CPU 0) with the rule
 * of sched/lockup.h; a CPU silent for watchdog_ms gets an NMI that prints
 * its registers and backtrace and @panic {"kind":"lockup",...}. With one
 * CPU there is nobody to check. watchdog_ms=0 turns it off.
 *
 * Its view on demand: an NMI from outside (QEMU's inject-nmi) makes every
 * CPU print where it is, its heartbeats, its run queue, and then every VM's
 * vCPUs (state, pending events, timer): tools/run.py asks for it when a run
 * times out, so a hang's log says what was waiting for what.
 */
#ifndef POLLUX_SCHED_WATCHDOG_H
#define POLLUX_SCHED_WATCHDOG_H

#include <stdint.h>

#include "arch/x86/percpu.h"

struct watchdog_params {
    uint64_t ms; /* watchdog_ms: silence that counts as a lockup; 0 = off */
};

extern struct watchdog_params watchdog_params;

/* On the boot CPU once every CPU is online: arm every CPU's tick. */
void watchdog_start(void);

/* What a state dump prints after the CPUs' lines (the VMs and their vCPUs); given at boot. */
void watchdog_set_dump(void (*dump)(void));

/* fault_test=4: make `cpu` spin with interrupts off from its timer interrupt, for good. */
void watchdog_test_lockup(unsigned cpu);

extern uint64_t watchdog_beats[MAX_CPUS];

/* This CPU is alive: called from the scheduler and vCPU loops. */
static inline void watchdog_beat(void)
{
    __atomic_add_fetch(&watchdog_beats[this_cpu()->cpu], 1, __ATOMIC_RELAXED);
}

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest profiler (profile_us=, docs/profile.md): what `perf kvm --guest
 * record` does for KVM. Every profile_us of host time, each running vCPU's
 * guest RIP is sampled at the exit its own timer makes (vmm/vcpu/vcpu.c), and
 * counted in its VM's table of RIPs, rounded down to PROFILE_GRAIN bytes;
 * samples taken in user mode are counted but not placed. When the VM stops,
 * `@profile` and `@profile_rips` lines print the table, and tools/guest_profile.py
 * names the RIPs with the guest kernel's symbols. The table is pure (host
 * unit tests: tests/unit/test_profile.c); sampling vCPUs of one VM on several
 * CPUs take its lock.
 */
#ifndef POLLUX_VMM_CONSOLE_PROFILE_H
#define POLLUX_VMM_CONSOLE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/spinlock.h"

#define PROFILE_SLOTS 4096 /* distinct RIPs a VM's table holds; a power of 2 */
#define PROFILE_GRAIN 16   /* bytes of guest code one slot covers */

struct profile_slot {
    uint64_t rip; /* the first byte of the PROFILE_GRAIN bytes it counts; 0 = free */
    uint64_t count;
};

struct profile {
    struct spinlock lock;
    uint64_t samples; /* every sample, in either mode */
    uint64_t user;    /* ... taken at CPL 3 */
    uint64_t lost;    /* ... at CPL 0-2 that found the table full */
    struct profile_slot slots[PROFILE_SLOTS];
};

#define PROFILE_PAGES ((sizeof(struct profile) + 4095) / 4096)

/* Count a sample of rip, taken in user mode or not. Takes p->lock. */
void profile_add(struct profile *p, uint64_t rip, bool user);

/*
 * The used slots in table order, from *cursor (0 at first): the next one, or
 * NULL when there are no more. For printing once the VM has stopped.
 */
const struct profile_slot *profile_next(const struct profile *p, unsigned *cursor);

/* profile_us=: the sampling period in us of host time, 0 = no profile (the default). */
#define PROFILE_US_MAX 1000000
extern uint64_t profile_us;

struct vm;

/* The VM's @profile line and its @profile_rips lines; nothing without a profile. */
void profile_print(const struct vm *vm, const struct profile *p, uint64_t period_us);

#endif

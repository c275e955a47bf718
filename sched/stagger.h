/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Seeded start staggering (seed=, seed_stagger_us=): each vCPU's first
 * entry waits a pseudo-random number of microseconds drawn from the seed,
 * its VM and its index. Under Bochs's deterministic clock a run repeats
 * exactly; a different seed shifts every vCPU against the others, and so
 * changes the interleaving a benchmark measures. Pure: unit-tested on the
 * host (tests/unit/test_stagger.c).
 */
#ifndef POLLUX_SCHED_STAGGER_H
#define POLLUX_SCHED_STAGGER_H

#include <stdint.h>

/*
 * The delay of vCPU vcpu of the VM of module vm_index, in [0, max_us]
 * microseconds; 0 for seed 0 (no staggering). Different seeds give
 * independent draws (splitmix64 over the three inputs).
 */
uint64_t stagger_us(uint64_t seed, unsigned vm_index, unsigned vcpu, uint64_t max_us);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A unit test's pseudo-random numbers: xorshift64, from a seed the test
 * sets in rng_state, so that every run draws the same cases.
 */
#ifndef POLLUX_TESTS_UNIT_TEST_RNG_H
#define POLLUX_TESTS_UNIT_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

#endif

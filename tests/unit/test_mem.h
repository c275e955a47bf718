/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Little-endian stores and loads in a unit test's guest memory: the test
 * defines `uint8_t mem[]` before including this.
 */
#ifndef POLLUX_TESTS_UNIT_TEST_MEM_H
#define POLLUX_TESTS_UNIT_TEST_MEM_H

#include <stdint.h>
#include <string.h>

static inline void put32(uint64_t at, uint32_t v)
{
    memcpy(mem + at, &v, sizeof(v));
}

static inline void put64(uint64_t at, uint64_t v)
{
    memcpy(mem + at, &v, sizeof(v));
}

static inline uint64_t get64(uint64_t at)
{
    uint64_t v;
    memcpy(&v, mem + at, sizeof(v));
    return v;
}

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
#include "lib/checksum.h"

#define FNV_PRIME 0x100000001b3ull

uint64_t checksum_update(uint64_t sum, const void *data, size_t len)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++)
        sum = (sum ^ p[i]) * FNV_PRIME;
    return sum;
}

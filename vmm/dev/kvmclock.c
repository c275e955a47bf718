/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/kvmclock.h"

#include "lib/bytes.h"
#include "lib/string.h"

#define NSEC_PER_SEC 1000000000ull

struct pvclock_scale pvclock_scale_for(uint64_t tsc_khz)
{
    /* Bring the rate into (1e9, 2e9] Hz by a power of two, so mul lies in [2^31, 2^32). */
    uint64_t hz = tsc_khz * 1000;
    int shift = 0;
    if (hz == 0)
        return (struct pvclock_scale){0, 0};
    while (hz > 2 * NSEC_PER_SEC) {
        hz >>= 1;
        shift--;
    }
    while (hz <= NSEC_PER_SEC) {
        hz <<= 1;
        shift++;
    }
    return (struct pvclock_scale){(uint32_t)((NSEC_PER_SEC << 32) / hz), (int8_t)shift};
}

uint64_t pvclock_scale_delta(uint64_t delta, struct pvclock_scale s)
{
    if (s.shift < 0)
        delta >>= -s.shift;
    else
        delta <<= s.shift;
    /* The 96-bit product's upper 64 bits, in two halves. */
    uint64_t lo = (delta & 0xffffffffu) * s.mul, hi = (delta >> 32) * s.mul;
    return hi + (lo >> 32);
}

uint64_t pvclock_tsc_timestamp(uint64_t tsc_offset, uint64_t kvmclock_offset)
{
    return tsc_offset - kvmclock_offset;
}

void pvclock_write_time_info(uint8_t *p, uint32_t *version, uint64_t tsc_khz,
                             uint64_t tsc_timestamp)
{
    struct pvclock_scale s = pvclock_scale_for(tsc_khz);
    put_le32(p, ++*version);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memset(p + 4, 0, PVCLOCK_TIME_INFO_SIZE - 4);
    put_le64(p + 8, tsc_timestamp);
    put_le32(p + 24, s.mul);
    p[28] = (uint8_t)s.shift;
    p[29] = PVCLOCK_TSC_STABLE_BIT;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    put_le32(p, ++*version);
}

void pvclock_write_wall_clock(uint8_t *p, uint32_t *version)
{
    put_le32(p, ++*version);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    put_le32(p + 4, 0); /* seconds since the epoch at kvmclock 0 */
    put_le32(p + 8, 0); /* nanoseconds */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    put_le32(p, ++*version);
}

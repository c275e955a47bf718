/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vcpu/tsc_sync.h"

/* |value - expected| < tsc_hz, wrap-safe: the guest chooses its values. */
static bool within_a_second(uint64_t value, uint64_t expected, uint64_t tsc_hz)
{
    uint64_t ahead = value - expected;
    return ahead < tsc_hz || -ahead < tsc_hz;
}

struct tsc_write tsc_synchronize(struct tsc_sync *s, uint64_t *vcpu_generation, uint64_t value,
                                 bool creating, uint64_t host_tsc, uint64_t tsc_hz)
{
    uint64_t elapsed = host_tsc - s->last_host_tsc;
    bool synchronizing =
        s->generation && (creating || within_a_second(value, s->last_write + elapsed, tsc_hz));
    struct tsc_write w = {synchronizing ? s->cur_offset : value - host_tsc, synchronizing};
    s->last_write = value;
    s->last_host_tsc = host_tsc;
    if (!synchronizing) {
        s->generation++;
        s->cur_offset = w.offset;
        s->nr_matched = 0;
    } else if (*vcpu_generation != s->generation) {
        s->nr_matched++;
    }
    *vcpu_generation = s->generation;
    return w;
}

bool tsc_sync_all_matched(const struct tsc_sync *s, unsigned nvcpus)
{
    return s->nr_matched + 1 == nvcpus;
}

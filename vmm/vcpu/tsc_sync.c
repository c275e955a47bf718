/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vcpu/tsc_sync.h"

uint64_t tsc_create(struct tsc_sync *s, uint64_t host_tsc)
{
    if (!s->begun) {
        s->offset = -host_tsc;
        s->begun = true;
    }
    return s->offset;
}

void tsc_write(uint64_t *offset, uint64_t *adjust, uint64_t value, uint64_t host_tsc)
{
    /* Modular: the guest chooses its values, and a step back is a step forward mod 2^64. */
    uint64_t step = value - (host_tsc + *offset);
    *offset += step;
    *adjust += step;
}

void tsc_adjust_write(uint64_t *offset, uint64_t *adjust, uint64_t value)
{
    *offset += value - *adjust;
    *adjust = value;
}

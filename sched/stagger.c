/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/stagger.h"

/* splitmix64's finaliser (Steele, Lea, Flood 2014): every input bit moves every output bit. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t stagger_us(uint64_t seed, unsigned vm_index, unsigned vcpu, uint64_t max_us)
{
    if (!seed || !max_us)
        return 0;
    uint64_t h = mix(seed + 0x9e3779b97f4a7c15ull);
    h = mix(h ^ ((uint64_t)vm_index << 32 | vcpu));
    return h % (max_us + 1);
}

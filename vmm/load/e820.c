/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/load/e820.h"

unsigned e820_build(struct e820_entry map[E820_MAX], uint64_t mem_size)
{
    unsigned n = 0;
    map[n++] = (struct e820_entry){0, E820_LOW_MEM_END, E820_RAM};
    map[n++] = (struct e820_entry){E820_LOW_MEM_END, E820_HIGH_MEM_START - E820_LOW_MEM_END,
                                   E820_RESERVED};
    if (mem_size > E820_HIGH_MEM_START)
        map[n++] =
            (struct e820_entry){E820_HIGH_MEM_START, mem_size - E820_HIGH_MEM_START, E820_RAM};
    return n;
}

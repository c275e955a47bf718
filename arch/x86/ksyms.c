/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/ksyms.h"

struct ksym {
    uint64_t addr;
    const char *name;
};

/* Emitted by tools/gensyms.py, sorted by address; empty in the first link. */
extern const uint64_t ksyms_count;
extern const struct ksym ksyms_table[];
extern const char __text_end[];

const char *ksyms_lookup(uint64_t addr, uint64_t *offset)
{
    if (ksyms_count == 0 || addr < ksyms_table[0].addr || addr >= (uint64_t)__text_end)
        return 0;
    uint64_t lo = 0, hi = ksyms_count; /* find the last symbol <= addr */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ksyms_table[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    *offset = addr - ksyms_table[lo].addr;
    return ksyms_table[lo].name;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Physical page allocator: one bit per 4 KiB page, set = in use.
 *
 * Contract: pmm_init takes the loader's memory map and a list of ranges that
 * must never be handed out (kernel image, modules, boot info, low memory).
 * Only MEM_USABLE pages minus the reserved ranges become free. The bitmap
 * itself is placed in usable memory below 4 GiB and reserved. Page 0 is never
 * free, so 0 means failure. Overlapping or unsorted memory-map entries are
 * handled (a page is usable only if no non-usable entry covers it).
 */
#ifndef POLLUX_ARCH_X86_PMM_H
#define POLLUX_ARCH_X86_PMM_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/bootinfo.h"

#define PAGE_SIZE 4096ull
#define TWO_MIB   (2ull << 20)
#define FOUR_GIB  (1ull << 32)

struct phys_range {
    uint64_t start, end; /* [start, end), need not be aligned */
};

struct pmm {
    uint64_t *bitmap;
    uint64_t npages; /* pages covered by the bitmap (up to the top of usable memory) */
    uint64_t nfree;
    uint64_t bitmap_phys;
    uint64_t hint; /* page index where the next search starts */
};

/* Returns a pointer through which phys can be written, for the bitmap. */
typedef void *(*phys_to_virt_fn)(uint64_t phys, void *ctx);

int pmm_init(struct pmm *p, const struct mem_range *map, unsigned nmap,
             const struct phys_range *reserved, unsigned nreserved, phys_to_virt_fn to_virt,
             void *ctx, char *err, size_t errlen);

/*
 * Allocate npages contiguous pages aligned to align bytes (a power of two,
 * at least PAGE_SIZE), ending at or below limit (0 = no limit). Returns the
 * physical address, or 0 when no such run is free. The memory is not zeroed.
 */
uint64_t pmm_alloc(struct pmm *p, uint64_t npages, uint64_t align, uint64_t limit);

/* Free a run previously allocated; freeing a free page is a caller bug and is ignored. */
void pmm_free(struct pmm *p, uint64_t phys, uint64_t npages);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host memory: the physical page allocator instance and the host page tables.
 * pollux runs identity mapped (virtual == physical) so a physical address is
 * also a pointer, within the mapped range.
 */
#ifndef POLLUX_ARCH_X86_MM_H
#define POLLUX_ARCH_X86_MM_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/pmm.h"
#include "arch/x86/bootinfo.h"

extern struct pmm host_pmm;
extern uint64_t kernel_cr3; /* final host page tables, loaded on every CPU */

/* Set up the allocator from the boot information; panics on failure. */
void mm_init(const struct boot_info *bi);

/*
 * Build the final identity map with W^X (text RX, rodata R, data and bss RW
 * NX, everything else NX; page 0 unmapped to catch NULL) and switch to it.
 */
void mm_init_paging(const struct boot_info *bi);

/*
 * Take the 4 KiB page out of the final map (a stack's guard page), splitting
 * the 2 MiB page that holds it; this CPU's TLB is flushed for it. A CPU that
 * already runs may keep a stale translation: only a page that CPU never
 * touches suits, or one whose CPU has yet to load kernel_cr3. -1 if it was
 * not mapped or no page is left for the split.
 */
int mm_unmap_page(void *page);

/* Zeroed pages below 4 GiB (so they also suit 32-bit fields), NULL if none left. */
void *page_alloc_zeroed(uint64_t npages);

/*
 * Page tables in host memory (host paging, NPT, EPT): tables come from the
 * page allocator below 4 GiB and are reached through the identity map.
 * pt_destroy(pt, mm_free_table) gives them back.
 */
struct pagetable;
struct pt_format;
void mm_pagetable_init(struct pagetable *pt, const struct pt_format *fmt);
void mm_free_table(uint64_t pa, void *ctx);

/* phys_map_fn for the boot-info and ACPI parsers: NULL outside mapped memory. */
const void *phys_map(uint64_t phys, size_t len, void *ctx);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A generic 4-level page-table builder. The entry encoding comes from a
 * format (host/NPT x86 entries, or EPT entries), so the host page tables, AMD
 * nested page tables and Intel EPT share one walker.
 *
 * Contract: pt_map maps [va, va+len) to [pa, pa+len) using the largest pages
 * the alignment of va, pa and the remaining length allow (up to max_level),
 * allocating tables on demand. It never splits an existing large page and
 * never replaces an existing mapping: either returns -1 (nothing about
 * already-mapped parts is undone).
 */
#ifndef POLLUX_ARCH_X86_PAGETABLE_H
#define POLLUX_ARCH_X86_PAGETABLE_H

#include <stdbool.h>
#include <stdint.h>

/* Access rights and memory type of a mapping. */
#define PT_READ  (1u << 0)
#define PT_WRITE (1u << 1)
#define PT_EXEC  (1u << 2)
#define PT_USER  (1u << 3) /* x86 U/S; NPT requires it on every level */
#define PT_UC    (1u << 4) /* uncacheable (MMIO) instead of write-back */

enum pt_level { PT_4K = 0, PT_2M = 1, PT_1G = 2 };

struct pt_format {
    /* Entry for a table at pa, as seen from the level above. */
    uint64_t (*table)(uint64_t pa);
    /* Leaf entry mapping pa at the given level. */
    uint64_t (*leaf)(uint64_t pa, unsigned perms, enum pt_level level);
    bool (*present)(uint64_t e);
    bool (*large)(uint64_t e); /* a leaf at level 2M or 1G */
    /* Decode a leaf back to its permissions, for lookups and tests. */
    unsigned (*perms)(uint64_t e);
};

extern const struct pt_format pt_format_x86;    /* host paging and AMD NPT */
extern const struct pt_format pt_format_x86_nx; /* host paging with EFER.NXE */

struct pagetable {
    const struct pt_format *fmt;
    uint64_t root; /* physical address of the PML4 */
    /* A zeroed 4 KiB page: its physical address (0 on failure). */
    uint64_t (*alloc_table)(void *ctx);
    void *(*to_virt)(uint64_t pa, void *ctx);
    void *ctx;
};

/* Allocate the root; -1 if out of memory. */
int pt_init(struct pagetable *pt);
int pt_map(struct pagetable *pt, uint64_t va, uint64_t pa, uint64_t len, unsigned perms,
           enum pt_level max_level);
/*
 * Unmap the 4 KiB page at va. A 2 MiB or 1 GiB leaf that holds it is split
 * first into next-smaller pages with the rights the format's perms() decodes,
 * the new table filled before the entry above points to it, so a translation
 * another CPU still caches is the same one. -1 if va is unaligned or not
 * mapped, or a table cannot be allocated (nothing changed then). The caller
 * flushes the TLB.
 */
int pt_unmap_page(struct pagetable *pt, uint64_t va);
/* Free every table (not the mapped memory), root included. */
void pt_destroy(struct pagetable *pt, void (*free_table)(uint64_t pa, void *ctx));

/* Translate va; false if unmapped. */
bool pt_lookup(const struct pagetable *pt, uint64_t va, uint64_t *pa, unsigned *perms,
               enum pt_level *level);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/pagetable.h"

#define X86_P     (1ull << 0)
#define X86_RW    (1ull << 1)
#define X86_US    (1ull << 2)
#define X86_PWT   (1ull << 3)
#define X86_PCD   (1ull << 4)
#define X86_PS    (1ull << 7)
#define X86_NX    (1ull << 63)
#define ADDR_MASK 0x000ffffffffff000ull

static uint64_t x86_table(uint64_t pa)
{
    /* Upper levels grant everything; the leaf decides. */
    return pa | X86_P | X86_RW | X86_US;
}

static uint64_t x86_leaf_common(uint64_t pa, unsigned perms, enum pt_level level)
{
    uint64_t e = pa | X86_P;
    if (perms & PT_WRITE)
        e |= X86_RW;
    if (perms & PT_USER)
        e |= X86_US;
    if (perms & PT_UC)
        e |= X86_PCD | X86_PWT;
    if (level != PT_4K)
        e |= X86_PS;
    return e;
}

static uint64_t x86_leaf_nx(uint64_t pa, unsigned perms, enum pt_level level)
{
    uint64_t e = x86_leaf_common(pa, perms, level);
    return (perms & PT_EXEC) ? e : e | X86_NX;
}

static bool x86_present(uint64_t e)
{
    return e & X86_P;
}

static bool x86_large(uint64_t e)
{
    return e & X86_PS;
}

static unsigned x86_perms(uint64_t e)
{
    unsigned p = PT_READ;
    if (e & X86_RW)
        p |= PT_WRITE;
    if (!(e & X86_NX))
        p |= PT_EXEC;
    if (e & X86_US)
        p |= PT_USER;
    if (e & X86_PCD)
        p |= PT_UC;
    return p;
}

const struct pt_format pt_format_x86 = {x86_table, x86_leaf_common, x86_present, x86_large,
                                        x86_perms};
const struct pt_format pt_format_x86_nx = {x86_table, x86_leaf_nx, x86_present, x86_large,
                                           x86_perms};

static inline unsigned shift_of(int level)
{
    return 12 + 9 * (unsigned)level;
}

static inline uint64_t *table_at(const struct pagetable *pt, uint64_t pa)
{
    return pt->to_virt(pa, pt->ctx);
}

int pt_init(struct pagetable *pt)
{
    pt->root = pt->alloc_table(pt->ctx);
    return pt->root ? 0 : -1;
}

/* Walk to the table holding the entry for va at `level`, creating tables. */
static uint64_t *entry_for(struct pagetable *pt, uint64_t va, int level)
{
    uint64_t *table = table_at(pt, pt->root);
    for (int l = 3; l > level; l--) {
        uint64_t *e = &table[(va >> shift_of(l)) & 511];
        if (!pt->fmt->present(*e)) {
            uint64_t t = pt->alloc_table(pt->ctx);
            if (!t)
                return 0;
            *e = pt->fmt->table(t);
        } else if (pt->fmt->large(*e)) {
            return 0;
        }
        table = table_at(pt, *e & ADDR_MASK);
    }
    return &table[(va >> shift_of(level)) & 511];
}

int pt_map(struct pagetable *pt, uint64_t va, uint64_t pa, uint64_t len, unsigned perms,
           enum pt_level max_level)
{
    if ((va | pa | len) & 0xfff)
        return -1;
    while (len) {
        int level = max_level;
        while (level > PT_4K) {
            uint64_t size = 1ull << shift_of(level);
            if (!((va | pa) & (size - 1)) && len >= size)
                break;
            level--;
        }
        uint64_t *e = entry_for(pt, va, level);
        if (!e || pt->fmt->present(*e))
            return -1;
        *e = pt->fmt->leaf(pa, perms, (enum pt_level)level);
        uint64_t size = 1ull << shift_of(level);
        va += size;
        pa += size;
        len -= size;
    }
    return 0;
}

/* Replace the large leaf *e at `level` with a table of leaves one level down. */
static int split_large(struct pagetable *pt, uint64_t *e, int level)
{
    uint64_t t = pt->alloc_table(pt->ctx);
    if (!t)
        return -1;
    uint64_t *table = table_at(pt, t);
    uint64_t size = 1ull << shift_of(level);
    uint64_t base = *e & ADDR_MASK & ~(size - 1);
    unsigned perms = pt->fmt->perms(*e);
    uint64_t step = 1ull << shift_of(level - 1);
    for (unsigned i = 0; i < 512; i++)
        table[i] = pt->fmt->leaf(base + i * step, perms, (enum pt_level)(level - 1));
    __atomic_store_n(e, pt->fmt->table(t), __ATOMIC_RELEASE);
    return 0;
}

int pt_unmap_page(struct pagetable *pt, uint64_t va)
{
    if (va & 0xfff)
        return -1;
    uint64_t *table = table_at(pt, pt->root);
    for (int l = 3; l > 0; l--) {
        uint64_t *e = &table[(va >> shift_of(l)) & 511];
        if (!pt->fmt->present(*e))
            return -1;
        if (pt->fmt->large(*e) && split_large(pt, e, l))
            return -1;
        table = table_at(pt, *e & ADDR_MASK);
    }
    uint64_t *e = &table[(va >> shift_of(PT_4K)) & 511];
    if (!pt->fmt->present(*e))
        return -1;
    __atomic_store_n(e, 0, __ATOMIC_RELEASE);
    return 0;
}

bool pt_lookup(const struct pagetable *pt, uint64_t va, uint64_t *pa, unsigned *perms,
               enum pt_level *level)
{
    const uint64_t *table = table_at(pt, pt->root);
    for (int l = 3; l >= 0; l--) {
        uint64_t e = table[(va >> shift_of(l)) & 511];
        if (!pt->fmt->present(e))
            return false;
        if (l == 0 || pt->fmt->large(e)) {
            uint64_t size = 1ull << shift_of(l);
            *pa = (e & ADDR_MASK & ~(size - 1)) | (va & (size - 1));
            *perms = pt->fmt->perms(e);
            *level = (enum pt_level)l;
            return true;
        }
        table = table_at(pt, e & ADDR_MASK);
    }
    return false;
}

static void destroy_level(struct pagetable *pt, uint64_t table_pa, int level,
                          void (*free_table)(uint64_t pa, void *ctx))
{
    const uint64_t *table = table_at(pt, table_pa);
    for (unsigned i = 0; level > 0 && i < 512; i++)
        if (pt->fmt->present(table[i]) && !pt->fmt->large(table[i]))
            destroy_level(pt, table[i] & ADDR_MASK, level - 1, free_table);
    free_table(table_pa, pt->ctx);
}

void pt_destroy(struct pagetable *pt, void (*free_table)(uint64_t pa, void *ctx))
{
    if (pt->root)
        destroy_level(pt, pt->root, 3, free_table);
    pt->root = 0;
}

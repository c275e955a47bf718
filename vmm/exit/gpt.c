/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/gpt.h"

#include "arch/x86/regs.h"

#define PTE_RW (1ull << 1)
#define PTE_US (1ull << 2)
#define PTE_XD (1ull << 63)

/* PAE entries reserve bits 62:MAXPHYADDR; 4-level entries leave 62:52 to software. */
#define PAE_HIGH_RSVD 0x7ff0000000000000ull
/*
 * PAE PDPTEs carry no rights or PS: bits 2:1, 8:6 and 63:MAXPHYADDR are
 * reserved. Intel also reserves bit 5, but AMD CPUs (and QEMU's model of
 * them) set it as an accessed bit, so it is allowed.
 */
#define PAE_PDPTE_RSVD (0xfff0000000000000ull | 0x1c6ull)
/* A 4 MiB PDE: bits 20:13 are physical bits 39:32 (PSE-36), bit 21 is reserved. */
#define PDE4M_RSVD (1u << 21)

/*
 * Rights accumulated over a walk: R/W and U/S grant only if every level
 * grants, XD forbids if any level does. Kept as an AND and an OR of the
 * entries so each level adds one line.
 */
struct rights {
    uint64_t all, any;
};

static inline void accumulate(struct rights *r, uint64_t e)
{
    r->all &= e;
    r->any |= e;
}

static inline __attribute__((always_inline)) enum gpt_result walk32(const struct gpt_mode *m,
                                                                    uint32_t la, gpt_read_fn read,
                                                                    void *ctx, struct rights *r,
                                                                    uint64_t *pa)
{
    uint32_t pde, pte;
    if (!read(((uint32_t)m->cr3 & 0xfffff000u) + (la >> 22) * 4, &pde, 4, ctx))
        return GPT_BAD_TABLE;
    if (!(pde & GPT_PTE_P))
        return GPT_NOT_PRESENT;
    accumulate(r, pde);
    /* Without CR4.PSE the PS bit is ignored and the PDE points to a table. */
    if ((m->cr4 & GPT_CR4_PSE) && (pde & GPT_PTE_PS)) {
        if (pde & PDE4M_RSVD)
            return GPT_RESERVED;
        *pa = ((uint64_t)((pde >> 13) & 0xff) << 32) | (pde & 0xffc00000u) | (la & 0x3fffffu);
        return GPT_OK;
    }
    if (!read((pde & 0xfffff000u) + ((la >> 12) & 0x3ff) * 4, &pte, 4, ctx))
        return GPT_BAD_TABLE;
    if (!(pte & GPT_PTE_P))
        return GPT_NOT_PRESENT;
    accumulate(r, pte);
    *pa = (pte & 0xfffff000u) | (la & 0xfffu);
    return GPT_OK;
}

/*
 * PAE, 4-level and 5-level paging share 8-byte entries and 9-bit indices:
 * 5-level paging adds a PML5 above the PML4 (CR4.LA57), and PAE is the walk
 * started at level 3 with a 4-entry PDPT (the linear address is 32 bits, so
 * the level-3 index is at most 3) whose entries differ.
 */
static inline __attribute__((always_inline)) enum gpt_result walk64(const struct gpt_mode *m,
                                                                    bool pae, uint64_t la,
                                                                    gpt_read_fn read, void *ctx,
                                                                    struct rights *r, uint64_t *pa)
{
    uint64_t high_rsvd = pae ? PAE_HIGH_RSVD : 0;
    if (!(m->efer & EFER_NXE))
        high_rsvd |= PTE_XD;
    uint64_t table = pae ? (uint32_t)m->cr3 & 0xffffffe0u : m->cr3 & GPT_ADDR_MASK;
    for (int level = pae ? 3 : (m->cr4 & GPT_CR4_LA57) ? 5 : 4;; level--) {
        unsigned shift = 12 + 9 * (level - 1);
        uint64_t e;
        if (!read(table + ((la >> shift) & 511) * 8, &e, 8, ctx))
            return GPT_BAD_TABLE;
        if (!(e & GPT_PTE_P))
            return GPT_NOT_PRESENT;
        if (pae && level == 3) {
            if (e & PAE_PDPTE_RSVD)
                return GPT_RESERVED;
            table = e & GPT_ADDR_MASK;
            continue;
        }
        /* Bit 7 of a PTE is PAT, not PS; PML4Es and PML5Es cannot map pages. */
        bool leaf = level == 1 || (level < 4 && (e & GPT_PTE_PS));
        uint64_t rsvd = high_rsvd;
        if (level >= 4)
            rsvd |= GPT_PTE_PS;
        else if (leaf && level > 1)
            rsvd |= ((1ull << shift) - 1) & ~0x1fffull; /* above PAT (bit 12) */
        if (e & rsvd)
            return GPT_RESERVED;
        accumulate(r, e);
        if (leaf) {
            uint64_t offset = (1ull << shift) - 1;
            *pa = (e & GPT_ADDR_MASK & ~offset) | (la & offset);
            return GPT_OK;
        }
        table = e & GPT_ADDR_MASK;
    }
}

/*
 * The walk, made once per reader: through the caller's callback
 * (gpt_translate) and straight from one range of guest RAM
 * (gpt_translate_ram), where each level is a bounds check and a load.
 */
static inline __attribute__((always_inline)) enum gpt_result
translate(const struct gpt_mode *m, uint64_t linear, unsigned access, gpt_read_fn read, void *ctx,
          uint64_t *gpa)
{
    if (!(m->cr0 & GPT_CR0_PG)) {
        *gpa = linear & 0xffffffffu;
        return GPT_OK;
    }
    struct rights r = {.all = ~0ull, .any = 0};
    uint64_t pa;
    enum gpt_result res;
    if (m->efer & GPT_EFER_LMA)
        res = walk64(m, false, linear, read, ctx, &r, &pa);
    else if (m->cr4 & GPT_CR4_PAE)
        res = walk64(m, true, (uint32_t)linear, read, ctx, &r, &pa);
    else
        res = walk32(m, (uint32_t)linear, read, ctx, &r, &pa);
    if (res != GPT_OK)
        return res;
    bool user = m->cpl == 3;
    if ((access & GPT_ACCESS_WRITE) && !(r.all & PTE_RW) && (user || (m->cr0 & CR0_WP)))
        return GPT_PROTECTION;
    if (user && !(r.all & PTE_US))
        return GPT_PROTECTION;
    /* XD reaches here only with EFER.NXE; without it the bit was reserved. */
    if ((access & GPT_ACCESS_FETCH) && (r.any & PTE_XD))
        return GPT_PROTECTION;
    *gpa = pa;
    return GPT_OK;
}

enum gpt_result gpt_translate(const struct gpt_mode *m, uint64_t linear, unsigned access,
                              gpt_read_fn read, void *ctx, uint64_t *gpa)
{
    return translate(m, linear, access, read, ctx, gpa);
}

static inline bool read_ram(uint64_t gpa, void *buf, size_t len, void *ctx)
{
    const struct gpt_ram *ram = ctx;
    if (gpa >= ram->size || len > ram->size - gpa)
        return false;
    if (len == 8)
        *(uint64_t *)buf = *(const uint64_t *)(ram->base + gpa);
    else
        *(uint32_t *)buf = *(const uint32_t *)(ram->base + gpa);
    return true;
}

enum gpt_result gpt_translate_ram(const struct gpt_mode *m, uint64_t linear, unsigned access,
                                  const struct gpt_ram *ram, uint64_t *gpa)
{
    return translate(m, linear, access, read_ram, (void *)ram, gpa);
}

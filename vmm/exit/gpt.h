/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Guest page-table walker: linear (virtual) to guest-physical addresses for
 * the x86 paging modes: paging off, 32-bit (with CR4.PSE 4 MiB pages), PAE
 * (3 levels, 2 MiB pages), and 4-level or, with CR4.LA57, 5-level long mode
 * (2 MiB and 1 GiB pages).
 * It reads guest tables through a callback (so it runs in host unit tests)
 * or, for the hypervisor, straight from guest RAM: the same walk either way.
 *
 * Contract: gpt_translate returns 0 and the gpa, or a GPT_* failure: a
 * non-present entry, reserved bits set where the mode defines them
 * (including NX when EFER.NXE is clear), an access the rights forbid (write
 * to a read-only page when CR0.WP or CPL 3; user access to a supervisor
 * page; fetch from an NX page) or a table read the callback refuses. With
 * paging off the linear address is the gpa (truncated to 32 bits).
 */
#ifndef POLLUX_VMM_EXIT_GPT_H
#define POLLUX_VMM_EXIT_GPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gpt_mode {
    uint64_t cr0, cr3, cr4, efer;
    unsigned cpl; /* 0..3 */
};

#define GPT_ACCESS_WRITE (1u << 0)
#define GPT_ACCESS_FETCH (1u << 1)

enum gpt_result {
    GPT_OK = 0,
    GPT_NOT_PRESENT = -1,
    GPT_RESERVED = -2,
    GPT_PROTECTION = -3,
    GPT_BAD_TABLE = -4, /* the callback could not read a table entry */
};

/* Read len (4 or 8) bytes of guest-physical memory; false if not RAM. */
typedef bool (*gpt_read_fn)(uint64_t gpa, void *buf, size_t len, void *ctx);

enum gpt_result gpt_translate(const struct gpt_mode *m, uint64_t linear, unsigned access,
                              gpt_read_fn read, void *ctx, uint64_t *gpa);

/* Guest RAM as one host range: guest-physical 0 at base, size bytes. */
struct gpt_ram {
    const uint8_t *base;
    uint64_t size;
};

/* gpt_translate reading the tables from ram directly: the same results, no call per level. */
enum gpt_result gpt_translate_ram(const struct gpt_mode *m, uint64_t linear, unsigned access,
                                  const struct gpt_ram *ram, uint64_t *gpa);

/* The bits the fetch walk below reads. */
#define GPT_CR0_PG    (1ull << 31)
#define GPT_CR4_PSE   (1ull << 4)
#define GPT_CR4_PAE   (1ull << 5)
#define GPT_CR4_LA57  (1ull << 12)
#define GPT_EFER_LMA  (1ull << 10)
#define GPT_PTE_P     (1ull << 0)
#define GPT_PTE_PS    (1ull << 7)
#define GPT_ADDR_MASK 0x000ffffffffff000ull /* bits 51:12 of 8-byte entries: MAXPHYADDR 52 */

/*
 * What a fetch walk with 8-byte entries read (vmm/exit/gpt_memo.h remembers it):
 * per level, top first (slot 0 the PML5E, 1 the PML4E, 2 the PDPTE, 3 the
 * PDE, 4 the PTE), the host address of the entry and the value found
 * there. The slots of the levels a walk does not read point at their own
 * value (gpt_fetch_unused), so that every slot can be checked alike.
 */
#define GPT_FETCH_LEVELS 5

struct gpt_fetch_record {
    const uint64_t *entry_at[GPT_FETCH_LEVELS];
    uint64_t entry[GPT_FETCH_LEVELS];
};

/*
 * The entry at gpa: false when it does not lie in ram or is not present. gpa
 * is below 2^53 (a 52-bit table address plus an index): gpa + 8 cannot wrap.
 * With rec, the entry is recorded in slot (whether present or not).
 */
static inline __attribute__((always_inline)) bool gpt_fetched_entry_at(const struct gpt_ram *ram,
                                                                       uint64_t gpa, uint64_t *e,
                                                                       struct gpt_fetch_record *rec,
                                                                       unsigned slot)
{
    if (gpa + 8 > ram->size)
        return false;
    const uint64_t *at = (const uint64_t *)(ram->base + gpa);
    *e = *at;
    if (rec) {
        rec->entry_at[slot] = at;
        rec->entry[slot] = *e;
    }
    return *e & GPT_PTE_P;
}

/* A slot of rec for a level the walk does not read: its check compares the slot with itself. */
static inline __attribute__((always_inline)) void gpt_fetch_unused(struct gpt_fetch_record *rec,
                                                                   unsigned slot)
{
    if (rec)
        rec->entry_at[slot] = &rec->entry[slot];
}

/* The same for 32-bit paging's 4-byte entries (never recorded). */
static inline bool gpt_fetched_entry32_at(const struct gpt_ram *ram, uint64_t gpa, uint32_t *e)
{
    if (gpa + 4 > ram->size)
        return false;
    *e = *(const uint32_t *)(ram->base + gpa);
    return *e & GPT_PTE_P;
}

/* The entry for linear in the table at table, whose index starts at bit shift of linear. */
static inline __attribute__((always_inline)) bool gpt_fetched_entry(const struct gpt_ram *ram,
                                                                    uint64_t table, uint64_t linear,
                                                                    unsigned shift, uint64_t *e,
                                                                    struct gpt_fetch_record *rec)
{
    return gpt_fetched_entry_at(ram, (table & GPT_ADDR_MASK) + ((linear >> shift) & 511) * 8, e,
                                rec, GPT_FETCH_LEVELS - 1 - (shift - 12) / 9);
}

static inline uint64_t gpt_fetched_page(uint64_t e, uint64_t linear, unsigned shift)
{
    uint64_t offset = (1ull << shift) - 1;
    return (e & GPT_ADDR_MASK & ~offset) | (linear & offset);
}

/* Whether m's walk reads 8-byte entries (PAE, 4- and 5-level paging): the ones a record holds. */
static inline bool gpt_walk_has_8_byte_entries(const struct gpt_mode *m)
{
    return (m->cr0 & GPT_CR0_PG) && (m->cr4 & GPT_CR4_PAE || m->efer & GPT_EFER_LMA);
}

/*
 * gpt_translate_fetched (below), recording into rec (when not NULL, and only
 * for a walk with 8-byte entries, gpt_walk_has_8_byte_entries) each entry it
 * reads, in its level's slot, and marking the others unused.
 */
static inline __attribute__((always_inline)) bool
gpt_fetched_walk(const struct gpt_mode *m, uint64_t linear, const struct gpt_ram *ram,
                 uint64_t *gpa, struct gpt_fetch_record *rec)
{
    if (!(m->cr0 & GPT_CR0_PG)) {
        *gpa = linear & 0xffffffffu;
        return true;
    }
    uint64_t e;
    if (m->efer & GPT_EFER_LMA) {
        e = m->cr3;
        if (!(m->cr4 & GPT_CR4_LA57))
            gpt_fetch_unused(rec, 0);
        else if (!gpt_fetched_entry(ram, e, linear, 48, &e, rec) || (e & GPT_PTE_PS))
            return false;
        if (!gpt_fetched_entry(ram, e, linear, 39, &e, rec) || (e & GPT_PTE_PS) ||
            !gpt_fetched_entry(ram, e, linear, 30, &e, rec))
            return false;
        if (e & GPT_PTE_PS) {
            gpt_fetch_unused(rec, 3);
            gpt_fetch_unused(rec, 4);
            *gpa = gpt_fetched_page(e, linear, 30);
            return true;
        }
    } else if (m->cr4 & GPT_CR4_PAE) {
        linear = (uint32_t)linear;
        uint64_t pdpte_at = ((uint32_t)m->cr3 & 0xffffffe0u) + (linear >> 30) * 8;
        gpt_fetch_unused(rec, 0);
        gpt_fetch_unused(rec, 1);
        if (!gpt_fetched_entry_at(ram, pdpte_at, &e, rec, 2) || (e & GPT_PTE_PS))
            return false;
    } else {
        uint32_t la = (uint32_t)linear, pde, pte;
        uint64_t pde_at = ((uint32_t)m->cr3 & 0xfffff000u) + (la >> 22) * 4;
        if (!gpt_fetched_entry32_at(ram, pde_at, &pde))
            return false;
        if ((m->cr4 & GPT_CR4_PSE) && (pde & GPT_PTE_PS)) {
            /* PDE bits 20:13 are physical bits 39:32 (PSE-36). */
            *gpa = (uint64_t)((pde >> 13) & 0xff) << 32 | (pde & 0xffc00000u) | (la & 0x3fffffu);
            return true;
        }
        uint64_t pte_at = (pde & 0xfffff000u) + ((la >> 12) & 0x3ff) * 4;
        if (!gpt_fetched_entry32_at(ram, pte_at, &pte))
            return false;
        *gpa = (pte & 0xfffff000u) | (la & 0xfffu);
        return true;
    }
    if (!gpt_fetched_entry(ram, e, linear, 21, &e, rec))
        return false;
    if (e & GPT_PTE_PS) {
        gpt_fetch_unused(rec, 4);
        *gpa = gpt_fetched_page(e, linear, 21);
        return true;
    }
    /* Bit 7 of a PTE is PAT, not PS. */
    if (!gpt_fetched_entry(ram, e, linear, 12, &e, rec))
        return false;
    *gpa = gpt_fetched_page(e, linear, 12);
    return true;
}

/*
 * The gpa of a linear address the guest has just fetched from: the bytes of
 * the instruction that exited, when the exit did not give its length. The
 * CPU walked these tables for that fetch, so this walk only follows the path
 * (per level: the index, a bounds check, a load, the present bit and the
 * page-size bit) and checks no rights and no reserved bits. m->cpl is not
 * read. Inline, unrolled: the exits of a guest with paging on pay no call
 * and no loop per level.
 *
 * Contract: where gpt_translate_ram translates linear (for any access), this
 * gives the same gpa. It returns false (and the caller takes
 * gpt_translate_ram, which says why) where an entry is not present, a table
 * lies outside ram, or PS is set where it cannot map a page (a PML5E, PML4E
 * or PAE PDPTE). Where only gpt_translate_ram's rights or reserved-bit
 * checks fail (the guest changed its tables after the fetch), it gives the
 * address the entries name. Never reads outside ram.
 */
static inline bool gpt_translate_fetched(const struct gpt_mode *m, uint64_t linear,
                                         const struct gpt_ram *ram, uint64_t *gpa)
{
    return gpt_fetched_walk(m, linear, ram, gpa, NULL);
}

#endif

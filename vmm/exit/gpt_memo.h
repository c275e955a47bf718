/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fetch walk's memo: per vCPU, the last walk gpt_translate_fetched made
 * for an exit's instruction bytes, checked afresh at every use, so that the
 * next exit from the same code page reads each entry once instead of walking.
 *
 * No event invalidates it. Under nested paging the guest edits its page
 * tables, switches CR3 and flushes its TLB without an exit, so nothing
 * pollux sees could tell it when a remembered translation went stale.
 * Instead the memo keeps what the walk's answer is a function of, and a use
 * compares all of it with the present:
 *
 * - the key: CR3, the paging-mode bits the walk reads (CR0.PG, CR4.PSE,
 *   CR4.PAE, CR4.LA57, EFER.LMA: gpt_memo_mode) and the linear page;
 * - the walk: the host address of every entry it read, top level first,
 *   and the value it read there (struct gpt_fetch_record);
 * - the answer: the gpa of the page (the offset comes from the address),
 *   and its host address: a walk is remembered only when the page lies in
 *   guest RAM, so that a use reads the instruction without a bounds check.
 *
 * Why a match gives gpt_translate_fetched's answer: that walk is a function
 * of the key, of guest RAM's place and size (fixed for a VM's life; the memo
 * belongs to one vCPU and so to one VM) and of the entries it reads. With
 * the key equal, the first entry it reads is at the remembered address; if
 * that entry still holds the remembered value, the walk takes the same branch
 * and reads its next entry at the next remembered address; and so on to the
 * last, after which it returns the remembered answer. The addresses were
 * checked against guest RAM when the walk read them, and a walk is
 * remembered only when it translated, so a use makes no bounds check and no
 * index arithmetic: one load and one compare per level.
 *
 * Another vCPU may edit the tables while a use checks them: the use loads
 * the entries in the walk's order (volatile, each an aligned 8-byte load,
 * which x86 neither tears nor reorders with the other loads), so the values
 * it compares are the ones a fresh walk at those instants would have read,
 * and the race is the fresh walk's race.
 *
 * Only walks with 8-byte entries (PAE, 4- and 5-level paging) are
 * remembered; 32-bit paging walks afresh at every use.
 */
#ifndef POLLUX_VMM_EXIT_GPT_MEMO_H
#define POLLUX_VMM_EXIT_GPT_MEMO_H

#include "vmm/exit/gpt.h"

#define GPT_MEMO_PAGE_MASK (~0xfffull)

/*
 * Zeroed: empty (mode 0 matches no paging mode, which has CR0.PG). The
 * slots of a walk shorter than GPT_FETCH_LEVELS point at their own
 * remembered value, so that a use checks every slot without a count: the
 * memo is never copied.
 */
struct gpt_fetch_memo {
    uint64_t cr3, mode, page;
    struct gpt_fetch_record walk;
    uint64_t gpa_page;
    const uint8_t *page_at; /* the page in ram: ram->base + gpa_page */
};

/*
 * The bits of m that choose the walk's shape: CR4.PSE/PAE/LA57, EFER.LMA, and
 * CR0.PG, which is set in every walk remembered and every use (both have
 * paging on), so that an empty memo's 0 matches none.
 */
static inline uint64_t gpt_memo_mode(const struct gpt_mode *m)
{
    return GPT_CR0_PG | (m->cr4 & (GPT_CR4_PSE | GPT_CR4_PAE | GPT_CR4_LA57)) |
           (m->efer & GPT_EFER_LMA);
}

/*
 * Whether memo answers for linear under m, which has paging on: the key and
 * every remembered entry match. Then gpt_memo_gpa is what
 * gpt_translate_fetched(m, linear, ram, gpa) gives, for the ram the memo was
 * filled from; else gpt_memo_walk walks afresh. The slots are spelt out:
 * a use is one load of the address, one of the entry and one compare each.
 */
static inline __attribute__((always_inline)) bool
gpt_memo_valid(const struct gpt_fetch_memo *memo, const struct gpt_mode *m, uint64_t linear)
{
    if ((m->cr3 ^ memo->cr3) | (gpt_memo_mode(m) ^ memo->mode) |
        ((linear & GPT_MEMO_PAGE_MASK) ^ memo->page))
        return false;
    const struct gpt_fetch_record *w = &memo->walk;
    _Static_assert(GPT_FETCH_LEVELS == 5, "one line per slot");
    uint64_t changed = *(const volatile uint64_t *)w->entry_at[0] ^ w->entry[0];
    changed |= *(const volatile uint64_t *)w->entry_at[1] ^ w->entry[1];
    changed |= *(const volatile uint64_t *)w->entry_at[2] ^ w->entry[2];
    changed |= *(const volatile uint64_t *)w->entry_at[3] ^ w->entry[3];
    changed |= *(const volatile uint64_t *)w->entry_at[4] ^ w->entry[4];
    return !changed;
}

/* The answer of a memo gpt_memo_valid found valid for linear. */
static inline uint64_t gpt_memo_gpa(const struct gpt_fetch_memo *memo, uint64_t linear)
{
    return memo->gpa_page | (linear & ~GPT_MEMO_PAGE_MASK);
}

/* Its host address, in ram with the rest of its page. */
static inline const uint8_t *gpt_memo_host(const struct gpt_fetch_memo *memo, uint64_t linear)
{
    return memo->page_at + (linear & ~GPT_MEMO_PAGE_MASK);
}

/*
 * gpt_translate_fetched(m, linear, ram, gpa), remembering the walk in memo
 * when it translated with 8-byte entries to a page that lies in ram, and
 * leaving memo empty otherwise. Inline: its one caller in the hypervisor is
 * already out of line, the use that found the memo stale.
 */
static inline __attribute__((always_inline)) bool
gpt_memo_walk(struct gpt_fetch_memo *memo, const struct gpt_mode *m, uint64_t linear,
              const struct gpt_ram *ram, uint64_t *gpa)
{
    memo->mode = 0;
    if (!gpt_walk_has_8_byte_entries(m))
        return gpt_translate_fetched(m, linear, ram, gpa);
    if (!gpt_fetched_walk(m, linear, ram, gpa, &memo->walk))
        return false;
    uint64_t page = *gpa & GPT_MEMO_PAGE_MASK;
    /* page + 4096 cannot wrap: a gpa is below 2^52. */
    if (page + 4096 > ram->size)
        return true;
    memo->cr3 = m->cr3;
    memo->page = linear & GPT_MEMO_PAGE_MASK;
    memo->gpa_page = page;
    memo->page_at = ram->base + page;
    memo->mode = gpt_memo_mode(m);
    return true;
}

#endif

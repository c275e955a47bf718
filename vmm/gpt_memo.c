#include "vmm/gpt_memo.h"

bool gpt_memo_walk(struct gpt_fetch_memo *memo, const struct gpt_mode *m, uint64_t linear,
                   const struct gpt_ram *ram, uint64_t *gpa)
{
    memo->mode = 0;
    if (!gpt_walk_has_8_byte_entries(m))
        return gpt_translate_fetched(m, linear, ram, gpa);
    memo->walk.levels = 0;
    if (!gpt_fetched_walk(m, linear, ram, gpa, &memo->walk))
        return false;
    uint64_t page = *gpa & GPT_MEMO_PAGE_MASK;
    /* page + 4096 cannot wrap: a gpa is below 2^52. */
    if (page + 4096 > ram->size)
        return true;
    for (unsigned i = memo->walk.levels; i < GPT_FETCH_LEVELS; i++)
        memo->walk.entry_at[i] = &memo->walk.entry[i];
    memo->cr3 = m->cr3;
    memo->page = linear & GPT_MEMO_PAGE_MASK;
    memo->gpa_page = page;
    memo->page_at = ram->base + page;
    memo->mode = gpt_memo_mode(m);
    return true;
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/pmm.h"

#include <stdarg.h>
#include <stdbool.h>

#include "lib/format.h"

/* End of a map entry, saturated: a bogus length must not wrap to a low address. */
static uint64_t entry_end(const struct mem_range *m)
{
    return m->len > UINT64_MAX - m->base ? UINT64_MAX : m->base + m->len;
}

static uint64_t page_up(uint64_t addr)
{
    return addr / PAGE_SIZE + (addr % PAGE_SIZE != 0);
}

/* Sets (used) or clears (free) the bits of pages [first, last), word at a time. */
static void mark(struct pmm *p, uint64_t first, uint64_t last, bool used)
{
    if (last > p->npages)
        last = p->npages;
    while (first < last) {
        uint64_t bit = first % 64;
        uint64_t n = last - first < 64 - bit ? last - first : 64 - bit;
        uint64_t mask = (n == 64 ? ~0ull : ((1ull << n) - 1)) << bit;
        if (used)
            p->bitmap[first / 64] |= mask;
        else
            p->bitmap[first / 64] &= ~mask;
        first += n;
    }
}

/* Index of the first used page in [from, to), or to if all are free. */
static uint64_t first_used(const struct pmm *p, uint64_t from, uint64_t to)
{
    while (from < to) {
        uint64_t word = p->bitmap[from / 64] >> (from % 64);
        if (word) {
            uint64_t i = from + __builtin_ctzll(word);
            return i < to ? i : to;
        }
        from = (from / 64 + 1) * 64;
    }
    return to;
}

static unsigned popcount(uint64_t x)
{
    /* Not __builtin_popcountll: without -mpopcnt it calls into libgcc. */
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

/*
 * First run of npg pages below 4 GiB made only of pages that will be free:
 * inside one usable entry and clear of every reserved range and non-usable
 * entry. Works in page numbers so that ranges ending near 2^64 cannot wrap.
 * Page 0 is skipped since it is never free. Returns the page, 0 if none.
 */
static uint64_t place_bitmap(const struct mem_range *map, unsigned nmap,
                             const struct phys_range *reserved, unsigned nreserved, uint64_t npg)
{
    for (unsigned i = 0; i < nmap; i++) {
        if (map[i].type != MEM_USABLE)
            continue;
        uint64_t at = page_up(map[i].base), limit = entry_end(&map[i]) / PAGE_SIZE;
        if (limit > FOUR_GIB / PAGE_SIZE)
            limit = FOUR_GIB / PAGE_SIZE;
        if (at == 0)
            at = 1;
        while (at < limit && npg <= limit - at) {
            uint64_t lo = at * PAGE_SIZE, hi = (at + npg) * PAGE_SIZE;
            /* Past every range that overlaps: any start before that overlaps it too. */
            uint64_t next = at;
            for (unsigned j = 0; j < nreserved; j++) {
                const struct phys_range *r = &reserved[j];
                if (r->start < r->end && r->start < hi && r->end > lo && page_up(r->end) > next)
                    next = page_up(r->end);
            }
            for (unsigned j = 0; j < nmap; j++) {
                uint64_t e = entry_end(&map[j]);
                if (map[j].type != MEM_USABLE && map[j].len && map[j].base < hi && e > lo &&
                    page_up(e) > next)
                    next = page_up(e);
            }
            if (next == at)
                return at;
            at = next;
        }
    }
    return 0;
}

int pmm_init(struct pmm *p, const struct mem_range *map, unsigned nmap,
             const struct phys_range *reserved, unsigned nreserved, phys_to_virt_fn to_virt,
             void *ctx, char *err, size_t errlen)
{
    uint64_t top = 0; /* in pages */
    for (unsigned i = 0; i < nmap; i++) {
        uint64_t first = page_up(map[i].base), last = entry_end(&map[i]) / PAGE_SIZE;
        if (map[i].type == MEM_USABLE && first < last && last > top)
            top = last;
    }
    if (top == 0)
        return format_error(err, errlen, "pmm: no usable memory in the %u-entry memory map", nmap);

    uint64_t words = (top + 63) / 64;
    uint64_t npg = page_up(words * 8);
    uint64_t at = place_bitmap(map, nmap, reserved, nreserved, npg) * PAGE_SIZE;
    if (at == 0)
        return format_error(err, errlen,
                            "pmm: no room below 4 GiB for the %llu-byte bitmap covering %llu pages",
                            (unsigned long long)(words * 8), (unsigned long long)top);
    uint64_t *bitmap = to_virt(at, ctx);
    if (!bitmap)
        return format_error(err, errlen, "pmm: bitmap at 0x%llx is not mapped",
                            (unsigned long long)at);

    *p = (struct pmm){.bitmap = bitmap, .npages = top, .bitmap_phys = at};
    for (uint64_t w = 0; w < words; w++)
        bitmap[w] = ~0ull;
    for (unsigned i = 0; i < nmap; i++) {
        if (map[i].type == MEM_USABLE)
            mark(p, page_up(map[i].base), entry_end(&map[i]) / PAGE_SIZE, false);
    }
    /* Second pass: a non-usable entry wins over any usable one covering it. */
    for (unsigned i = 0; i < nmap; i++) {
        if (map[i].type != MEM_USABLE && map[i].len)
            mark(p, map[i].base / PAGE_SIZE, page_up(entry_end(&map[i])), true);
    }
    for (unsigned i = 0; i < nreserved; i++) {
        if (reserved[i].end > reserved[i].start)
            mark(p, reserved[i].start / PAGE_SIZE, page_up(reserved[i].end), true);
    }
    mark(p, at / PAGE_SIZE, at / PAGE_SIZE + npg, true);
    mark(p, 0, 1, true);

    for (uint64_t w = 0; w < words; w++)
        p->nfree += 64 - popcount(bitmap[w]);
    return 0;
}

uint64_t pmm_alloc(struct pmm *p, uint64_t npages, uint64_t align, uint64_t limit)
{
    if (npages == 0 || align < PAGE_SIZE || (align & (align - 1)))
        return 0;
    uint64_t step = align / PAGE_SIZE;
    uint64_t max = p->npages;
    if (limit && limit / PAGE_SIZE < max)
        max = limit / PAGE_SIZE;
    if (npages > max)
        return 0;
    uint64_t last_start = max - npages;

    /* First fit from the hint up, then wrap around to the starts below it. */
    uint64_t hint = p->hint < max ? p->hint : 0;
    uint64_t ranges[2][2] = {{hint, last_start + 1}, {0, hint}};
    for (int r = 0; r < 2; r++) {
        uint64_t end = ranges[r][1] < last_start + 1 ? ranges[r][1] : last_start + 1;
        uint64_t s = (ranges[r][0] + step - 1) & ~(step - 1);
        while (s < end) {
            uint64_t used = first_used(p, s, s + npages);
            if (used == s + npages) {
                mark(p, s, s + npages, true);
                p->nfree -= npages;
                p->hint = s + npages < p->npages ? s + npages : 0;
                return s * PAGE_SIZE;
            }
            s = (used + step) & ~(step - 1);
        }
    }
    return 0;
}

void pmm_free(struct pmm *p, uint64_t phys, uint64_t npages)
{
    uint64_t first = phys / PAGE_SIZE;
    /* Page 0 stays used so that 0 keeps meaning failure. */
    if (first == 0) {
        first = 1;
        npages = npages ? npages - 1 : 0;
    }
    if (first >= p->npages)
        return;
    uint64_t last = npages < p->npages - first ? first + npages : p->npages;
    for (uint64_t i = first; i < last; i++) {
        uint64_t bit = 1ull << (i % 64);
        if (p->bitmap[i / 64] & bit) {
            p->bitmap[i / 64] &= ~bit;
            p->nfree++;
        }
    }
}

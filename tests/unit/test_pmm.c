/* SPDX-License-Identifier: GPL-2.0-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/x86/pmm.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

#define ARENA_SIZE (64 * MiB)

/*
 * A window of fake physical memory [base, base + ARENA_SIZE) backed by a
 * host allocation; only the bitmap is ever written through it.
 */
struct arena {
    uint64_t base;
    uint8_t *mem;
};

static void *arena_virt(uint64_t phys, void *ctx)
{
    struct arena *a = ctx;
    if (phys < a->base || phys - a->base >= ARENA_SIZE)
        return NULL;
    return a->mem + (phys - a->base);
}

static struct arena arena;
static struct pmm pmm;
static char err[160];

static int setup(void **state)
{
    (void)state;
    arena.base = 0;
    arena.mem = calloc(1, ARENA_SIZE);
    memset(&pmm, 0, sizeof(pmm));
    err[0] = '\0';
    return arena.mem ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(arena.mem);
    return 0;
}

#define INIT(map, res)                                                                             \
    pmm_init(&pmm, map, sizeof(map) / sizeof(map[0]), res, sizeof(res) / sizeof(res[0]),           \
             arena_virt, &arena, err, sizeof(err))

static const struct phys_range no_reserved[1];
#define INIT_NORES(map)                                                                            \
    pmm_init(&pmm, map, sizeof(map) / sizeof(map[0]), no_reserved, 0, arena_virt, &arena, err,     \
             sizeof(err))

static int used(uint64_t page)
{
    return (pmm.bitmap[page / 64] >> (page % 64)) & 1;
}

static uint64_t count_free(void)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < pmm.npages; i++)
        n += !used(i);
    return n;
}

/* Every page in [first, last) is in the given state. */
static void assert_pages(uint64_t first, uint64_t last, int state)
{
    for (uint64_t i = first; i < last; i++) {
        if (used(i) != state)
            fail_msg("page 0x%llx is %s", (unsigned long long)i, state ? "free" : "used");
    }
}

static void test_pc_layout(void **state)
{
    (void)state;
    const struct mem_range map[] = {
        {0, 0x9F000, MEM_USABLE},
        {0x9F000, 0x61000, MEM_RESERVED},
        {0x100000, 128 * MiB - 0x100000, MEM_USABLE},
    };
    const struct phys_range res[] = {{0x100000, 0x300000}};
    assert_int_equal(INIT(map, res), 0);
    assert_int_equal(pmm.npages, 128 * MiB / PAGE_SIZE);
    /* 32768 pages need 4 KiB of bitmap: the first free page, after page 0. */
    assert_int_equal(pmm.bitmap_phys, 0x1000);
    assert_ptr_equal(pmm.bitmap, arena.mem + 0x1000);
    assert_pages(0, 2, 1);
    assert_pages(2, 0x9F, 0);
    assert_pages(0x9F, 0x300, 1);
    assert_pages(0x300, pmm.npages, 0);
    assert_int_equal(pmm.nfree, (0x9F - 2) + (0x8000 - 0x300));
    assert_int_equal(pmm.nfree, count_free());
}

static void test_unaligned_entries(void **state)
{
    (void)state;
    const struct mem_range map[] = {
        {0x1800, 0x4000, MEM_USABLE}, /* pages 2..4 whole; 1 and 5 partial */
        {0x10000, 0x10000, MEM_USABLE},
        {0x10800, 0x100, MEM_RESERVED}, /* inside page 0x10 */
    };
    const struct phys_range res[] = {{0x12fff, 0x13001}}; /* touches pages 0x12 and 0x13 */
    assert_int_equal(INIT(map, res), 0);
    assert_int_equal(pmm.npages, 0x20);
    assert_int_equal(pmm.bitmap_phys, 0x2000);
    assert_pages(0, 3, 1);
    assert_pages(3, 5, 0);
    assert_pages(5, 0x11, 1);
    assert_pages(0x11, 0x12, 0);
    assert_pages(0x12, 0x14, 1);
    assert_pages(0x14, 0x20, 0);
    assert_int_equal(pmm.nfree, 2 + 1 + 12);
    assert_int_equal(pmm.nfree, count_free());
}

static void test_overlapping_unsorted_entries(void **state)
{
    (void)state;
    const struct mem_range map[] = {
        {0x40000, 0x10000, MEM_RESERVED}, /* listed before the usable entry it punches */
        {0x90000, 0x20000, MEM_USABLE},
        {0, 0xA0000, MEM_USABLE},
        {0x48000, 0x18000, MEM_USABLE}, /* usable overlapping the reserved one */
        {0x70000, 0x1000, MEM_ACPI_NVS},
        {0x71000, 0x1000, 0xF00}, /* unknown types count as reserved */
        {0x72000, 0x800, MEM_BAD},
    };
    assert_int_equal(INIT_NORES(map), 0);
    assert_int_equal(pmm.npages, 0xB0);
    /* The bitmap goes into the first usable entry in map order. */
    assert_int_equal(pmm.bitmap_phys, 0x90000);
    assert_pages(0, 1, 1);
    assert_pages(1, 0x40, 0);
    assert_pages(0x40, 0x50, 1);
    assert_pages(0x50, 0x70, 0);
    assert_pages(0x70, 0x73, 1);
    assert_pages(0x73, 0x90, 0);
    assert_pages(0x90, 0x91, 1);
    assert_pages(0x91, 0xB0, 0);
    assert_int_equal(pmm.nfree, 0xB0 - 2 - 0x10 - 3);
    assert_int_equal(pmm.nfree, count_free());
}

static void test_bitmap_skips_reservations(void **state)
{
    (void)state;
    /* 1 GiB of pages needs a 32 KiB (8-page) bitmap. */
    const struct mem_range map[] = {
        {0, 0x9F000, MEM_USABLE},
        {0x7000, 0x1000, MEM_RESERVED},
        {0x100000, 1 * GiB - 0x100000, MEM_USABLE},
    };
    const struct phys_range res[] = {
        {0, 0x1001},      /* pages 0 and 1 */
        {0x9000, 0x9001}, /* one byte, still a whole page */
    };
    assert_int_equal(INIT(map, res), 0);
    /* [0x1000,0x9000) hits pages 0-1 and 7; [0x8000,0x10000) hits page 9. */
    assert_int_equal(pmm.bitmap_phys, 0xA000);
    assert_pages(0xA, 0x12, 1);
    assert_pages(0x12, 0x9F, 0);
    assert_pages(2, 7, 0);
    assert_pages(7, 8, 1);
    assert_pages(8, 9, 0);
    assert_pages(9, 0xA, 1);
    assert_int_equal(pmm.nfree, count_free());
}

static void test_bitmap_skips_usable_too_small(void **state)
{
    (void)state;
    /* The first usable entry cannot hold the 8-page bitmap at all. */
    const struct mem_range map[] = {
        {0x1000, 0x4000, MEM_USABLE},
        {0x100000, 1 * GiB - 0x100000, MEM_USABLE},
    };
    assert_int_equal(INIT_NORES(map), 0);
    assert_int_equal(pmm.bitmap_phys, 0x100000);
    assert_pages(0x100, 0x108, 1);
    assert_pages(0x108, 0x110, 0);
    assert_pages(1, 5, 0);
    assert_int_equal(pmm.nfree, count_free());
}

static void test_reservations_at_edges(void **state)
{
    (void)state;
    const struct mem_range map[] = {{0, 0x100000, MEM_USABLE}};
    const struct phys_range res[] = {
        {0x1000, 0x2000},    /* the first page after page 0 */
        {0xFFFFF, 0x100000}, /* the last byte */
        {0x50000, 0x50000},  /* empty: reserves nothing */
        {0x60000, 0x5F000},  /* inverted: reserves nothing */
    };
    assert_int_equal(INIT(map, res), 0);
    assert_int_equal(pmm.npages, 0x100);
    assert_int_equal(pmm.bitmap_phys, 0x2000);
    assert_pages(0, 3, 1);
    assert_pages(3, 0xFF, 0);
    assert_pages(0xFF, 0x100, 1);
    assert_int_equal(pmm.nfree, 0xFF - 3);
    assert_int_equal(pmm.nfree, count_free());
}

static void test_memory_above_4g(void **state)
{
    (void)state;
    const struct mem_range map[] = {
        {0x100000, 0x100000, MEM_USABLE},
        {0xC0000000, 0x40000000, MEM_RESERVED},
        {4 * GiB, 4 * GiB, MEM_USABLE},
    };
    assert_int_equal(INIT_NORES(map), 0);
    assert_int_equal(pmm.npages, 8 * GiB / PAGE_SIZE);
    /* 2M pages take 256 KiB = 64 pages of bitmap. */
    assert_int_equal(pmm.bitmap_phys, 0x100000);
    assert_int_equal(pmm.nfree, (256 - 64) + 4 * GiB / PAGE_SIZE);

    /* Below 4 GiB only the 192 pages left at 1 MiB qualify. */
    uint64_t a = pmm_alloc(&pmm, 192, PAGE_SIZE, 4 * GiB);
    assert_int_equal(a, 0x140000);
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 4 * GiB), 0);
    uint64_t hi = pmm_alloc(&pmm, 1, PAGE_SIZE, 0);
    assert_int_equal(hi, 4 * GiB);
    assert_int_equal(pmm.nfree, 4 * GiB / PAGE_SIZE - 1);
}

static void test_bitmap_in_entry_crossing_4g(void **state)
{
    (void)state;
    /* Only the part below 4 GiB may hold the 64-page bitmap. */
    const struct mem_range map[] = {{4 * GiB - 1 * MiB, 4 * GiB + 1 * MiB, MEM_USABLE}};
    arena.base = 4 * GiB - 1 * MiB;
    assert_int_equal(INIT_NORES(map), 0);
    assert_int_equal(pmm.bitmap_phys, 4 * GiB - 1 * MiB);
    assert_int_equal(pmm.nfree, (4 * GiB + 1 * MiB) / PAGE_SIZE - 64);
}

static void test_no_room_below_4g(void **state)
{
    (void)state;
    const struct mem_range map[] = {
        {4 * GiB - 16 * PAGE_SIZE, 16 * PAGE_SIZE + 4 * GiB, MEM_USABLE},
    };
    assert_int_equal(INIT_NORES(map), -1);
    assert_non_null(strstr(err, "no room"));
}

static void test_no_room_when_reserved(void **state)
{
    (void)state;
    const struct mem_range map[] = {{0, 0x100000, MEM_USABLE}};
    const struct phys_range res[] = {{0x1000, 0xF0000}, {0xF0000, 0x100000}};
    assert_int_equal(INIT(map, res), -1);
    assert_non_null(strstr(err, "no room"));
}

static void test_huge_entries_do_not_wrap(void **state)
{
    (void)state;
    /* A reserved entry running to the top of the address space. */
    const struct mem_range map[] = {
        {0, 0x100000, MEM_USABLE},
        {0x80000, UINT64_MAX, MEM_RESERVED},
    };
    const struct phys_range res[] = {{0x1000, UINT64_MAX}};
    assert_int_equal(INIT(map, res), -1);
    assert_non_null(strstr(err, "no room"));

    /* A usable entry that long would need an impossible bitmap. */
    const struct mem_range map2[] = {{0x100000, UINT64_MAX, MEM_USABLE}};
    assert_int_equal(INIT_NORES(map2), -1);
    assert_non_null(strstr(err, "no room"));

    const struct mem_range map3[] = {
        {0, 0x100000, MEM_USABLE},
        {0x80000, UINT64_MAX, MEM_RESERVED},
    };
    assert_int_equal(INIT_NORES(map3), 0);
    assert_int_equal(pmm.npages, 0x100);
    assert_pages(0x80, 0x100, 1);
    assert_int_equal(pmm.nfree, 0x80 - 2);
}

static void test_no_usable_memory(void **state)
{
    (void)state;
    const struct mem_range reserved_only[] = {{0, 0x100000, MEM_RESERVED}};
    assert_int_equal(INIT_NORES(reserved_only), -1);
    assert_non_null(strstr(err, "no usable memory"));

    /* Usable bytes but not a single whole page. */
    const struct mem_range partial[] = {{0x800, 0x1000, MEM_USABLE}, {0x1000, 0, MEM_USABLE}};
    assert_int_equal(INIT_NORES(partial), -1);
    assert_non_null(strstr(err, "no usable memory"));

    assert_int_equal(pmm_init(&pmm, NULL, 0, NULL, 0, arena_virt, &arena, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no usable memory"));
}

static void test_only_page_zero_usable(void **state)
{
    (void)state;
    const struct mem_range map[] = {{0, 0x1000, MEM_USABLE}};
    assert_int_equal(INIT_NORES(map), -1);
    assert_non_null(strstr(err, "no room"));
}

static void test_bitmap_not_mapped(void **state)
{
    (void)state;
    const struct mem_range map[] = {{ARENA_SIZE, 0x100000, MEM_USABLE}};
    assert_int_equal(INIT_NORES(map), -1);
    assert_non_null(strstr(err, "not mapped"));
}

static void test_exhaustion_and_reuse(void **state)
{
    (void)state;
    const struct mem_range map[] = {{0, 0x20000, MEM_USABLE}};
    assert_int_equal(INIT_NORES(map), 0);
    assert_int_equal(pmm.nfree, 30);
    uint64_t got[30];
    for (int i = 0; i < 30; i++) {
        got[i] = pmm_alloc(&pmm, 1, PAGE_SIZE, 0);
        /* First fit from the hint: ascending pages after page 0 and the bitmap. */
        assert_int_equal(got[i], (uint64_t)(i + 2) * PAGE_SIZE);
    }
    assert_int_equal(pmm.nfree, 0);
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0), 0);

    pmm_free(&pmm, got[10], 1);
    assert_int_equal(pmm.nfree, 1);
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0), got[10]);
    assert_int_equal(pmm.nfree, 0);

    /* Two separate free pages are not a run of two. */
    pmm_free(&pmm, got[3], 1);
    pmm_free(&pmm, got[5], 1);
    assert_int_equal(pmm_alloc(&pmm, 2, PAGE_SIZE, 0), 0);
    pmm_free(&pmm, got[4], 1);
    assert_int_equal(pmm.nfree, 3);
    /* The hint is past got[10]; the search wraps around to find the run. */
    assert_true(pmm.hint > got[5] / PAGE_SIZE);
    assert_int_equal(pmm_alloc(&pmm, 3, PAGE_SIZE, 0), got[3]);
    assert_int_equal(pmm.nfree, count_free());
}

static void test_free_accounting(void **state)
{
    (void)state;
    const struct mem_range map[] = {{0, 0x100000, MEM_USABLE}};
    assert_int_equal(INIT_NORES(map), 0);
    uint64_t start = pmm.nfree;
    uint64_t a = pmm_alloc(&pmm, 4, PAGE_SIZE, 0);
    assert_int_not_equal(a, 0);
    assert_int_equal(pmm.nfree, start - 4);

    pmm_free(&pmm, a, 4);
    assert_int_equal(pmm.nfree, start);
    /* Double free: already-free pages are not counted again. */
    pmm_free(&pmm, a, 4);
    assert_int_equal(pmm.nfree, start);
    /* Partly free run: only the two pages still in use count. */
    a = pmm_alloc(&pmm, 2, PAGE_SIZE, 0);
    pmm_free(&pmm, a - 2 * PAGE_SIZE, 4);
    assert_int_equal(pmm.nfree, start);

    /* Page 0 and pages past the end are never freed. */
    pmm_free(&pmm, 0, 1);
    assert_true(used(0));
    pmm_free(&pmm, 0xFF000, 10);
    pmm_free(&pmm, 0x200000, 1);
    pmm_free(&pmm, 0x100000, UINT64_MAX);
    pmm_free(&pmm, 0x80000, UINT64_MAX);
    assert_int_equal(pmm.nfree, start);
    assert_int_equal(pmm.nfree, count_free());
}

static void test_alignment(void **state)
{
    (void)state;
    const struct mem_range map[] = {{0, 16 * MiB, MEM_USABLE}};
    assert_int_equal(INIT_NORES(map), 0);
    /* The hint is left unaligned by a single-page allocation. */
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0), 0x2000);
    assert_int_equal(pmm_alloc(&pmm, 1, 2 * MiB, 0), 2 * MiB);
    /* 2 MiB is taken by one page, so a 2 MiB run goes to 4 MiB. */
    assert_int_equal(pmm_alloc(&pmm, 512, 2 * MiB, 0), 4 * MiB);
    assert_int_equal(pmm_alloc(&pmm, 1, 16 * MiB, 0), 0); /* only page 0 is that aligned */
    assert_int_equal(pmm_alloc(&pmm, 1, 64 * KiB, 0), 6 * MiB);
    assert_int_equal(pmm_alloc(&pmm, 1, 8 * MiB, 0), 8 * MiB);
    assert_int_equal(pmm_alloc(&pmm, 512, 2 * MiB, 0), 10 * MiB);
    assert_int_equal(pmm_alloc(&pmm, 512, 2 * MiB, 0), 12 * MiB);
    assert_int_equal(pmm_alloc(&pmm, 512, 2 * MiB, 0), 14 * MiB);
    /* Every 2 MiB boundary now has a used page right after it. */
    assert_int_equal(pmm_alloc(&pmm, 1, 2 * MiB, 0), 0);
    assert_int_equal(pmm_alloc(&pmm, 511, 2 * MiB, 0), 0);
    /* Unaligned, the same run fits just after the page at 2 MiB. */
    assert_int_equal(pmm_alloc(&pmm, 511, PAGE_SIZE, 0), 2 * MiB + PAGE_SIZE);
    assert_int_equal(pmm.nfree, count_free());
}

static void test_bad_arguments(void **state)
{
    (void)state;
    const struct mem_range map[] = {{0, 0x100000, MEM_USABLE}};
    assert_int_equal(INIT_NORES(map), 0);
    uint64_t start = pmm.nfree;
    assert_int_equal(pmm_alloc(&pmm, 0, PAGE_SIZE, 0), 0);
    assert_int_equal(pmm_alloc(&pmm, 1, 3 * PAGE_SIZE, 0), 0);
    assert_int_equal(pmm_alloc(&pmm, 1, 512, 0), 0);
    assert_int_equal(pmm_alloc(&pmm, 0x101, PAGE_SIZE, 0), 0);
    assert_int_equal(pmm_alloc(&pmm, UINT64_MAX, PAGE_SIZE, 0), 0);
    assert_int_equal(pmm_alloc(&pmm, 1, 1ull << 63, 0), 0);
    assert_int_equal(pmm.nfree, start);
}

static void test_limit(void **state)
{
    (void)state;
    const struct mem_range map[] = {{0, 0x100000, MEM_USABLE}};
    assert_int_equal(INIT_NORES(map), 0);
    /* Below one page nothing qualifies; page 1 holds the bitmap. */
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0xFFF), 0);
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0x2000), 0);
    /* The run must end at or below the limit, not just start below it. */
    assert_int_equal(pmm_alloc(&pmm, 2, PAGE_SIZE, 0x3FFF), 0);
    assert_int_equal(pmm_alloc(&pmm, 2, PAGE_SIZE, 0x4000), 0x2000);
    /* An unaligned limit rounds down. */
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0x5FFF), 0x4000);
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0x5FFF), 0);
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0), 0x5000);
    assert_int_equal(pmm_alloc(&pmm, 0x50, PAGE_SIZE, 0), 0x6000);
    /* A hint above the limit does not hide the low pages. */
    pmm_free(&pmm, 0x5000, 1);
    assert_int_equal(pmm.hint, 0x56);
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 0x6000), 0x5000);
    /* A limit above the top of memory is the same as none. */
    assert_int_equal(pmm_alloc(&pmm, 1, PAGE_SIZE, 64 * GiB), 0x56000);
    assert_int_equal(pmm.nfree, count_free());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pc_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unaligned_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlapping_unsorted_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_skips_reservations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_skips_usable_too_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reservations_at_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_above_4g, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_in_entry_crossing_4g, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_room_below_4g, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_room_when_reserved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_entries_do_not_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_usable_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_page_zero_usable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_not_mapped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exhaustion_and_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_accounting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

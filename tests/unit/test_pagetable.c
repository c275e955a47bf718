/* SPDX-License-Identifier: GPL-2.0-only */
/* The generic page-table builder, on host memory standing in for physical pages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/pagetable.h"

#define ARENA_PAGES 64

struct arena {
    uint8_t *mem; /* page i has "physical" address (i + 1) * 4096 */
    unsigned used, limit;
};

static uint64_t alloc_table(void *ctx)
{
    struct arena *a = ctx;
    if (a->used >= a->limit)
        return 0;
    memset(a->mem + a->used * 4096, 0, 4096);
    return (uint64_t)(++a->used) * 4096;
}

static void *to_virt(uint64_t pa, void *ctx)
{
    struct arena *a = ctx;
    assert_true(pa >= 4096 && pa <= (uint64_t)a->used * 4096);
    return a->mem + pa - 4096;
}

static struct arena arena;

static int setup(void **state)
{
    (void)state;
    arena.mem = aligned_alloc(4096, ARENA_PAGES * 4096);
    arena.used = 0;
    arena.limit = ARENA_PAGES;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(arena.mem);
    return 0;
}

static struct pagetable make(const struct pt_format *fmt)
{
    struct pagetable pt = {
        .fmt = fmt, .alloc_table = alloc_table, .to_virt = to_virt, .ctx = &arena};
    assert_int_equal(pt_init(&pt), 0);
    return pt;
}

static uint64_t raw_entry(struct pagetable *pt, uint64_t va, int level)
{
    uint64_t *t = to_virt(pt->root, &arena);
    for (int l = 3; l > level; l--)
        t = to_virt(t[(va >> (12 + 9 * l)) & 511] & 0x000ffffffffff000ull, &arena);
    return t[(va >> (12 + 9 * level)) & 511];
}

static void test_4k_mapping_and_lookup(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    assert_int_equal(pt_map(&pt, 0x5000, 0x123000, 0x2000, PT_READ | PT_WRITE, PT_2M), 0);
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_true(pt_lookup(&pt, 0x5abc, &pa, &perms, &level));
    assert_int_equal(pa, 0x123abc);
    assert_int_equal(level, PT_4K);
    assert_int_equal(perms, PT_READ | PT_WRITE);
    assert_true(pt_lookup(&pt, 0x6000, &pa, &perms, &level));
    assert_int_equal(pa, 0x124000);
    assert_false(pt_lookup(&pt, 0x7000, &pa, &perms, &level));
    assert_false(pt_lookup(&pt, 0x4fff, &pa, &perms, &level));
    /* PML4, PDPT, PD, PT: four tables. */
    assert_int_equal(arena.used, 4);
}

static void test_large_pages_when_aligned(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    /* 2 MiB + 4 KiB from an aligned start: one 2M page, then one 4K page. */
    assert_int_equal(pt_map(&pt, 0x200000, 0x400000, 0x201000, PT_READ | PT_EXEC, PT_2M), 0);
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_true(pt_lookup(&pt, 0x3fffff, &pa, &perms, &level));
    assert_int_equal(level, PT_2M);
    assert_int_equal(pa, 0x5fffff);
    assert_int_equal(perms, PT_READ | PT_EXEC);
    assert_true(pt_lookup(&pt, 0x400000, &pa, &perms, &level));
    assert_int_equal(level, PT_4K);
    assert_int_equal(pa, 0x600000);
    uint64_t e = raw_entry(&pt, 0x200000, 1);
    assert_true(e & (1ull << 7));   /* PS */
    assert_false(e & (1ull << 63)); /* executable */
    assert_false(e & 2);            /* read-only */
}

static void test_misaligned_pa_falls_back_to_4k(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    assert_int_equal(pt_map(&pt, 0x200000, 0x401000, 0x200000, PT_READ, PT_2M), 0);
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_true(pt_lookup(&pt, 0x3ff000, &pa, &perms, &level));
    assert_int_equal(level, PT_4K);
    assert_int_equal(pa, 0x600000);
}

static void test_1g_pages(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86);
    assert_int_equal(pt_map(&pt, 1ull << 30, 2ull << 30, 1ull << 30, PT_READ | PT_WRITE, PT_1G), 0);
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_true(pt_lookup(&pt, (1ull << 30) + 0x1234, &pa, &perms, &level));
    assert_int_equal(level, PT_1G);
    assert_int_equal(pa, (2ull << 30) + 0x1234);
    /* Without NX support every page is executable. */
    assert_true(perms & PT_EXEC);
}

static void test_nx_user_uc_bits(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    assert_int_equal(pt_map(&pt, 0x1000, 0x1000, 0x1000, PT_READ | PT_USER | PT_UC, PT_4K), 0);
    uint64_t e = raw_entry(&pt, 0x1000, 0);
    assert_true(e & (1ull << 63)); /* NX */
    assert_true(e & (1ull << 2));  /* U/S */
    assert_true(e & (1ull << 4));  /* PCD */
    assert_true(e & (1ull << 3));  /* PWT */
    assert_false(e & (1ull << 7)); /* a 4K entry never sets bit 7 (PAT) */
    /* Upper levels grant everything, including user access (NPT needs it). */
    uint64_t pml4e = raw_entry(&pt, 0x1000, 3);
    assert_int_equal(pml4e & 7, 7);
}

/* What the SVM backend builds for a VM: guest-physical 0..32M on 2M host pages, RWX, U set. */
static void test_npt_guest_memory(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    const uint64_t hpa = 0x40000000, mem = 32ull << 20;
    assert_int_equal(pt_map(&pt, 0, hpa, mem, PT_READ | PT_WRITE | PT_EXEC | PT_USER, PT_2M), 0);
    assert_int_equal(arena.used, 3); /* PML4, PDPT, one PD: no page tables needed */
    for (uint64_t gpa = 0; gpa < mem; gpa += 0x200000) {
        uint64_t e = raw_entry(&pt, gpa, 1);
        assert_int_equal(e & 0x000ffffffffff000ull, hpa + gpa);
        assert_true(e & (1ull << 7));   /* 2M page */
        assert_true(e & (1ull << 2));   /* user: nested walks are user accesses */
        assert_true(e & (1ull << 1));   /* writable */
        assert_false(e & (1ull << 63)); /* executable */
    }
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_true(pt_lookup(&pt, mem - 1, &pa, &perms, &level));
    assert_int_equal(pa, hpa + mem - 1);
    assert_false(pt_lookup(&pt, mem, &pa, &perms, &level));        /* nothing beyond guest memory */
    assert_false(pt_lookup(&pt, 0xfee00000, &pa, &perms, &level)); /* the APIC page faults */
}

static void test_refuses_overlap_and_split(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    assert_int_equal(pt_map(&pt, 0x200000, 0x200000, 0x200000, PT_READ, PT_2M), 0);
    /* A 4K page inside an existing 2M page would need a split. */
    assert_int_equal(pt_map(&pt, 0x201000, 0x900000, 0x1000, PT_READ, PT_4K), -1);
    assert_int_equal(pt_map(&pt, 0x200000, 0x900000, 0x200000, PT_READ, PT_2M), -1);
    assert_int_equal(pt_map(&pt, 0x1000, 0x1000, 0x1001, PT_READ, PT_4K), -1);
    assert_int_equal(pt_map(&pt, 0x1800, 0x1000, 0x1000, PT_READ, PT_4K), -1);
}

static void test_out_of_tables(void **state)
{
    (void)state;
    arena.limit = 2; /* the root and one more */
    struct pagetable pt = make(&pt_format_x86_nx);
    assert_int_equal(pt_map(&pt, 0x1000, 0x1000, 0x1000, PT_READ, PT_4K), -1);
    arena.limit = ARENA_PAGES;
}

static void assert_maps(struct pagetable *pt, uint64_t va, uint64_t want_pa, unsigned want_perms,
                        enum pt_level want_level)
{
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_true(pt_lookup(pt, va, &pa, &perms, &level));
    assert_int_equal(pa, want_pa);
    assert_int_equal(perms, want_perms);
    assert_int_equal(level, want_level);
}

static void test_unmap_page_splits_a_2m_page(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    unsigned rw_uc = PT_READ | PT_WRITE | PT_UC;
    assert_int_equal(pt_map(&pt, 0x400000, 0x800000, 0x200000, rw_uc, PT_2M), 0);
    assert_int_equal(pt_unmap_page(&pt, 0x403000), 0);
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_false(pt_lookup(&pt, 0x403000, &pa, &perms, &level));
    assert_false(pt_lookup(&pt, 0x403fff, &pa, &perms, &level));
    /* The rest of the 2M page keeps its frames and rights, now in 4K pages. */
    assert_maps(&pt, 0x402fff, 0x802fff, rw_uc, PT_4K);
    assert_maps(&pt, 0x404000, 0x804000, rw_uc, PT_4K);
    assert_maps(&pt, 0x400000, 0x800000, rw_uc, PT_4K);
    assert_maps(&pt, 0x5ff123, 0x9ff123, rw_uc, PT_4K);
    /* Once unmapped, the page is not there to unmap again. */
    assert_int_equal(pt_unmap_page(&pt, 0x403000), -1);
    assert_int_equal(pt_unmap_page(&pt, 0x403800), -1);
    assert_int_equal(pt_unmap_page(&pt, 0x40000000), -1);
}

static void test_unmap_page_splits_a_1g_page_twice(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    assert_int_equal(pt_map(&pt, 0x40000000, 0x80000000, 0x40000000, PT_READ | PT_EXEC, PT_1G), 0);
    assert_int_equal(pt_unmap_page(&pt, 0x40201000), 0);
    uint64_t pa;
    unsigned perms;
    enum pt_level level;
    assert_false(pt_lookup(&pt, 0x40201000, &pa, &perms, &level));
    assert_maps(&pt, 0x40200000, 0x80200000, PT_READ | PT_EXEC, PT_4K);
    assert_maps(&pt, 0x40400000, 0x80400000, PT_READ | PT_EXEC, PT_2M);
    assert_maps(&pt, 0x7fe00000, 0xbfe00000, PT_READ | PT_EXEC, PT_2M);
}

static void test_unmap_page_out_of_tables_changes_nothing(void **state)
{
    (void)state;
    struct pagetable pt = make(&pt_format_x86_nx);
    assert_int_equal(pt_map(&pt, 0x200000, 0x200000, 0x200000, PT_READ, PT_2M), 0);
    arena.limit = arena.used;
    assert_int_equal(pt_unmap_page(&pt, 0x200000), -1);
    assert_maps(&pt, 0x201000, 0x201000, PT_READ, PT_2M);
    arena.limit = ARENA_PAGES;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_4k_mapping_and_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_pages_when_aligned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misaligned_pa_falls_back_to_4k, setup, teardown),
        cmocka_unit_test_setup_teardown(test_1g_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nx_user_uc_bits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_npt_guest_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_overlap_and_split, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unmap_page_splits_a_2m_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unmap_page_splits_a_1g_page_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unmap_page_out_of_tables_changes_nothing, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

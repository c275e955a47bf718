/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fetch walk's memo (vmm/exit/gpt_memo.h), on a byte array standing in for
 * guest RAM: whatever happens to the tables, the key or the address between
 * two uses, a use gives gpt_translate_fetched's answer, and a use after a
 * change to anything the last walk depended on walks afresh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "arch/x86/regs.h"
#include "vmm/exit/gpt_memo.h"

#define P  (1ull << 0)
#define RW (1ull << 1)
#define PS (1ull << 7)

#define MEM_SIZE 0x400000

static uint8_t mem[MEM_SIZE];

#include "test_mem.h" /* after mem */
#include "test_rng.h"

static const struct gpt_ram ram = {mem, MEM_SIZE};
static struct gpt_fetch_memo memo;

static int setup(void **state)
{
    (void)state;
    memset(mem, 0, sizeof(mem));
    memset(&memo, 0, sizeof(memo));
    return 0;
}

/* What the hypervisor's fetch does (vmm/exit/guest_access.c): the memo where valid, else a walk. */
static bool memo_translate(const struct gpt_mode *m, uint64_t la, uint64_t *gpa)
{
    if ((m->cr0 & CR0_PG) && gpt_memo_valid(&memo, m, la)) {
        *gpa = gpt_memo_gpa(&memo, la);
        assert_ptr_equal(gpt_memo_host(&memo, la), mem + *gpa);
        return true;
    }
    return gpt_memo_walk(&memo, m, la, &ram, gpa);
}

/* gpt_translate_fetched's answer as one value: the gpa, or ~0 where it finds none. */
static uint64_t fresh(const struct gpt_mode *m, uint64_t la)
{
    uint64_t gpa;
    return gpt_translate_fetched(m, la, &ram, &gpa) ? gpa : ~0ull;
}

/* memo_translate's, which must be fresh's. */
static uint64_t use(const struct gpt_mode *m, uint64_t la)
{
    uint64_t gpa;
    uint64_t got = memo_translate(m, la, &gpa) ? gpa : ~0ull;
    assert_int_equal(got, fresh(m, la));
    return got;
}

/* ------------------------------------------------------------ tables */

#define LA64 0x00007f8040201abcull /* PML5 index 0, PML4 255, PDPT 1, PD 1, PT 1 */

static unsigned index_at(uint64_t la, unsigned level)
{
    return (la >> (12 + 9 * (level - 1))) & 511;
}

/*
 * An 8-byte-entry walk for la from the table at tables (level top), each
 * next table the following page, ending at level leaf (1: a 4 KiB page; 2
 * and 3 with PS) with page. PAE's top level (top 3, pae) has 4 entries
 * indexed by bits 31:30 and only P. Returns the entry's gpa at each level.
 */
struct chain {
    uint64_t entry_at[6]; /* by level */
};

static struct chain build(uint64_t tables, unsigned top, bool pae, uint64_t la, unsigned leaf,
                          uint64_t page)
{
    struct chain c = {0};
    uint64_t table = tables;
    for (unsigned level = top; level >= leaf; level--) {
        bool pdpt = pae && level == 3;
        uint64_t at = table + (pdpt ? ((uint32_t)la >> 30) : index_at(la, level)) * 8;
        uint64_t next = (table & ~0xfffull) + 0x1000;
        if (level == leaf)
            put64(at, page | P | RW | (leaf > 1 ? PS : 0));
        else
            put64(at, next | P | (pdpt ? 0 : RW));
        c.entry_at[level] = at;
        table = next;
    }
    return c;
}

static struct gpt_mode long_mode(uint64_t cr3, bool la57)
{
    return (struct gpt_mode){.cr0 = CR0_PE | CR0_PG,
                             .cr3 = cr3,
                             .cr4 = CR4_PAE | (la57 ? CR4_LA57 : 0),
                             .efer = EFER_LME | EFER_LMA};
}

static struct gpt_mode pae_mode(uint64_t cr3)
{
    return (struct gpt_mode){.cr0 = CR0_PE | CR0_PG, .cr3 = cr3, .cr4 = CR4_PAE};
}

/* The slots of the walk the memo holds that name a table entry (the others name themselves). */
static unsigned remembered_levels(void)
{
    unsigned n = 0;
    for (unsigned i = 0; i < GPT_FETCH_LEVELS; i++)
        n += memo.walk.entry_at[i] != &memo.walk.entry[i];
    return n;
}

/* A first use walks and remembers; the second is answered by the memo, the same. */
static void expect_remembered(const struct gpt_mode *m, uint64_t la, uint64_t want, unsigned levels)
{
    assert_false(gpt_memo_valid(&memo, m, la));
    assert_int_equal(use(m, la), want);
    assert_true(gpt_memo_valid(&memo, m, la));
    assert_int_equal(remembered_levels(), levels);
    assert_int_equal(use(m, la), want);
}

/* ------------------------------------------------------------ tests */

static void test_empty_memo_matches_nothing(void **state)
{
    (void)state;
    /* Zeroed: its key is CR3 0 and page 0, whose tables are all zero here. */
    struct gpt_mode m = long_mode(0, false);
    assert_false(gpt_memo_valid(&memo, &m, 0));
    m.cr4 = m.efer = 0;
    assert_false(gpt_memo_valid(&memo, &m, 0));
}

static void test_every_mapping_kind(void **state)
{
    (void)state;
    struct gpt_mode m = long_mode(0x10000, false);
    build(0x10000, 4, false, LA64, 1, 0x80000);
    expect_remembered(&m, LA64, 0x80abc, 4);

    /* Large pages at 0: the 4 KiB page of the address in them lies in RAM. */
    memset(&memo, 0, sizeof(memo));
    build(0x10000, 4, false, LA64, 2, 0);
    expect_remembered(&m, LA64, LA64 & 0x1fffff, 3);

    memset(&memo, 0, sizeof(memo));
    build(0x10000, 4, false, LA64, 3, 0);
    expect_remembered(&m, LA64, LA64 & 0x3fffffff, 2);

    memset(&memo, 0, sizeof(memo));
    struct gpt_mode m57 = long_mode(0x20000, true);
    build(0x20000, 5, false, LA64, 1, 0x90000);
    expect_remembered(&m57, LA64, 0x90abc, 5);

    memset(&memo, 0, sizeof(memo));
    struct gpt_mode pae = pae_mode(0x30020);
    build(0x30020, 3, true, 0xc0201abc, 1, 0xa0000);
    expect_remembered(&pae, 0xc0201abc, 0xa0abc, 3);
    build(0x30020, 3, true, 0xc0201abc, 2, 0x200000);
    memset(&memo, 0, sizeof(memo));
    expect_remembered(&pae, 0xc0201abc, 0x201abc, 2);
}

/* 32-bit paging's 4-byte entries and paging off: answered right, never remembered. */
static void test_32_bit_paging_and_paging_off_are_walked_each_time(void **state)
{
    (void)state;
    struct gpt_mode m32 = {.cr0 = CR0_PE | CR0_PG, .cr3 = 0x40000};
    uint32_t la = 0x80403abc;
    put32(0x40000 + (la >> 22) * 4, 0x41000 | P | RW);
    put32(0x41000 + ((la >> 12) & 0x3ff) * 4, 0xb0000 | P | RW);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(use(&m32, la), 0xb0abc);
        assert_false(gpt_memo_valid(&memo, &m32, la));
    }
    put32(0x40000 + (la >> 22) * 4, 0x00400000 | PS | P | RW);
    m32.cr4 = CR4_PSE;
    assert_int_equal(use(&m32, la), 0x00403abc);
    assert_false(gpt_memo_valid(&memo, &m32, la));

    /* A memo filled in long mode, then paging off: the identity, and the memo is emptied. */
    struct gpt_mode m = long_mode(0x10000, false);
    build(0x10000, 4, false, LA64, 1, 0x80000);
    assert_int_equal(use(&m, LA64), 0x80abc);
    struct gpt_mode off = {.cr0 = CR0_PE};
    assert_int_equal(use(&off, LA64), LA64 & 0xffffffff);
    assert_false(gpt_memo_valid(&memo, &m, LA64));
}

/*
 * Two walks for the same address: A (the remembered one) to page_a and B to
 * page_b. Giving A's entry at one level B's value there sends the walk down
 * B's tables from that level on: the answer is page_b, which only a check
 * of that level's entry can see (the entries above and below it, and the
 * key, are A's still). Removing any level's check fails this.
 */
static void each_level_is_checked(unsigned top, bool pae, unsigned leaf, uint64_t la,
                                  uint64_t page_a, uint64_t page_b)
{
    uint64_t cr3 = pae ? 0x10020 : 0x10000;
    struct gpt_mode m = pae ? pae_mode(cr3) : long_mode(cr3, top == 5);
    for (unsigned level = top; level >= leaf; level--) {
        memset(mem, 0, sizeof(mem));
        struct chain a = build(cr3, top, pae, la, leaf, page_a);
        struct chain b = build(pae ? 0x30020 : 0x30000, top, pae, la, leaf, page_b);
        uint64_t offset = la & ((1ull << (12 + 9 * (leaf - 1))) - 1);
        assert_int_equal(use(&m, la), page_a | offset);
        assert_true(gpt_memo_valid(&memo, &m, la));

        put64(a.entry_at[level], get64(b.entry_at[level]));
        assert_false(gpt_memo_valid(&memo, &m, la));
        assert_int_equal(use(&m, la), page_b | offset);
        /* The fresh walk was remembered (A's entries above, B's from the changed one on) if in RAM.
         */
        assert_int_equal(gpt_memo_valid(&memo, &m, la), (page_b | offset) < MEM_SIZE);
        put64(b.entry_at[leaf], page_a | P | RW | (leaf > 1 ? PS : 0));
        if (level == leaf)
            put64(a.entry_at[leaf], page_a | P | RW | (leaf > 1 ? PS : 0));
        assert_false(gpt_memo_valid(&memo, &m, la));
        assert_int_equal(use(&m, la), page_a | offset);
    }
}

static void test_a_changed_entry_at_any_level_walks_afresh(void **state)
{
    (void)state;
    each_level_is_checked(4, false, 1, LA64, 0x80000, 0x90000);
    each_level_is_checked(5, false, 1, LA64, 0x80000, 0x90000);
    each_level_is_checked(4, false, 2, LA64, 0, 0x200000);
    each_level_is_checked(4, false, 3, LA64, 0, 0x40000000);
    each_level_is_checked(3, true, 1, 0xc0201abc, 0x80000, 0x90000);
    each_level_is_checked(3, true, 2, 0xc0201abc, 0, 0x200000);
}

/* An entry made not present: the fresh walk fails, and nothing stale is remembered. */
static void test_an_entry_made_not_present_fails_as_the_walk_does(void **state)
{
    (void)state;
    struct gpt_mode m = long_mode(0x10000, false);
    for (unsigned level = 4; level >= 1; level--) {
        memset(&memo, 0, sizeof(memo));
        struct chain c = build(0x10000, 4, false, LA64, 1, 0x80000);
        assert_int_equal(use(&m, LA64), 0x80abc);
        put64(c.entry_at[level], get64(c.entry_at[level]) & ~P);
        assert_int_equal(use(&m, LA64), ~0ull);
        assert_false(gpt_memo_valid(&memo, &m, LA64));
        put64(c.entry_at[level], get64(c.entry_at[level]) | P);
        assert_false(gpt_memo_valid(&memo, &m, LA64));
        assert_int_equal(use(&m, LA64), 0x80abc);
    }
    /* An entry given PS where it cannot map (a PML4E): the walk's fallback too. */
    struct chain c = build(0x10000, 4, false, LA64, 1, 0x80000);
    put64(c.entry_at[4], get64(c.entry_at[4]) | PS);
    assert_int_equal(use(&m, LA64), ~0ull);
}

/* CR3, the mode bits the walk reads, and the linear page are the key. */
static void test_a_changed_key_walks_afresh(void **state)
{
    (void)state;
    struct gpt_mode m = long_mode(0x10000, false);
    build(0x10000, 4, false, LA64, 1, 0x80000);
    build(0x20000, 4, false, LA64, 1, 0x90000);
    assert_int_equal(use(&m, LA64), 0x80abc);

    /* Another CR3 with other tables. */
    struct gpt_mode other = m;
    other.cr3 = 0x20000;
    assert_false(gpt_memo_valid(&memo, &other, LA64));
    assert_int_equal(use(&other, LA64), 0x90abc);
    assert_int_equal(use(&m, LA64), 0x80abc);

    /* Another page under the same PT, mapped elsewhere. */
    put64(0x13000 + (index_at(LA64, 1) + 1) * 8, 0xa0000 | P | RW);
    assert_false(gpt_memo_valid(&memo, &m, LA64 + 0x1000));
    assert_int_equal(use(&m, LA64 + 0x1000), 0xa0abc);
    /* ... and back: the same page, any offset, is the memo's. */
    assert_int_equal(use(&m, LA64), 0x80abc);
    assert_true(gpt_memo_valid(&memo, &m, (LA64 & ~0xfffull) | 0xff0));
    assert_int_equal(use(&m, (LA64 & ~0xfffull) | 0xff0), 0x80ff0);

    /* LA57 with the same CR3: the PML4 read as a PML5 (index 0, not present here). */
    struct gpt_mode la57 = m;
    la57.cr4 |= CR4_LA57;
    assert_false(gpt_memo_valid(&memo, &la57, LA64));
    assert_int_equal(use(&la57, LA64), ~0ull);
    put64(0x10000, 0x10000 | P | RW); /* PML5E 0: the PML4 itself */
    assert_int_equal(use(&la57, LA64), 0x80abc);
    assert_true(gpt_memo_valid(&memo, &la57, LA64));
    assert_false(gpt_memo_valid(&memo, &m, LA64));

    /* Out of long mode into PAE with the same CR3: PDPTE 0 is PML4E 0, and the walk is shorter. */
    uint32_t la32 = 0x00201abc; /* PDPT 0, PD 1, PT 1 */
    build(0x30000, 4, false, la32, 1, 0xb0000);
    struct gpt_mode l = long_mode(0x30000, false);
    assert_int_equal(use(&l, la32), 0xb0abc);
    struct gpt_mode pae = pae_mode(0x30000);
    assert_false(gpt_memo_valid(&memo, &pae, la32));
    /* PAE: PDPTE (the PML4E) -> PD (the PDPT, entry 1 empty): not present. */
    assert_int_equal(use(&pae, la32), ~0ull);

    /* CR4.PSE matters only without PAE, but is in the key: a change walks. */
    assert_int_equal(use(&m, LA64), 0x80abc);
    struct gpt_mode pse = m;
    pse.cr4 |= CR4_PSE;
    assert_false(gpt_memo_valid(&memo, &pse, LA64));
}

/* What the walk does not read is not in the key: rights, NX, other CR4 bits, the CPL. */
static void test_bits_the_walk_ignores_keep_the_memo(void **state)
{
    (void)state;
    struct gpt_mode m = long_mode(0x10000, false);
    build(0x10000, 4, false, LA64, 1, 0x80000);
    assert_int_equal(use(&m, LA64), 0x80abc);
    struct gpt_mode same = m;
    same.cr0 |= CR0_WP;
    same.cr4 |= CR4_OSXSAVE;
    same.efer |= EFER_NXE;
    same.cpl = 3;
    assert_true(gpt_memo_valid(&memo, &same, LA64));
    assert_int_equal(use(&same, LA64), 0x80abc);
}

/* A page not wholly in guest RAM is answered but not remembered: a use reads it without bounds. */
static void test_a_page_outside_ram_is_not_remembered(void **state)
{
    (void)state;
    struct gpt_mode m = long_mode(0x10000, false);
    build(0x10000, 4, false, LA64, 1, 0x800000);
    assert_int_equal(use(&m, LA64), 0x800abc);
    assert_false(gpt_memo_valid(&memo, &m, LA64));
    /* The last page of RAM is remembered; with RAM ending inside it, it is not. */
    build(0x10000, 4, false, LA64, 1, MEM_SIZE - 0x1000);
    assert_int_equal(use(&m, LA64), MEM_SIZE - 0x1000 + 0xabc);
    assert_true(gpt_memo_valid(&memo, &m, LA64));
    struct gpt_ram short_ram = {mem, MEM_SIZE - 8};
    uint64_t gpa;
    assert_true(gpt_memo_walk(&memo, &m, LA64, &short_ram, &gpa));
    assert_int_equal(gpa, MEM_SIZE - 0x1000 + 0xabc);
    assert_false(gpt_memo_valid(&memo, &m, LA64));
}

/*
 * Random tables, modes and addresses, with random edits between uses: half
 * of them to an entry the memo remembers. Every use gives the fresh walk's
 * answer (use), and the memo both answers and walks.
 */

/* The gpa of an entry the memo remembers, the first from slot choice on. */
static uint64_t remembered_entry(uint64_t choice)
{
    for (unsigned k = 0; k < GPT_FETCH_LEVELS; k++) {
        unsigned slot = (unsigned)((choice + k) % GPT_FETCH_LEVELS);
        if (memo.walk.entry_at[slot] != &memo.walk.entry[slot])
            return (uint64_t)((const uint8_t *)memo.walk.entry_at[slot] - mem);
    }
    fail_msg("a remembered walk without an entry");
    return 0;
}

#define SMALL 0x8000 /* the tables' part of mem: 8 pages, so that walks often translate */

static uint64_t random_entry(void)
{
    uint64_t r = rng();
    uint64_t e = ((r % (SMALL / 0x1000 + 1)) << 12) | (r >> 50 & RW);
    if (r & (15ull << 40))
        e |= P;
    if (!(r & (7ull << 44)))
        e |= PS;
    return e;
}

static void test_random_tables_and_edits(void **state)
{
    (void)state;
    rng_state = 0x2545f4914f6cdd1dull;
    unsigned answered = 0, walked = 0, translated = 0;
    for (int round = 0; round < 300; round++) {
        for (uint64_t at = 0; at < SMALL; at += 8)
            put64(at, random_entry());
        memset(&memo, 0, sizeof(memo));
        static const uint64_t cr4s[] = {CR4_PAE, CR4_PAE | CR4_LA57, CR4_PAE};
        unsigned kind = round % 3; /* 4-level, 5-level, PAE */
        struct gpt_mode m = {.cr0 = CR0_PE | CR0_PG,
                             .cr3 = (rng() % (SMALL / 0x1000)) << 12,
                             .cr4 = cr4s[kind],
                             .efer = kind < 2 ? EFER_LME | EFER_LMA : 0};
        /* Addresses whose indices stay small, so that the walks meet; most translate. */
        uint64_t las[4];
        for (int i = 0; i < 4; i++) {
            for (int tries = 0; tries < 64; tries++) {
                las[i] = (rng() & 0x0000010101010fffull) | (rng() & 0x3000);
                if (fresh(&m, las[i]) != ~0ull)
                    break;
            }
        }
        uint64_t undo_at = 0, undo_value = 0; /* an edit to put back: the tables' A-B-A */
        for (int step = 0; step < 200; step++) {
            uint64_t la = las[(rng() & 3) ? 0 : rng() % 4];
            bool was_valid = gpt_memo_valid(&memo, &m, la);
            uint64_t got = use(&m, la);
            answered += was_valid;
            walked += !was_valid;
            translated += got != ~0ull;
            uint64_t r = rng();
            if (undo_at && (r & 1)) {
                put64(undo_at, undo_value);
                undo_at = 0;
            } else if ((r & 6) == 0 && memo.mode) {
                uint64_t at = remembered_entry(r >> 8);
                undo_at = at;
                undo_value = get64(at);
                put64(at, (r & 0x10) ? random_entry() : undo_value ^ (1ull << (r >> 16 & 63)));
            } else if ((r & 6) == 2) {
                put64((rng() % (SMALL / 8)) * 8, random_entry());
            } else if ((r & 0x3e) == 4) {
                m.cr3 = (rng() % (SMALL / 0x1000)) << 12;
            }
        }
    }
    assert_true(answered > 8000);
    assert_true(walked > 20000);
    assert_true(translated > 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_empty_memo_matches_nothing, setup),
        cmocka_unit_test_setup(test_every_mapping_kind, setup),
        cmocka_unit_test_setup(test_32_bit_paging_and_paging_off_are_walked_each_time, setup),
        cmocka_unit_test_setup(test_a_changed_entry_at_any_level_walks_afresh, setup),
        cmocka_unit_test_setup(test_an_entry_made_not_present_fails_as_the_walk_does, setup),
        cmocka_unit_test_setup(test_a_changed_key_walks_afresh, setup),
        cmocka_unit_test_setup(test_bits_the_walk_ignores_keep_the_memo, setup),
        cmocka_unit_test_setup(test_a_page_outside_ram_is_not_remembered, setup),
        cmocka_unit_test_setup(test_random_tables_and_edits, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest page-table walker, on a byte array standing in for guest memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/regs.h"
#include "vmm/exit/gpt.h"

#define P   (1ull << 0)
#define RW  (1ull << 1)
#define US  (1ull << 2)
#define PS  (1ull << 7)
#define XD  (1ull << 63)
#define ALL (P | RW | US)

#define BIT(n) (1ull << (n))

#define MEM_SIZE 0x10000

static uint8_t mem[MEM_SIZE];

#include "test_mem.h" /* after mem */
#include "test_rng.h"

static unsigned reads4, reads8;

static bool read_mem(uint64_t gpa, void *buf, size_t len, void *ctx)
{
    (void)ctx;
    assert_true(len == 4 || len == 8);
    assert_int_equal(gpa % len, 0); /* entries are naturally aligned */
    if (gpa > MEM_SIZE || MEM_SIZE - gpa < len)
        return false;
    memcpy(buf, mem + gpa, len);
    if (len == 4)
        reads4++;
    else
        reads8++;
    return true;
}

static bool read_never(uint64_t gpa, void *buf, size_t len, void *ctx)
{
    (void)gpa;
    (void)buf;
    (void)len;
    (void)ctx;
    return false;
}

static int setup(void **state)
{
    (void)state;
    memset(mem, 0, sizeof(mem));
    reads4 = reads8 = 0;
    return 0;
}

/*
 * gpt_translate_fetched's contract against a full walk's result r (and gpa
 * when r is GPT_OK): the same gpa where the full walk translates; false where
 * an entry is not present or a table lies outside ram; either where only
 * rights or reserved bits failed.
 */
static void check_fetched(const struct gpt_mode *m, uint64_t la, const struct gpt_ram *ram,
                          enum gpt_result r, uint64_t gpa)
{
    uint64_t fetched = 0;
    bool found = gpt_translate_fetched(m, la, ram, &fetched);
    if (r == GPT_OK) {
        assert_true(found);
        assert_int_equal(fetched, gpa);
    } else if (r == GPT_NOT_PRESENT || r == GPT_BAD_TABLE) {
        assert_false(found);
    }
    if (found)
        assert_int_equal(fetched & 0xfff, la & 0xfff);
}

/*
 * The readers walk the same tables: every test checks gpt_translate_ram
 * against gpt_translate (result and gpa), and gpt_translate_fetched against
 * both (check_fetched), as well as against its own want.
 */
static enum gpt_result xlate(const struct gpt_mode *m, uint64_t la, unsigned access, uint64_t *gpa)
{
    *gpa = 0;
    enum gpt_result r = gpt_translate(m, la, access, read_mem, NULL, gpa);
    struct gpt_ram ram = {mem, MEM_SIZE};
    uint64_t direct = 0;
    assert_int_equal(gpt_translate_ram(m, la, access, &ram, &direct), r);
    if (r == GPT_OK)
        assert_int_equal(direct, *gpa);
    check_fetched(m, la, &ram, r, *gpa);
    return r;
}

/* gpt_translate_fetched on the test memory: the gpa, or ~0 when it found none. */
static uint64_t fetched(const struct gpt_mode *m, uint64_t la)
{
    struct gpt_ram ram = {mem, MEM_SIZE};
    uint64_t gpa;
    return gpt_translate_fetched(m, la, &ram, &gpa) ? gpa : ~0ull;
}

/* Translates for reading and checks the result against want (a gpa). */
static void expect_gpa(const struct gpt_mode *m, uint64_t la, uint64_t want)
{
    uint64_t gpa;
    assert_int_equal(xlate(m, la, 0, &gpa), GPT_OK);
    assert_int_equal(gpa, want);
}

static void expect_fail(const struct gpt_mode *m, uint64_t la, unsigned access,
                        enum gpt_result want)
{
    uint64_t gpa;
    assert_int_equal(xlate(m, la, access, &gpa), want);
}

/* ------------------------------------------------------------ paging off */

static void test_paging_off(void **state)
{
    (void)state;
    struct gpt_mode m = {.cr0 = CR0_PE, .cr4 = CR4_PAE, .efer = EFER_LME, .cpl = 3};
    uint64_t gpa;
    /* No table is read, and the address is 32 bits even with LME set (LMA needs PG). */
    assert_int_equal(gpt_translate(&m, 0x123456789ull, GPT_ACCESS_WRITE | GPT_ACCESS_FETCH,
                                   read_never, NULL, &gpa),
                     GPT_OK);
    assert_int_equal(gpa, 0x23456789);
    m.cr0 = 0;
    assert_int_equal(gpt_translate(&m, 0xfffff, 0, read_never, NULL, &gpa), GPT_OK);
    assert_int_equal(gpa, 0xfffff);
}

/* ------------------------------------------------------------ 32-bit */

/* PD at 0x1000, PT at 0x2000. */
#define LA32     0x80403abcu
#define PDE32_AT (0x1000 + (LA32 >> 22) * 4)
#define PTE32_AT (0x2000 + ((LA32 >> 12) & 0x3ff) * 4)
#define MODE32(x)                                                                                  \
    {                                                                                              \
        .cr0 = CR0_PE | CR0_PG | (x), .cr3 = 0x1000                                                \
    }

static void map32(uint32_t pde_flags, uint32_t pte_flags)
{
    put32(PDE32_AT, 0x2000 | pde_flags);
    put32(PTE32_AT, 0xfedcb000u | pte_flags);
}

static void test_32bit_4k(void **state)
{
    (void)state;
    struct gpt_mode m = MODE32(0);
    map32(ALL, ALL);
    expect_gpa(&m, LA32, 0xfedcbabc);
    assert_int_equal(reads4, 2);
    assert_int_equal(reads8, 0);
    /* Linear addresses are 32 bits; CR3's low (PCD/PWT) bits are not address bits. */
    m.cr3 = 0x1018;
    expect_gpa(&m, 0xffffffff00000000ull | LA32, 0xfedcbabc);
}

static void test_32bit_4m(void **state)
{
    (void)state;
    struct gpt_mode m = MODE32(0);
    m.cr4 = CR4_PSE;
    put32(PDE32_AT, 0x7fc00000u | PS | ALL);
    expect_gpa(&m, LA32, 0x7fc00000u | (LA32 & 0x3fffff));
    assert_int_equal(reads4, 1);
    /* PSE-36: PDE bits 20:13 are physical bits 39:32. */
    put32(PDE32_AT, 0x7fc00000u | (0xa5u << 13) | PS | ALL);
    expect_gpa(&m, LA32, 0xa500000000ull | 0x7fc00000u | (LA32 & 0x3fffff));
    put32(PDE32_AT, 0x7fc00000u | BIT(21) | PS | ALL);
    expect_fail(&m, LA32, 0, GPT_RESERVED);
}

static void test_32bit_ps_ignored_without_pse(void **state)
{
    (void)state;
    struct gpt_mode m = MODE32(0);
    map32(PS | ALL, ALL);
    expect_gpa(&m, LA32, 0xfedcbabc);
    assert_int_equal(reads4, 2);
    /* Bit 21 is an address bit of the table then, not reserved. */
    put32(PDE32_AT, 0x200000 | PS | ALL);
    expect_fail(&m, LA32, 0, GPT_BAD_TABLE);
}

static void test_32bit_not_present(void **state)
{
    (void)state;
    struct gpt_mode m = MODE32(0);
    map32(ALL & ~P, ALL);
    expect_fail(&m, LA32, 0, GPT_NOT_PRESENT);
    map32(ALL, ALL & ~P);
    expect_fail(&m, LA32, 0, GPT_NOT_PRESENT);
    m.cr4 = CR4_PSE;
    put32(PDE32_AT, 0x7fc00000u | PS | RW | US);
    expect_fail(&m, LA32, 0, GPT_NOT_PRESENT);
}

static void test_32bit_rights(void **state)
{
    (void)state;
    struct gpt_mode m = MODE32(0);
    map32(P | US, ALL); /* read-only at the PDE */
    expect_gpa(&m, LA32, 0xfedcbabc);
    uint64_t gpa;
    assert_int_equal(xlate(&m, LA32, GPT_ACCESS_WRITE, &gpa), GPT_OK);
    m.cr0 |= CR0_WP;
    expect_fail(&m, LA32, GPT_ACCESS_WRITE, GPT_PROTECTION);
    map32(ALL, P | RW); /* supervisor at the PTE */
    m.cpl = 3;
    expect_fail(&m, LA32, 0, GPT_PROTECTION);
    m.cpl = 0;
    expect_gpa(&m, LA32, 0xfedcbabc);
    /* 32-bit paging has no XD: fetches are allowed. */
    assert_int_equal(xlate(&m, LA32, GPT_ACCESS_FETCH, &gpa), GPT_OK);
}

/* ------------------------------------------------------------ PAE */

/* CR3 0x1020 (32-byte aligned PDPT), PD at 0x2000, PT at 0x3000. */
#define LAPAE     0xc0a03abcu
#define PDPTE_AT  (0x1020 + (LAPAE >> 30) * 8)
#define PDEPAE_AT (0x2000 + ((LAPAE >> 21) & 511) * 8)
#define PTEPAE_AT (0x3000 + ((LAPAE >> 12) & 511) * 8)
#define PAE_4K    0x0000001234567000ull
#define PAE_2M    0x0000000440600000ull
#define MODEPAE(x)                                                                                 \
    {                                                                                              \
        .cr0 = CR0_PE | CR0_PG | (x), .cr3 = 0x1020, .cr4 = CR4_PAE                                \
    }

static void mappae(uint64_t pdpte_flags, uint64_t pde_flags, uint64_t pte_flags)
{
    put64(PDPTE_AT, 0x2000 | pdpte_flags);
    put64(PDEPAE_AT, 0x3000 | pde_flags);
    put64(PTEPAE_AT, PAE_4K | pte_flags);
}

static void test_pae_4k(void **state)
{
    (void)state;
    struct gpt_mode m = MODEPAE(0);
    mappae(P, ALL, ALL);
    expect_gpa(&m, LAPAE, PAE_4K | 0xabc);
    assert_int_equal(reads4, 0);
    assert_int_equal(reads8, 3);
    /* Bit 7 of a PTE is PAT, not PS or reserved. */
    put64(PTEPAE_AT, PAE_4K | BIT(7) | ALL);
    expect_gpa(&m, LAPAE, PAE_4K | 0xabc);
}

static void test_pae_2m(void **state)
{
    (void)state;
    struct gpt_mode m = MODEPAE(0);
    mappae(P, 0, 0);
    put64(PDEPAE_AT, PAE_2M | PS | ALL);
    expect_gpa(&m, LAPAE, PAE_2M | (LAPAE & 0x1fffff));
    assert_int_equal(reads8, 2);
    /* Bit 12 is PAT; bits 20:13 are reserved. */
    put64(PDEPAE_AT, PAE_2M | BIT(12) | PS | ALL);
    expect_gpa(&m, LAPAE, PAE_2M | (LAPAE & 0x1fffff));
    for (int bit = 13; bit <= 20; bit++) {
        put64(PDEPAE_AT, PAE_2M | BIT(bit) | PS | ALL);
        expect_fail(&m, LAPAE, 0, GPT_RESERVED);
    }
}

static void test_pae_pdpte(void **state)
{
    (void)state;
    struct gpt_mode m = MODEPAE(0);
    static const int reserved[] = {1, 2, 6, 7, 8, 52, 57, 62, 63};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
        mappae(P | BIT(reserved[i]), ALL, ALL);
        m.efer = 0;
        expect_fail(&m, LAPAE, 0, GPT_RESERVED);
        /* NXE does not make PDPTE bit 63 an XD bit. */
        m.efer = EFER_NXE;
        expect_fail(&m, LAPAE, 0, GPT_RESERVED);
    }
    /* PWT, PCD, the ignored bits 11:9 and bit 5 (accessed, as AMD CPUs set it) are allowed. */
    mappae(P | BIT(3) | BIT(4) | BIT(5) | BIT(9) | BIT(10) | BIT(11), ALL, ALL);
    expect_gpa(&m, LAPAE, PAE_4K | 0xabc);
    /* PDPTEs grant all rights: a user write goes through. */
    mappae(P, ALL, ALL);
    m.cpl = 3;
    m.cr0 |= CR0_WP;
    uint64_t gpa;
    assert_int_equal(xlate(&m, LAPAE, GPT_ACCESS_WRITE, &gpa), GPT_OK);
    assert_int_equal(gpa, PAE_4K | 0xabc);
}

static void test_pae_reserved_and_nx(void **state)
{
    (void)state;
    struct gpt_mode m = MODEPAE(0);
    /* Bits 62:52 are reserved in PAE entries (MAXPHYADDR 52). */
    mappae(P, ALL | BIT(52), ALL);
    expect_fail(&m, LAPAE, 0, GPT_RESERVED);
    mappae(P, ALL, ALL | BIT(62));
    expect_fail(&m, LAPAE, 0, GPT_RESERVED);
    /* XD is reserved without EFER.NXE. */
    mappae(P, ALL, ALL | XD);
    expect_fail(&m, LAPAE, 0, GPT_RESERVED);
    m.efer = EFER_NXE;
    expect_gpa(&m, LAPAE, PAE_4K | 0xabc);
    expect_fail(&m, LAPAE, GPT_ACCESS_FETCH, GPT_PROTECTION);
}

static void test_pae_not_present_and_bad_table(void **state)
{
    (void)state;
    struct gpt_mode m = MODEPAE(0);
    mappae(0, ALL, ALL);
    expect_fail(&m, LAPAE, 0, GPT_NOT_PRESENT);
    mappae(P, ALL & ~P, ALL);
    expect_fail(&m, LAPAE, 0, GPT_NOT_PRESENT);
    mappae(P, ALL, ALL & ~P);
    expect_fail(&m, LAPAE, 0, GPT_NOT_PRESENT);
    /* The PDPT base is CR3 bits 31:5; higher CR3 bits are not part of it. */
    mappae(P, ALL, ALL);
    m.cr3 = 0x100001020ull;
    expect_gpa(&m, LAPAE, PAE_4K | 0xabc);
    m.cr3 = 0xf0001020;
    expect_fail(&m, LAPAE, 0, GPT_BAD_TABLE);
}

/* ------------------------------------------------------------ 4-level */

/* PML4 at 0x1000, PDPT at 0x2000, PD at 0x3000, PT at 0x4000. */
#define LA64         0xffff8123456789abull
#define IDX(la, lvl) (((la) >> (12 + 9 * ((lvl)-1))) & 511)
#define E64_AT(lvl)  ((uint64_t)(0x1000 * (5 - (lvl))) + IDX(LA64, lvl) * 8)
#define LONG_4K      0x000f123456789000ull
#define LONG_2M      0x000f123456600000ull
#define LONG_1G      0x000f1234c0000000ull
#define MODE64(x)                                                                                  \
    {                                                                                              \
        .cr0 = CR0_PE | CR0_PG | (x), .cr3 = 0x1000, .cr4 = CR4_PAE, .efer = EFER_LME | EFER_LMA   \
    }

/* flags[lvl] for the entry at level lvl (4 = PML4E, 1 = PTE). */
static void map64(uint64_t f4, uint64_t f3, uint64_t f2, uint64_t f1)
{
    put64(E64_AT(4), 0x2000 | f4);
    put64(E64_AT(3), 0x3000 | f3);
    put64(E64_AT(2), 0x4000 | f2);
    put64(E64_AT(1), LONG_4K | f1);
}

static void test_long_4k(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    map64(ALL, ALL, ALL, ALL);
    expect_gpa(&m, LA64, LONG_4K | 0x9ab);
    assert_int_equal(reads4, 0);
    assert_int_equal(reads8, 4);
    /* CR3's PCD/PWT (or PCID) bits are not address bits. */
    m.cr3 = 0x1018;
    expect_gpa(&m, LA64, LONG_4K | 0x9ab);
    /* PTE bit 7 is PAT; bits 62:52 and 11:9 are left to software. */
    put64(E64_AT(1), LONG_4K | BIT(7) | BIT(52) | BIT(58) | BIT(62) | BIT(9) | ALL);
    put64(E64_AT(2), 0x4000 | BIT(57) | ALL);
    expect_gpa(&m, LA64, LONG_4K | 0x9ab);
}

static void test_long_2m(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    map64(ALL, ALL, 0, 0);
    put64(E64_AT(2), LONG_2M | PS | ALL);
    expect_gpa(&m, LA64, LONG_2M | (LA64 & 0x1fffff));
    assert_int_equal(reads8, 3);
    put64(E64_AT(2), LONG_2M | BIT(12) | PS | ALL);
    expect_gpa(&m, LA64, LONG_2M | (LA64 & 0x1fffff));
    for (int bit = 13; bit <= 20; bit++) {
        put64(E64_AT(2), LONG_2M | BIT(bit) | PS | ALL);
        expect_fail(&m, LA64, 0, GPT_RESERVED);
    }
}

static void test_long_1g(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    map64(ALL, 0, 0, 0);
    put64(E64_AT(3), LONG_1G | PS | ALL);
    expect_gpa(&m, LA64, LONG_1G | (LA64 & 0x3fffffff));
    assert_int_equal(reads8, 2);
    put64(E64_AT(3), LONG_1G | BIT(12) | PS | ALL);
    expect_gpa(&m, LA64, LONG_1G | (LA64 & 0x3fffffff));
    for (int bit = 13; bit <= 29; bit++) {
        put64(E64_AT(3), LONG_1G | BIT(bit) | PS | ALL);
        expect_fail(&m, LA64, 0, GPT_RESERVED);
    }
}

static void test_long_not_present(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    for (int lvl = 4; lvl >= 1; lvl--) {
        map64(ALL, ALL, ALL, ALL);
        put64(E64_AT(lvl), get64(E64_AT(lvl)) & ~P);
        expect_fail(&m, LA64, 0, GPT_NOT_PRESENT);
    }
    /* A non-present entry's other bits do not matter, reserved ones included. */
    map64(ALL, ALL, ALL, RW | US | XD | BIT(7));
    expect_fail(&m, LA64, 0, GPT_NOT_PRESENT);
}

static void test_long_reserved(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    /* PML4Es cannot map pages. */
    map64(ALL | PS, ALL, ALL, ALL);
    expect_fail(&m, LA64, 0, GPT_RESERVED);
    /* XD at any level is reserved without EFER.NXE. */
    for (int lvl = 4; lvl >= 1; lvl--) {
        map64(ALL, ALL, ALL, ALL);
        put64(E64_AT(lvl), get64(E64_AT(lvl)) | XD);
        m.efer &= ~EFER_NXE;
        expect_fail(&m, LA64, 0, GPT_RESERVED);
        m.efer |= EFER_NXE;
        expect_gpa(&m, LA64, LONG_4K | 0x9ab);
    }
}

/* ------------------------------------------------------------ 5-level */

/* PML5 at 0x5000 above the 4-level tables; LA57 holds bits 56:48 that 4 levels ignore. */
#define LA57      0xff5a8123456789abull
#define E57_PML5E (0x5000 + IDX(LA57, 5) * 8)
#define MODE57(x)                                                                                  \
    {                                                                                              \
        .cr0 = CR0_PE | CR0_PG | (x), .cr3 = 0x5000, .cr4 = CR4_PAE | CR4_LA57,                    \
        .efer = EFER_LME | EFER_LMA                                                                \
    }

static void test_5level_4k(void **state)
{
    (void)state;
    _Static_assert(IDX(LA57, 4) == IDX(LA64, 4) && IDX(LA57, 1) == IDX(LA64, 1), "same path");
    struct gpt_mode m = MODE57(0);
    map64(ALL, ALL, ALL, ALL);
    put64(E57_PML5E, 0x1000 | ALL);
    expect_gpa(&m, LA57, LONG_4K | 0x9ab);
    assert_int_equal(reads8, 5);
    /* Without CR4.LA57 the walk starts at CR3 as a PML4: here the PML5, so it fails. */
    m.cr4 &= ~CR4_LA57;
    expect_fail(&m, LA57, 0, GPT_NOT_PRESENT);
    m.cr4 |= CR4_LA57;
    /* 1 GiB pages still come from the PDPT. */
    put64(E64_AT(3), LONG_1G | PS | ALL);
    expect_gpa(&m, LA57, LONG_1G | (LA57 & 0x3fffffff));
}

static void test_5level_entries(void **state)
{
    (void)state;
    struct gpt_mode m = MODE57(0);
    map64(ALL, ALL, ALL, ALL);
    put64(E57_PML5E, 0x1000);
    expect_fail(&m, LA57, 0, GPT_NOT_PRESENT);
    /* A PML5E cannot map a page either. */
    put64(E57_PML5E, 0x1000 | PS | ALL);
    expect_fail(&m, LA57, 0, GPT_RESERVED);
    put64(E57_PML5E, 0x1000 | XD | ALL);
    expect_fail(&m, LA57, 0, GPT_RESERVED);
    m.efer |= EFER_NXE;
    expect_gpa(&m, LA57, LONG_4K | 0x9ab);
    expect_fail(&m, LA57, GPT_ACCESS_FETCH, GPT_PROTECTION);
    /* Rights accumulate over all five levels. */
    put64(E57_PML5E, 0x1000 | P | US);
    expect_gpa(&m, LA57, LONG_4K | 0x9ab);
    m.cr0 |= CR0_WP;
    expect_fail(&m, LA57, GPT_ACCESS_WRITE, GPT_PROTECTION);
    put64(E57_PML5E, 0x1000 | P | RW);
    m.cpl = 3;
    expect_fail(&m, LA57, 0, GPT_PROTECTION);
    m.cr3 = 0x123000;
    m.cpl = 0;
    expect_fail(&m, LA57, 0, GPT_BAD_TABLE);
}

/* ------------------------------------------------------------ rights */

static void test_write_protect(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    uint64_t gpa;
    for (int lvl = 4; lvl >= 1; lvl--) {
        map64(ALL, ALL, ALL, ALL);
        put64(E64_AT(lvl), get64(E64_AT(lvl)) & ~RW);
        m.cr0 &= ~CR0_WP;
        m.cpl = 0;
        assert_int_equal(xlate(&m, LA64, GPT_ACCESS_WRITE, &gpa), GPT_OK);
        assert_int_equal(gpa, LONG_4K | 0x9ab);
        m.cpl = 3;
        expect_fail(&m, LA64, GPT_ACCESS_WRITE, GPT_PROTECTION);
        expect_gpa(&m, LA64, LONG_4K | 0x9ab);
        m.cr0 |= CR0_WP;
        m.cpl = 0;
        expect_fail(&m, LA64, GPT_ACCESS_WRITE, GPT_PROTECTION);
        expect_gpa(&m, LA64, LONG_4K | 0x9ab);
    }
    /* Writable everywhere: allowed at any CPL. */
    map64(ALL, ALL, ALL, ALL);
    m.cpl = 3;
    assert_int_equal(xlate(&m, LA64, GPT_ACCESS_WRITE, &gpa), GPT_OK);
}

static void test_user_supervisor(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    for (int lvl = 4; lvl >= 1; lvl--) {
        map64(ALL, ALL, ALL, ALL);
        put64(E64_AT(lvl), get64(E64_AT(lvl)) & ~US);
        for (unsigned cpl = 0; cpl < 3; cpl++) {
            m.cpl = cpl;
            expect_gpa(&m, LA64, LONG_4K | 0x9ab);
        }
        m.cpl = 3;
        expect_fail(&m, LA64, 0, GPT_PROTECTION);
        expect_fail(&m, LA64, GPT_ACCESS_FETCH, GPT_PROTECTION);
    }
    map64(ALL, ALL, ALL, ALL);
    m.cpl = 3;
    expect_gpa(&m, LA64, LONG_4K | 0x9ab);
}

static void test_nx_fetch(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    m.efer |= EFER_NXE;
    uint64_t gpa;
    for (int lvl = 4; lvl >= 1; lvl--) {
        map64(ALL, ALL, ALL, ALL);
        put64(E64_AT(lvl), get64(E64_AT(lvl)) | XD);
        expect_fail(&m, LA64, GPT_ACCESS_FETCH, GPT_PROTECTION);
        assert_int_equal(xlate(&m, LA64, GPT_ACCESS_WRITE, &gpa), GPT_OK);
        expect_gpa(&m, LA64, LONG_4K | 0x9ab);
    }
    map64(ALL, ALL, ALL, ALL);
    assert_int_equal(xlate(&m, LA64, GPT_ACCESS_FETCH, &gpa), GPT_OK);
    assert_int_equal(gpa, LONG_4K | 0x9ab);
    /* On a 2M page too. */
    put64(E64_AT(2), LONG_2M | XD | PS | ALL);
    expect_fail(&m, LA64, GPT_ACCESS_FETCH, GPT_PROTECTION);
}

/* ------------------------------------------------------------ callback */

static void test_bad_table(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    uint64_t gpa;
    assert_int_equal(gpt_translate(&m, LA64, 0, read_never, NULL, &gpa), GPT_BAD_TABLE);
    struct gpt_mode m32 = MODE32(0);
    assert_int_equal(gpt_translate(&m32, LA32, 0, read_never, NULL, &gpa), GPT_BAD_TABLE);
    struct gpt_mode pae = MODEPAE(0);
    assert_int_equal(gpt_translate(&pae, LAPAE, 0, read_never, NULL, &gpa), GPT_BAD_TABLE);
    /* A table pointer outside guest memory, at each level. */
    static const uint64_t outside = 0x123000;
    for (int lvl = 4; lvl >= 2; lvl--) {
        map64(ALL, ALL, ALL, ALL);
        put64(E64_AT(lvl), (get64(E64_AT(lvl)) & ~0xfff000ull) | outside);
        expect_fail(&m, LA64, 0, GPT_BAD_TABLE);
    }
    m.cr3 = outside;
    expect_fail(&m, LA64, 0, GPT_BAD_TABLE);
    map32(ALL, ALL);
    put32(PDE32_AT, (uint32_t)outside | ALL);
    expect_fail(&m32, LA32, 0, GPT_BAD_TABLE);
}

/* ------------------------------------------------------------ the fetch walk */

static void test_fetched_every_mapping_kind(void **state)
{
    (void)state;
    struct gpt_mode off = {.cr0 = CR0_PE};
    assert_int_equal(fetched(&off, 0x123456789ull), 0x23456789);

    struct gpt_mode m32 = MODE32(0);
    map32(ALL, ALL);
    assert_int_equal(fetched(&m32, LA32), 0xfedcbabc);
    m32.cr4 = CR4_PSE;
    put32(PDE32_AT, 0x7fc00000u | (0xa5u << 13) | PS | ALL);
    assert_int_equal(fetched(&m32, LA32), 0xa500000000ull | 0x7fc00000u | (LA32 & 0x3fffff));

    struct gpt_mode pae = MODEPAE(0);
    mappae(P, ALL, ALL | BIT(7));
    assert_int_equal(fetched(&pae, LAPAE), PAE_4K | 0xabc);
    put64(PDEPAE_AT, PAE_2M | BIT(12) | PS | ALL);
    assert_int_equal(fetched(&pae, LAPAE), PAE_2M | (LAPAE & 0x1fffff));

    struct gpt_mode m64 = MODE64(0);
    map64(ALL, ALL, ALL, ALL | BIT(7));
    assert_int_equal(fetched(&m64, LA64), LONG_4K | 0x9ab);
    put64(E64_AT(2), LONG_2M | PS | ALL);
    assert_int_equal(fetched(&m64, LA64), LONG_2M | (LA64 & 0x1fffff));
    put64(E64_AT(3), LONG_1G | PS | ALL);
    assert_int_equal(fetched(&m64, LA64), LONG_1G | (LA64 & 0x3fffffff));

    struct gpt_mode m57 = MODE57(0);
    map64(ALL, ALL, ALL, ALL);
    put64(E57_PML5E, 0x1000 | ALL);
    assert_int_equal(fetched(&m57, LA57), LONG_4K | 0x9ab);
}

static void test_fetched_falls_back(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    for (int lvl = 4; lvl >= 1; lvl--) {
        map64(ALL, ALL, ALL, ALL);
        put64(E64_AT(lvl), get64(E64_AT(lvl)) & ~P);
        assert_int_equal(fetched(&m, LA64), ~0ull);
    }
    /* A table outside guest memory, at each level and at CR3. */
    for (int lvl = 4; lvl >= 2; lvl--) {
        map64(ALL, ALL, ALL, ALL);
        put64(E64_AT(lvl), (get64(E64_AT(lvl)) & ~0xfff000ull) | 0x123000);
        assert_int_equal(fetched(&m, LA64), ~0ull);
    }
    map64(ALL, ALL, ALL, ALL);
    m.cr3 = 0x123000;
    assert_int_equal(fetched(&m, LA64), ~0ull);
    /* PS where no page can be mapped: a PML4E, a PML5E, a PAE PDPTE. */
    m.cr3 = 0x1000;
    put64(E64_AT(4), 0x2000 | PS | ALL);
    assert_int_equal(fetched(&m, LA64), ~0ull);
    struct gpt_mode m57 = MODE57(0);
    map64(ALL, ALL, ALL, ALL);
    put64(E57_PML5E, 0x1000 | PS | ALL);
    assert_int_equal(fetched(&m57, LA57), ~0ull);
    struct gpt_mode pae = MODEPAE(0);
    mappae(P | PS, ALL, ALL);
    assert_int_equal(fetched(&pae, LAPAE), ~0ull);
    /* 32-bit: not present at either level; without CR4.PSE, PS points to a table. */
    struct gpt_mode m32 = MODE32(0);
    map32(ALL & ~P, ALL);
    assert_int_equal(fetched(&m32, LA32), ~0ull);
    map32(ALL, ALL & ~P);
    assert_int_equal(fetched(&m32, LA32), ~0ull);
    put32(PDE32_AT, 0x200000 | PS | ALL);
    assert_int_equal(fetched(&m32, LA32), ~0ull);
}

/* Rights and reserved bits are the full walk's business: the CPU just fetched through them. */
static void test_fetched_ignores_rights_and_reserved_bits(void **state)
{
    (void)state;
    struct gpt_mode m = MODE64(0);
    m.efer |= EFER_NXE;
    m.cpl = 3;
    map64(ALL, ALL, P | RW, ALL | XD);
    expect_fail(&m, LA64, GPT_ACCESS_FETCH, GPT_PROTECTION);
    assert_int_equal(fetched(&m, LA64), LONG_4K | 0x9ab);
    put64(E64_AT(2), LONG_2M | BIT(13) | PS | ALL);
    expect_fail(&m, LA64, 0, GPT_RESERVED);
    assert_int_equal(fetched(&m, LA64), LONG_2M | (LA64 & 0x1fffff));
}

/*
 * Guest RAM that ends inside the last entry the walk reads: it must not read
 * past the end. Each RAM is an exactly sized heap block, so AddressSanitizer
 * would see such a read.
 */
static void test_fetched_stays_in_ram(void **state)
{
    (void)state;
    /* Index 511 at every level: PML4 at 0x1000 ... PT at 0x4000, the PTE at 0x4ff8. */
    uint64_t la =
        0xffffull << 48 | 511ull << 39 | 511ull << 30 | 511ull << 21 | 511ull << 12 | 0x123;
    struct gpt_mode m = MODE64(0);
    /* 32-bit paging: its PD at 0x4000, the last PDE at 0x4ffc, pointing to a PT at 0x1000. */
    struct gpt_mode m32 = {.cr0 = CR0_PE | CR0_PG, .cr3 = 0x4000};
    uint32_t la32 = 0xffc00123u;
    for (size_t size = 0x4ff8; size <= 0x5000; size++) {
        uint8_t *bytes = calloc(1, size);
        for (uint64_t t = 0x1000; t < 0x4000; t += 0x1000) {
            uint64_t e = (t + 0x1000) | ALL;
            memcpy(bytes + t + 0xff8, &e, 8);
        }
        struct gpt_ram ram = {bytes, size};
        uint64_t gpa = 0;
        if (size < 0x5000) {
            assert_false(gpt_translate_fetched(&m, la, &ram, &gpa));
            assert_false(gpt_translate_fetched(&m32, la32, &ram, &gpa));
        } else {
            uint64_t pte = 0x7000 | ALL;
            memcpy(bytes + 0x4ff8, &pte, 8);
            assert_true(gpt_translate_fetched(&m, la, &ram, &gpa));
            assert_int_equal(gpa, 0x7123);
            /* The PDE is bytes 0x4ffc-0x4fff (the PTE's high half, 0): make it present. */
            uint32_t pde = 0x1000 | ALL;
            memcpy(bytes + 0x4ffc, &pde, 4);
            /* The PT's entry 0 is the PML4's first (0): map it to 0x2000. */
            uint32_t pte32 = 0x2000 | ALL;
            memcpy(bytes + 0x1000, &pte32, 4);
            assert_true(gpt_translate_fetched(&m32, la32, &ram, &gpa));
            assert_int_equal(gpa, 0x2123);
        }
        free(bytes);
    }
}

/*
 * Random tables in every paging mode: wherever the full walk translates,
 * the fetch walk gives the same gpa; where it finds an entry not present or
 * a table outside memory, the fetch walk falls back (check_fetched).
 */

/* An entry pointing mostly inside the memory (a page one past it now and then). */
static uint64_t random_entry(void)
{
    uint64_t r = rng();
    uint64_t e = ((r % (MEM_SIZE / 4096 + 1)) << 12) | (rng() & 0xfff);
    if (r & (1ull << 40))
        e |= P;
    if ((r & (3ull << 42)) == 0)
        e |= rng() & 0xfff0000000000000ull; /* XD and reserved high bits */
    if ((r & (3ull << 44)) == 0)
        e |= rng() & 0x1fe000; /* reserved bits of a large page */
    return e;
}

static void test_fetched_agrees_on_random_tables(void **state)
{
    (void)state;
    struct gpt_ram ram = {mem, MEM_SIZE};
    unsigned translated = 0;
    for (int round = 0; round < 4000; round++) {
        unsigned kind = round % 5; /* 32-bit, 32-bit with PSE, PAE, 4-level, 5-level */
        for (size_t at = 0; at < MEM_SIZE; at += 8) {
            uint64_t e = random_entry();
            if (kind < 2)
                e = (random_entry() & 0xffffffffu) | random_entry() << 32;
            put64(at, e);
        }
        static const uint64_t cr4s[] = {0, CR4_PSE, CR4_PAE, CR4_PAE, CR4_PAE | CR4_LA57};
        struct gpt_mode m = {.cr0 = CR0_PE | CR0_PG | (rng() & CR0_WP),
                             .cr3 = random_entry() & ~0xfe7ull,
                             .cr4 = cr4s[kind] | (rng() & CR4_PSE),
                             .efer = (kind >= 3 ? EFER_LME | EFER_LMA : 0) | (rng() & EFER_NXE),
                             .cpl = (unsigned)(rng() & 3)};
        if (kind < 2)
            m.cr4 = cr4s[kind];
        for (int i = 0; i < 16; i++) {
            uint64_t la = rng();
            unsigned access = (unsigned)(rng() & 3);
            uint64_t gpa = 0;
            enum gpt_result r = gpt_translate_ram(&m, la, access, &ram, &gpa);
            check_fetched(&m, la, &ram, r, gpa);
            translated += r == GPT_OK;
        }
    }
    /* The tables were random enough to translate some addresses, not all. */
    assert_true(translated > 1000);
    assert_true(translated < 4000 * 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_paging_off, setup),
        cmocka_unit_test_setup(test_32bit_4k, setup),
        cmocka_unit_test_setup(test_32bit_4m, setup),
        cmocka_unit_test_setup(test_32bit_ps_ignored_without_pse, setup),
        cmocka_unit_test_setup(test_32bit_not_present, setup),
        cmocka_unit_test_setup(test_32bit_rights, setup),
        cmocka_unit_test_setup(test_pae_4k, setup),
        cmocka_unit_test_setup(test_pae_2m, setup),
        cmocka_unit_test_setup(test_pae_pdpte, setup),
        cmocka_unit_test_setup(test_pae_reserved_and_nx, setup),
        cmocka_unit_test_setup(test_pae_not_present_and_bad_table, setup),
        cmocka_unit_test_setup(test_long_4k, setup),
        cmocka_unit_test_setup(test_long_2m, setup),
        cmocka_unit_test_setup(test_long_1g, setup),
        cmocka_unit_test_setup(test_long_not_present, setup),
        cmocka_unit_test_setup(test_long_reserved, setup),
        cmocka_unit_test_setup(test_5level_4k, setup),
        cmocka_unit_test_setup(test_5level_entries, setup),
        cmocka_unit_test_setup(test_write_protect, setup),
        cmocka_unit_test_setup(test_user_supervisor, setup),
        cmocka_unit_test_setup(test_nx_fetch, setup),
        cmocka_unit_test_setup(test_bad_table, setup),
        cmocka_unit_test_setup(test_fetched_every_mapping_kind, setup),
        cmocka_unit_test_setup(test_fetched_falls_back, setup),
        cmocka_unit_test_setup(test_fetched_ignores_rights_and_reserved_bits, setup),
        cmocka_unit_test(test_fetched_stays_in_ram),
        cmocka_unit_test_setup(test_fetched_agrees_on_random_tables, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

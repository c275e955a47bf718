/* SPDX-License-Identifier: GPL-2.0-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86/bootinfo.h"

/*
 * Synthetic physical memory: MEM_SIZE bytes at FAKE_BASE, of which only the
 * first `accessible` bytes are granted by the map callback.
 */
#define FAKE_BASE 0x200000ull
#define MEM_SIZE  0x10000

static _Alignas(16) uint8_t mem[MEM_SIZE];

#include "test_mem.h" /* after mem */

struct fake {
    size_t accessible;
};

static const void *fake_map(uint64_t phys, size_t len, void *ctx)
{
    const struct fake *f = ctx;

    if (phys < FAKE_BASE || len > f->accessible || phys - FAKE_BASE > f->accessible - len)
        return NULL;
    return mem + (phys - FAKE_BASE);
}

static struct boot_info bi;
static char err[256];

static int setup(void **state)
{
    static struct fake f;

    memset(mem, 0xcc, sizeof(mem));
    memset(&bi, 0, sizeof(bi));
    memset(err, 0, sizeof(err));
    f.accessible = MEM_SIZE;
    *state = &f;
    return 0;
}

static uint64_t phys_of(size_t off)
{
    return FAKE_BASE + off;
}

/* ------------------------------------------------------------ multiboot2 builder */

static size_t mb2_off;

static void mb2_begin(void)
{
    mb2_off = 8;
}

/* Appends a tag with the given payload; returns its offset. */
static size_t mb2_tag(uint32_t type, const void *payload, size_t len)
{
    size_t at = mb2_off;

    put32(at, type);
    put32(at + 4, (uint32_t)(8 + len));
    if (len)
        memcpy(mem + at + 8, payload, len);
    mb2_off = (at + 8 + len + 7) & ~(size_t)7;
    return at;
}

static size_t mb2_string(uint32_t type, const char *s)
{
    return mb2_tag(type, s, strlen(s) + 1);
}

static size_t mb2_module(uint32_t start, uint32_t end, const char *name)
{
    uint8_t p[64];
    size_t n = strlen(name) + 1;

    memcpy(p, &start, 4);
    memcpy(p + 4, &end, 4);
    memcpy(p + 8, name, n);
    return mb2_tag(3, p, 8 + n);
}

struct range {
    uint64_t base, len;
    uint32_t type;
};

static size_t mb2_mmap(const struct range *r, size_t n, uint32_t entry_size)
{
    static uint8_t p[8 + 200 * 40];
    uint32_t version = 0;

    assert_true(n * entry_size + 8 <= sizeof(p));
    memset(p, 0xee, sizeof(p));
    memcpy(p, &entry_size, 4);
    memcpy(p + 4, &version, 4);
    for (size_t i = 0; i < n; i++) {
        uint8_t *e = p + 8 + i * entry_size;
        uint32_t zero = 0;

        memcpy(e, &r[i].base, 8);
        memcpy(e + 8, &r[i].len, 8);
        memcpy(e + 16, &r[i].type, 4);
        memcpy(e + 20, &zero, 4);
    }
    return mb2_tag(6, p, 8 + n * entry_size);
}

static const struct range default_map[] = {
    {0x0, 0x9fc00, MEM_USABLE},
    {0xf0000, 0x10000, MEM_RESERVED},
    {0x100000, 0x7ff00000, MEM_USABLE},
};

static size_t mb2_default_mmap(void)
{
    return mb2_mmap(default_map, 3, 24);
}

/* Writes the end tag (unless omitted) and total_size; returns total_size. */
static uint32_t mb2_finish(bool with_end)
{
    if (with_end)
        mb2_tag(0, NULL, 0);
    put32(0, (uint32_t)mb2_off);
    put32(4, 0);
    return (uint32_t)mb2_off;
}

static int parse2(void *f)
{
    return mb2_parse(FAKE_BASE, MEM_SIZE, fake_map, f, &bi, err, sizeof(err));
}

static void test_mb2_valid_all_tags(void **state)
{
    static const struct range wide[] = {
        {0x0, 0x9fc00, MEM_USABLE},
        {0x100000, 0x1000, MEM_ACPI_NVS},
        {0xfee00000, 0x1000, 77},
    };
    uint8_t rsdp_old[20] = "RSD PTR old";
    uint8_t rsdp_new[36] = "RSD PTR new";
    size_t new_at;
    uint32_t total;

    mb2_begin();
    mb2_string(1, "cpus=4 debug=on");
    mb2_string(2, "GRUB 2.06");
    mb2_tag(21, "\x01\x02\x03", 3); /* unknown tag, odd size: skipped with padding */
    mb2_module(0x400000, 0x401000, "guest.elf");
    mb2_module(0x402000, 0x402800, "");
    mb2_mmap(wide, 3, 32); /* larger entries than the 24 bytes used */
    mb2_tag(14, rsdp_old, sizeof(rsdp_old));
    new_at = mb2_tag(15, rsdp_new, sizeof(rsdp_new));
    total = mb2_finish(true);

    assert_int_equal(parse2(*state), 0);
    assert_int_equal(bi.protocol, 2);
    assert_string_equal(bi.cmdline, "cpus=4 debug=on");
    assert_string_equal(bi.loader, "GRUB 2.06");
    assert_int_equal(bi.mod_count, 2);
    assert_int_equal(bi.mods[0].start, 0x400000);
    assert_int_equal(bi.mods[0].end, 0x401000);
    assert_string_equal(bi.mods[0].cmdline, "guest.elf");
    assert_int_equal(bi.mods[1].start, 0x402000);
    assert_int_equal(bi.mods[1].end, 0x402800);
    assert_string_equal(bi.mods[1].cmdline, "");
    assert_int_equal(bi.mmap_count, 3);
    for (unsigned i = 0; i < 3; i++) {
        assert_true(bi.mmap[i].base == wide[i].base);
        assert_true(bi.mmap[i].len == wide[i].len);
        assert_int_equal(bi.mmap[i].type, wide[i].type);
    }
    assert_true(bi.rsdp == phys_of(new_at + 8));
    assert_true(bi.info_start == FAKE_BASE);
    assert_true(bi.info_end == FAKE_BASE + total);
}

static void test_mb2_minimal_defaults(void **state)
{
    mb2_begin();
    mb2_default_mmap();
    mb2_finish(true);

    assert_int_equal(parse2(*state), 0);
    assert_string_equal(bi.cmdline, "");
    assert_string_equal(bi.loader, "");
    assert_int_equal(bi.mod_count, 0);
    assert_int_equal(bi.mmap_count, 3);
    assert_true(bi.rsdp == 0);
}

static void test_mb2_rsdp_new_preferred(void **state)
{
    uint8_t rsdp[36] = {0};
    size_t old_at, new_at;

    /* New before old: the old copy must not override it. */
    mb2_begin();
    mb2_default_mmap();
    new_at = mb2_tag(15, rsdp, 36);
    mb2_tag(14, rsdp, 20);
    mb2_finish(true);
    assert_int_equal(parse2(*state), 0);
    assert_true(bi.rsdp == phys_of(new_at + 8));

    mb2_begin();
    mb2_default_mmap();
    old_at = mb2_tag(14, rsdp, 20);
    mb2_finish(true);
    assert_int_equal(parse2(*state), 0);
    assert_true(bi.rsdp == phys_of(old_at + 8));
}

static void test_mb2_rsdp_tag_too_small(void **state)
{
    uint8_t rsdp[36] = {0};

    mb2_begin();
    mb2_default_mmap();
    mb2_tag(15, rsdp, 20);
    mb2_finish(true);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "tag type 15"));
    assert_non_null(strstr(err, "(< 44)"));
}

static void test_mb2_header_not_accessible(void **state)
{
    struct fake *f = *state;

    mb2_begin();
    mb2_default_mmap();
    mb2_finish(true);
    assert_int_equal(mb2_parse(FAKE_BASE - 8, MEM_SIZE, fake_map, f, &bi, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not accessible"));
}

static void test_mb2_total_size_too_small(void **state)
{
    put32(0, 8);
    put32(4, 0);
    assert_int_equal(parse2(*state), -1);
    assert_string_equal(err, "multiboot2: total_size 0x8 is too small (< 0x10)");
}

static void test_mb2_total_size_over_max(void **state)
{
    uint32_t total;

    mb2_begin();
    mb2_default_mmap();
    total = mb2_finish(true);
    assert_int_equal(mb2_parse(FAKE_BASE, total - 1, fake_map, *state, &bi, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "exceeds the limit"));
    assert_int_equal(mb2_parse(FAKE_BASE, total, fake_map, *state, &bi, err, sizeof(err)), 0);
}

static void test_mb2_truncated_info(void **state)
{
    struct fake *f = *state;
    uint32_t total;

    mb2_begin();
    mb2_default_mmap();
    total = mb2_finish(true);
    f->accessible = total - 8;
    assert_int_equal(parse2(f), -1);
    assert_non_null(strstr(err, "is not accessible"));
}

static void test_mb2_tag_overruns_total(void **state)
{
    size_t at;
    char want[128];

    mb2_begin();
    mb2_default_mmap();
    at = mb2_string(1, "console=serial");
    mb2_finish(true);
    put32(at + 4, 0x100);

    assert_int_equal(parse2(*state), -1);
    snprintf(want, sizeof(want),
             "multiboot2: tag type 1 at offset 0x%zx with size 0x100 overruns total_size 0x%x", at,
             (unsigned)mb2_off);
    assert_string_equal(err, want);
}

static void test_mb2_tag_size_below_header(void **state)
{
    size_t at;
    char want[128];

    mb2_begin();
    mb2_default_mmap();
    at = mb2_module(0x400000, 0x401000, "m");
    mb2_finish(true);
    put32(at + 4, 4);

    assert_int_equal(parse2(*state), -1);
    snprintf(want, sizeof(want), "multiboot2: tag type 3 at offset 0x%zx has size 0x4 (< 8)", at);
    assert_string_equal(err, want);
}

static void test_mb2_missing_end_tag(void **state)
{
    mb2_begin();
    mb2_default_mmap();
    mb2_string(1, "x");
    mb2_finish(false);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "no end tag"));
}

static void test_mb2_last_tag_ends_unaligned_at_total(void **state)
{
    /* The padded step lands past total_size; the walk must stop there. */
    mb2_begin();
    mb2_default_mmap();
    mb2_string(1, "abcd");
    put32(0, (uint32_t)(mb2_off - 3));
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "no end tag"));
}

static void test_mb2_missing_mmap(void **state)
{
    mb2_begin();
    mb2_string(1, "cpus=1");
    mb2_finish(true);
    assert_int_equal(parse2(*state), -1);
    assert_string_equal(err, "multiboot2: no memory map tag (type 6)");
}

static void test_mb2_empty_mmap(void **state)
{
    mb2_begin();
    mb2_mmap(NULL, 0, 24);
    mb2_finish(true);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "no entries"));
}

static void test_mb2_unterminated_string(void **state)
{
    size_t at;

    mb2_begin();
    mb2_default_mmap();
    /* The end tag's zero bytes follow directly; they must not count as the NUL. */
    at = mb2_tag(1, "abcdefgh", 8);
    mb2_finish(true);
    assert_int_equal(mem[at + 16], 0);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "tag type 1"));
    assert_non_null(strstr(err, "not NUL-terminated"));
}

static void test_mb2_unterminated_module_name(void **state)
{
    uint8_t p[12] = {0, 0, 0x40, 0, 0, 0x10, 0x40, 0, 'a', 'b', 'c', 'd'};

    mb2_begin();
    mb2_default_mmap();
    mb2_tag(3, p, sizeof(p));
    mb2_finish(true);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "tag type 3"));
    assert_non_null(strstr(err, "not NUL-terminated"));
}

static void test_mb2_module_tag_too_small(void **state)
{
    uint8_t p[8] = {0};

    mb2_begin();
    mb2_default_mmap();
    mb2_tag(3, p, sizeof(p));
    mb2_finish(true);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "tag type 3"));
    assert_non_null(strstr(err, "(< 17)"));
}

static void test_mb2_module_limit(void **state)
{
    mb2_begin();
    mb2_default_mmap();
    for (unsigned i = 0; i < BOOT_MAX_MODULES; i++)
        mb2_module(0x1000000 + i * 0x1000, 0x1000800 + i * 0x1000, "m");
    mb2_finish(true);
    assert_int_equal(parse2(*state), 0);
    assert_int_equal(bi.mod_count, BOOT_MAX_MODULES);

    mb2_off -= 8; /* reopen before the end tag */
    mb2_module(0x2000000, 0x2001000, "one too many");
    mb2_finish(true);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "BOOT_MAX_MODULES"));
}

static void test_mb2_mmap_limit(void **state)
{
    static struct range many[BOOT_MAX_MMAP + 1];

    for (unsigned i = 0; i <= BOOT_MAX_MMAP; i++)
        many[i] = (struct range){i * 0x1000ull, 0x1000, MEM_USABLE};

    mb2_begin();
    mb2_mmap(many, BOOT_MAX_MMAP, 24);
    mb2_finish(true);
    assert_int_equal(parse2(*state), 0);
    assert_int_equal(bi.mmap_count, BOOT_MAX_MMAP);
    assert_true(bi.mmap[BOOT_MAX_MMAP - 1].base == (BOOT_MAX_MMAP - 1) * 0x1000ull);

    mb2_begin();
    mb2_mmap(many, BOOT_MAX_MMAP + 1, 24);
    mb2_finish(true);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "BOOT_MAX_MMAP"));
}

static void test_mb2_mmap_bad_entry_size(void **state)
{
    mb2_begin();
    mb2_mmap(default_map, 3, 16);
    mb2_finish(true);
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "entry_size 0x10 (< 24)"));
}

static void test_mb2_mmap_partial_entry(void **state)
{
    size_t at;

    mb2_begin();
    at = mb2_mmap(default_map, 3, 24);
    mb2_finish(true);
    put32(at + 4, 16 + 2 * 24 + 8); /* still inside total_size, but ends mid-entry */
    assert_int_equal(parse2(*state), -1);
    assert_non_null(strstr(err, "multiple of entry_size"));
}

/* ------------------------------------------------------------ multiboot1 */

#define MB1_INFO 0x0
#define MB1_STR  0x200
#define MB1_MODS 0x400
#define MB1_MMAP 0x500
#define MB1_LONG 0x1000

static size_t mb1_str_off;

static uint32_t mb1_put_string(const char *s)
{
    size_t at = MB1_STR + mb1_str_off;

    memcpy(mem + at, s, strlen(s) + 1);
    mb1_str_off += strlen(s) + 1;
    return (uint32_t)phys_of(at);
}

/*
 * Packed mmap entries {size, base, len, type} at mem offset `at`; entry i
 * gets extra[i] trailing bytes. Returns mmap_length.
 */
static uint32_t mb1_put_mmap(size_t at, const struct range *r, size_t n, const uint32_t *extra)
{
    size_t off = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t size = 20 + (extra ? extra[i] : 0);

        put32(at + off, size);
        put64(at + off + 4, r[i].base);
        put64(at + off + 12, r[i].len);
        put32(at + off + 20, r[i].type);
        off += size + 4;
    }
    return (uint32_t)off;
}

static void mb1_build(uint32_t flags)
{
    static const uint32_t extra[] = {0, 4, 0};
    uint32_t mods[2][4];

    mb1_str_off = 0;
    memset(mem + MB1_INFO, 0, 116);
    put32(MB1_INFO + 0, flags);
    put32(MB1_INFO + 16, mb1_put_string("cpus=2"));
    put32(MB1_INFO + 64, mb1_put_string("GRUB Legacy"));

    mods[0][0] = 0x400000;
    mods[0][1] = 0x401000;
    mods[0][2] = mb1_put_string("guest.bin arg");
    mods[0][3] = 0;
    mods[1][0] = 0x500000;
    mods[1][1] = 0x500100;
    mods[1][2] = 0; /* no string */
    mods[1][3] = 0;
    memcpy(mem + MB1_MODS, mods, sizeof(mods));
    put32(MB1_INFO + 20, 2);
    put32(MB1_INFO + 24, (uint32_t)phys_of(MB1_MODS));

    put32(MB1_INFO + 44, mb1_put_mmap(MB1_MMAP, default_map, 3, extra));
    put32(MB1_INFO + 48, (uint32_t)phys_of(MB1_MMAP));
}

#define MB1_ALL ((1u << 2) | (1u << 3) | (1u << 6) | (1u << 9))

static int parse1(void *f)
{
    return mb1_parse(FAKE_BASE + MB1_INFO, fake_map, f, &bi, err, sizeof(err));
}

static void test_mb1_valid(void **state)
{
    mb1_build(MB1_ALL);
    assert_int_equal(parse1(*state), 0);
    assert_int_equal(bi.protocol, 1);
    assert_string_equal(bi.cmdline, "cpus=2");
    assert_string_equal(bi.loader, "GRUB Legacy");
    assert_int_equal(bi.mod_count, 2);
    assert_int_equal(bi.mods[0].start, 0x400000);
    assert_int_equal(bi.mods[0].end, 0x401000);
    assert_string_equal(bi.mods[0].cmdline, "guest.bin arg");
    assert_int_equal(bi.mods[1].start, 0x500000);
    assert_string_equal(bi.mods[1].cmdline, "");
    assert_int_equal(bi.mmap_count, 3);
    for (unsigned i = 0; i < 3; i++) {
        assert_true(bi.mmap[i].base == default_map[i].base);
        assert_true(bi.mmap[i].len == default_map[i].len);
        assert_int_equal(bi.mmap[i].type, default_map[i].type);
    }
    assert_true(bi.rsdp == 0);
    assert_true(bi.info_start == FAKE_BASE + MB1_INFO);
    assert_true(bi.info_end == FAKE_BASE + MB1_INFO + 116);
}

static void test_mb1_flags_gate_fields(void **state)
{
    mb1_build(1u << 6);
    put32(MB1_INFO + 16, 0xdead0000); /* ignored without bit 2 */
    assert_int_equal(parse1(*state), 0);
    assert_string_equal(bi.cmdline, "");
    assert_string_equal(bi.loader, "");
    assert_int_equal(bi.mod_count, 0);
    assert_int_equal(bi.mmap_count, 3);
}

static void test_mb1_missing_mmap(void **state)
{
    mb1_build(MB1_ALL & ~(1u << 6));
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "bit 6"));
}

static void test_mb1_empty_mmap(void **state)
{
    mb1_build(MB1_ALL);
    put32(MB1_INFO + 44, 0);
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "no entries"));
}

static void test_mb1_mmap_entry_too_small(void **state)
{
    mb1_build(MB1_ALL);
    put32(MB1_MMAP + 24, 16); /* second entry */
    assert_int_equal(parse1(*state), -1);
    assert_string_equal(err, "multiboot1: memory map entry at offset 0x18 has size 16 (< 20)");
}

static void test_mb1_mmap_entry_overruns(void **state)
{
    mb1_build(MB1_ALL);
    put32(MB1_INFO + 44, 24 + 10);
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "offset 0x18"));
    assert_non_null(strstr(err, "overruns mmap_length 0x22"));

    mb1_build(MB1_ALL);
    put32(MB1_INFO + 44, 24 + 2); /* not even room for the size field */
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "overruns mmap_length 0x1a"));
}

static void test_mb1_mmap_limit(void **state)
{
    static struct range many[BOOT_MAX_MMAP + 1];
    uint32_t length;

    for (unsigned i = 0; i <= BOOT_MAX_MMAP; i++)
        many[i] = (struct range){i * 0x1000ull, 0x1000, MEM_USABLE};
    mb1_build(1u << 6);
    put32(MB1_INFO + 48, (uint32_t)phys_of(MB1_LONG));

    put32(MB1_INFO + 44, mb1_put_mmap(MB1_LONG, many, BOOT_MAX_MMAP, NULL));
    assert_int_equal(parse1(*state), 0);
    assert_int_equal(bi.mmap_count, BOOT_MAX_MMAP);

    length = mb1_put_mmap(MB1_LONG, many, BOOT_MAX_MMAP + 1, NULL);
    put32(MB1_INFO + 44, length);
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "BOOT_MAX_MMAP"));
}

static void test_mb1_unterminated_cmdline(void **state)
{
    mb1_build(MB1_ALL);
    memset(mem + MB1_LONG, 'a', BOOT_MAX_STRING + 100);
    put32(MB1_INFO + 16, (uint32_t)phys_of(MB1_LONG + 3));
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "cmdline"));
    assert_non_null(strstr(err, "not NUL-terminated within 4096 bytes"));
}

static void test_mb1_longest_cmdline(void **state)
{
    size_t at = MB1_LONG + 5;

    mb1_build(MB1_ALL);
    memset(mem + at, 'b', BOOT_MAX_STRING - 1);
    mem[at + BOOT_MAX_STRING - 1] = '\0';
    put32(MB1_INFO + 16, (uint32_t)phys_of(at));
    assert_int_equal(parse1(*state), 0);
    assert_int_equal(strlen(bi.cmdline), BOOT_MAX_STRING - 1);

    /* One more character and the NUL falls outside the limit. */
    mem[at + BOOT_MAX_STRING - 1] = 'b';
    mem[at + BOOT_MAX_STRING] = '\0';
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "not NUL-terminated"));
}

static void test_mb1_cmdline_runs_off_memory(void **state)
{
    struct fake *f = *state;

    mb1_build(MB1_ALL);
    memset(mem + MB1_LONG, 'a', 200);
    put32(MB1_INFO + 16, (uint32_t)phys_of(MB1_LONG + 1));
    f->accessible = MB1_LONG + 150;
    assert_int_equal(parse1(f), -1);
    assert_non_null(strstr(err, "cmdline"));
    assert_non_null(strstr(err, "is not accessible"));
}

static void test_mb1_cmdline_ends_at_memory_edge(void **state)
{
    struct fake *f = *state;

    /* The NUL is the last accessible byte, mid-chunk: the probe must not give up. */
    mb1_build(MB1_ALL);
    memset(mem + MB1_LONG, 'a', 100);
    mem[MB1_LONG + 100] = '\0';
    put32(MB1_INFO + 16, (uint32_t)phys_of(MB1_LONG + 1));
    f->accessible = MB1_LONG + 101;
    assert_int_equal(parse1(f), 0);
    assert_int_equal(strlen(bi.cmdline), 99);
}

static void test_mb1_unterminated_module_string(void **state)
{
    struct fake *f = *state;

    mb1_build(MB1_ALL);
    memset(mem + MB1_LONG, 'm', 64);
    put32(MB1_MODS + 16 + 8, (uint32_t)phys_of(MB1_LONG));
    f->accessible = MB1_LONG + 64;
    assert_int_equal(parse1(f), -1);
    assert_non_null(strstr(err, "module 1 string"));
}

static void test_mb1_module_limit(void **state)
{
    mb1_build(MB1_ALL);
    put32(MB1_INFO + 20, BOOT_MAX_MODULES + 1);
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "BOOT_MAX_MODULES"));
}

static void test_mb1_module_list_not_accessible(void **state)
{
    mb1_build(MB1_ALL);
    put32(MB1_INFO + 24, 0x10);
    assert_int_equal(parse1(*state), -1);
    assert_non_null(strstr(err, "module list"));
}

static void test_mb1_info_not_accessible(void **state)
{
    struct fake *f = *state;

    mb1_build(MB1_ALL);
    f->accessible = 100;
    assert_int_equal(parse1(f), -1);
    assert_non_null(strstr(err, "info block"));
}

/* ------------------------------------------------------------ bootinfo_check */

#define KSTART 0x100000
#define KEND   0x180000

static void set_mod(unsigned i, uint64_t start, uint64_t end, const char *name)
{
    bi.mods[i] = (struct boot_module){start, end, name};
    if (bi.mod_count <= i)
        bi.mod_count = i + 1;
}

static void check_setup(void)
{
    bi.info_start = 0x9000;
    bi.info_end = 0x9400;
    set_mod(0, 0x200000, 0x201000, "first");
    set_mod(1, 0x201000, 0x202000, "bar");
    set_mod(2, 0x300000, 0x300100, "foo");
}

static void test_check_valid(void **state)
{
    (void)state;
    check_setup();
    /* Ranges touching at a boundary do not overlap. */
    set_mod(3, KEND, 0x190000, "after-kernel");
    set_mod(4, 0x9400, 0xa000, "after-info");
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), 0);
}

static void test_check_no_modules(void **state)
{
    (void)state;
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), 0);
}

static void test_check_zero_length(void **state)
{
    (void)state;
    check_setup();
    set_mod(1, 0x201000, 0x201000, "bar");
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), -1);
    assert_string_equal(
        err, "module 1 (name=bar) has start 0x201000 >= end 0x201000 (empty or inverted)");
}

static void test_check_inverted(void **state)
{
    (void)state;
    check_setup();
    set_mod(2, 0x300100, 0x300000, "foo");
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "module 2 (name=foo) has start 0x300100 >= end 0x300000"));
}

static void test_check_modules_overlap(void **state)
{
    (void)state;
    check_setup();
    set_mod(2, 0x201fff, 0x203000, "foo");
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), -1);
    assert_string_equal(err, "module 2 (name=foo) overlaps module 1 (name=bar)");
}

static void test_check_module_contains_other(void **state)
{
    (void)state;
    check_setup();
    set_mod(2, 0x1f0000, 0x400000, "big");
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), -1);
    assert_string_equal(err, "module 2 (name=big) overlaps module 0 (name=first)");
}

static void test_check_overlaps_kernel(void **state)
{
    (void)state;
    check_setup();
    set_mod(1, 0x17f000, 0x181000, "bar");
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "module 1 (name=bar)"));
    assert_non_null(strstr(err, "overlaps the kernel [0x100000, 0x180000)"));
}

static void test_check_overlaps_info(void **state)
{
    (void)state;
    check_setup();
    set_mod(0, 0x8000, 0x9001, "first");
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "module 0 (name=first)"));
    assert_non_null(strstr(err, "overlaps the boot info [0x9000, 0x9400)"));
}

static void test_check_after_mb2_parse(void **state)
{
    uint32_t total;

    /* A module placed over the info structure itself is caught end to end. */
    mb2_begin();
    mb2_default_mmap();
    mb2_module((uint32_t)FAKE_BASE + 0x10, (uint32_t)FAKE_BASE + 0x20, "inside");
    total = mb2_finish(true);
    assert_true(total > 0x20);
    assert_int_equal(parse2(*state), 0);
    assert_int_equal(bootinfo_check(&bi, KSTART, KEND, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "module 0 (name=inside) "));
    assert_non_null(strstr(err, "boot info"));
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_mb2_valid_all_tags),
        T(test_mb2_minimal_defaults),
        T(test_mb2_rsdp_new_preferred),
        T(test_mb2_rsdp_tag_too_small),
        T(test_mb2_header_not_accessible),
        T(test_mb2_total_size_too_small),
        T(test_mb2_total_size_over_max),
        T(test_mb2_truncated_info),
        T(test_mb2_tag_overruns_total),
        T(test_mb2_tag_size_below_header),
        T(test_mb2_missing_end_tag),
        T(test_mb2_last_tag_ends_unaligned_at_total),
        T(test_mb2_missing_mmap),
        T(test_mb2_empty_mmap),
        T(test_mb2_unterminated_string),
        T(test_mb2_unterminated_module_name),
        T(test_mb2_module_tag_too_small),
        T(test_mb2_module_limit),
        T(test_mb2_mmap_limit),
        T(test_mb2_mmap_bad_entry_size),
        T(test_mb2_mmap_partial_entry),
        T(test_mb1_valid),
        T(test_mb1_flags_gate_fields),
        T(test_mb1_missing_mmap),
        T(test_mb1_empty_mmap),
        T(test_mb1_mmap_entry_too_small),
        T(test_mb1_mmap_entry_overruns),
        T(test_mb1_mmap_limit),
        T(test_mb1_unterminated_cmdline),
        T(test_mb1_longest_cmdline),
        T(test_mb1_cmdline_runs_off_memory),
        T(test_mb1_cmdline_ends_at_memory_edge),
        T(test_mb1_unterminated_module_string),
        T(test_mb1_module_limit),
        T(test_mb1_module_list_not_accessible),
        T(test_mb1_info_not_accessible),
        T(test_check_valid),
        T(test_check_no_modules),
        T(test_check_zero_length),
        T(test_check_inverted),
        T(test_check_modules_overlap),
        T(test_check_module_contains_other),
        T(test_check_overlaps_kernel),
        T(test_check_overlaps_info),
        T(test_check_after_mb2_parse),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

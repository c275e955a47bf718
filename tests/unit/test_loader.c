/* SPDX-License-Identifier: GPL-2.0-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "vmm/load/loader.h"

/* Images are built in memory: ELF headers at 0, the multiboot header at MBH, segment bytes at DATA.
 */
#define IMG_SIZE 0x4000
#define MBH      0x800
#define DATA     0x1000
#define MEM      0x200000ull /* guest memory */
#define MB_MAGIC 0x1BADB002u
#define LOAD     0x100000u
#define PT_LOAD  1
#define PT_NOTE  4

static uint8_t img[IMG_SIZE];
static uint8_t guest[MEM];
static struct guest_image gi;
static char err[256];

static int setup(void **state)
{
    (void)state;
    memset(img, 0, sizeof(img));
    memset(&gi, 0x55, sizeof(gi));
    memset(err, 0, sizeof(err));
    return 0;
}

static void put16(size_t off, uint16_t v)
{
    memcpy(img + off, &v, sizeof(v));
}

static void put32(size_t off, uint32_t v)
{
    memcpy(img + off, &v, sizeof(v));
}

static void put64(size_t off, uint64_t v)
{
    memcpy(img + off, &v, sizeof(v));
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    return v;
}

static void mb_header(size_t off, uint32_t flags)
{
    put32(off, MB_MAGIC);
    put32(off + 4, flags);
    put32(off + 8, (uint32_t) - (MB_MAGIC + flags));
}

static void ident(uint8_t cls)
{
    static const uint8_t magic[4] = {0x7f, 'E', 'L', 'F'};

    memcpy(img, magic, sizeof(magic));
    img[4] = cls;
    img[5] = 1; /* little endian */
    img[6] = 1; /* version */
}

static void elf32_hdr(uint32_t entry, uint16_t phnum)
{
    ident(1);
    put16(16, 2); /* ET_EXEC */
    put16(18, 3); /* EM_386 */
    put32(20, 1);
    put32(24, entry);
    put32(28, 52);
    put16(40, 52);
    put16(42, 32);
    put16(44, phnum);
}

/* p_vaddr differs from p_paddr so the tests show which one is used. */
static void elf32_phdr(unsigned i, uint32_t type, uint32_t off, uint32_t paddr, uint32_t filesz,
                       uint32_t memsz)
{
    size_t p = 52 + i * 32;

    put32(p, type);
    put32(p + 4, off);
    put32(p + 8, paddr + 0xc0000000u);
    put32(p + 12, paddr);
    put32(p + 16, filesz);
    put32(p + 20, memsz);
}

static void elf64_hdr(uint64_t entry, uint16_t phnum)
{
    ident(2);
    put16(16, 2);  /* ET_EXEC */
    put16(18, 62); /* EM_X86_64 */
    put32(20, 1);
    put64(24, entry);
    put64(32, 64);
    put16(52, 64);
    put16(54, 56);
    put16(56, phnum);
}

static void elf64_phdr(unsigned i, uint32_t type, uint64_t off, uint64_t paddr, uint64_t filesz,
                       uint64_t memsz)
{
    size_t p = 64 + i * 56;

    put32(p, type);
    put64(p + 8, off);
    put64(p + 16, paddr + 0xffffffff80000000ull);
    put64(p + 24, paddr);
    put64(p + 32, filesz);
    put64(p + 40, memsz);
}

static void fill_data(size_t off, size_t len)
{
    for (size_t i = 0; i < len; i++)
        img[off + i] = (uint8_t)(i * 7 + 1);
}

/*
 * ELF32: text [LOAD, +0x100) from DATA, data [LOAD+0x1000, +0x200) with 0x80
 * bytes from DATA+0x100, plus a note and an empty PT_LOAD that are skipped.
 */
static size_t make_elf32(void)
{
    elf32_hdr(LOAD + 0x10, 4);
    elf32_phdr(0, PT_LOAD, DATA, LOAD, 0x100, 0x100);
    elf32_phdr(1, PT_NOTE, DATA, 0, 0x10, 0x10);
    elf32_phdr(2, PT_LOAD, DATA + 0x100, LOAD + 0x1000, 0x80, 0x200);
    elf32_phdr(3, PT_LOAD, 0, 0x1f0000, 0, 0);
    mb_header(MBH, 0x3);
    fill_data(DATA, 0x180);
    return DATA + 0x180;
}

static size_t make_elf64(void)
{
    elf64_hdr(LOAD + 0x20, 1);
    elf64_phdr(0, PT_LOAD, DATA, LOAD, 0x300, 0x1000);
    mb_header(MBH, 0);
    fill_data(DATA, 0x300);
    return DATA + 0x300;
}

/* Flat: header at 0x40 of a 0x800-byte file loaded at LOAD, bss to LOAD+0x2000. */
#define FLAT_HDR  0x40
#define FLAT_SIZE 0x800

static void flat_fields(uint32_t header_addr, uint32_t load_addr, uint32_t load_end,
                        uint32_t bss_end, uint32_t entry)
{
    put32(FLAT_HDR + 12, header_addr);
    put32(FLAT_HDR + 16, load_addr);
    put32(FLAT_HDR + 20, load_end);
    put32(FLAT_HDR + 24, bss_end);
    put32(FLAT_HDR + 28, entry);
}

static size_t make_flat(void)
{
    fill_data(0, FLAT_SIZE);
    mb_header(FLAT_HDR, 1u << 16);
    flat_fields(LOAD + FLAT_HDR, LOAD, 0, LOAD + 0x2000, LOAD + 0x50);
    return FLAT_SIZE;
}

static void expect_fail(size_t size, const char *needle)
{
    assert_int_equal(image_parse(img, size, MEM, &gi, err, sizeof(err)), -1);
    if (!strstr(err, needle))
        fail_msg("reason \"%s\" lacks \"%s\"", err, needle);
    assert_null(strchr(err, '\n'));
}

static void parse_ok(size_t size)
{
    int rc = image_parse(img, size, MEM, &gi, err, sizeof(err));

    if (rc != 0)
        fail_msg("image_parse failed: %s", err);
}

static void assert_seg(unsigned i, uint64_t gpa, uint64_t off, uint64_t filesz, uint64_t memsz)
{
    assert_int_equal(gi.segs[i].gpa, gpa);
    assert_int_equal(gi.segs[i].file_off, off);
    assert_int_equal(gi.segs[i].file_size, filesz);
    assert_int_equal(gi.segs[i].mem_size, memsz);
}

static void test_elf32_valid(void **state)
{
    (void)state;
    parse_ok(make_elf32());
    assert_string_equal(gi.format, "elf32");
    assert_int_equal(gi.entry, LOAD + 0x10);
    assert_int_equal(gi.nsegs, 2);
    assert_seg(0, LOAD, DATA, 0x100, 0x100);
    assert_seg(1, LOAD + 0x1000, DATA + 0x100, 0x80, 0x200);
    assert_int_equal(gi.end, LOAD + 0x1200);
}

static void test_elf64_valid(void **state)
{
    (void)state;
    parse_ok(make_elf64());
    assert_string_equal(gi.format, "elf64");
    assert_int_equal(gi.entry, LOAD + 0x20);
    assert_int_equal(gi.nsegs, 1);
    assert_seg(0, LOAD, DATA, 0x300, 0x1000);
    assert_int_equal(gi.end, LOAD + 0x1000);
}

static void test_flat_valid(void **state)
{
    (void)state;
    parse_ok(make_flat());
    assert_string_equal(gi.format, "flat");
    assert_int_equal(gi.entry, LOAD + 0x50);
    assert_int_equal(gi.nsegs, 1);
    assert_seg(0, LOAD, 0, FLAT_SIZE, 0x2000);
    assert_int_equal(gi.end, LOAD + 0x2000);
}

/* The header sits 0x40 bytes into the load, and the load starts 0x20 bytes into the file. */
static void test_flat_explicit_end(void **state)
{
    (void)state;
    make_flat();
    flat_fields(LOAD + 0x40, LOAD + 0x20, LOAD + 0x420, 0, LOAD + 0x20);
    parse_ok(FLAT_SIZE);
    assert_seg(0, LOAD + 0x20, 0x20, 0x400, 0x400);
    assert_int_equal(gi.end, LOAD + 0x420);
}

/* Flag bit 16 wins over the ELF headers. */
static void test_flat_overrides_elf(void **state)
{
    (void)state;
    make_elf32();
    mb_header(MBH, 1u << 16);
    put32(MBH + 12, LOAD + MBH);
    put32(MBH + 16, LOAD);
    put32(MBH + 20, LOAD + 0x1000);
    put32(MBH + 24, 0);
    put32(MBH + 28, LOAD);
    parse_ok(IMG_SIZE);
    assert_string_equal(gi.format, "flat");
    assert_seg(0, LOAD, 0, 0x1000, 0x1000);
}

static void test_no_header(void **state)
{
    (void)state;
    make_elf32();
    memset(img + MBH, 0, 12);
    expect_fail(IMG_SIZE, "no multiboot header");
    expect_fail(0, "no multiboot header");
    expect_fail(8, "no multiboot header");
}

static void test_header_search_limit(void **state)
{
    (void)state;
    make_elf32();
    memset(img + MBH, 0, 12);
    mb_header(8192, 0);
    expect_fail(IMG_SIZE, "no multiboot header");
    /* One that starts inside 8 KiB but crosses it is not either. */
    mb_header(8184, 0);
    expect_fail(IMG_SIZE, "no multiboot header");
    memset(img + 8184, 0, 12);
    /* The last slot whose 12 bytes end exactly at 8 KiB is still found. */
    mb_header(8180, 0);
    parse_ok(IMG_SIZE);
}

/* A misaligned header is not one. */
static void test_header_unaligned(void **state)
{
    (void)state;
    make_elf32();
    memset(img + MBH, 0, 12);
    mb_header(MBH + 2, 0);
    expect_fail(IMG_SIZE, "no multiboot header");
}

static void test_bad_checksum(void **state)
{
    (void)state;
    make_elf32();
    put32(MBH + 8, get32(img + MBH + 8) + 1);
    expect_fail(IMG_SIZE, "bad checksum");
    /* A later valid header is still found. */
    mb_header(MBH + 0x10, 0);
    parse_ok(IMG_SIZE);
}

static void test_flags(void **state)
{
    (void)state;
    make_elf32();
    mb_header(MBH, 1u << 2);
    expect_fail(IMG_SIZE, "video mode");
    mb_header(MBH, 1u << 5);
    expect_fail(IMG_SIZE, "unsupported required flags 0x20");
    /* Unknown optional bits (16-31, other than 16) are ignored. */
    mb_header(MBH, 0x3 | (1u << 20));
    parse_ok(IMG_SIZE);
}

static void test_not_elf(void **state)
{
    (void)state;
    mb_header(0x40, 0);
    expect_fail(0x100, "not an ELF file");
}

static void test_elf_header_checks(void **state)
{
    (void)state;
    size_t size = make_elf32();

    put16(18, 62);
    expect_fail(size, "machine 62");
    make_elf64();
    put16(18, 3);
    expect_fail(size, "machine 3");
    make_elf32();
    put16(16, 3); /* ET_DYN */
    expect_fail(size, "not an executable");
    make_elf32();
    img[5] = 2;
    expect_fail(size, "little endian");
    make_elf32();
    img[4] = 3;
    expect_fail(size, "class 3");
}

static void test_truncated_elf_header(void **state)
{
    (void)state;
    make_elf64();
    /* The multiboot header must be inside the file, so move it into the ELF header's space. */
    mb_header(40, 0);
    expect_fail(60, "truncated ELF header");
    make_elf32();
    mb_header(24, 0);
    expect_fail(51, "truncated ELF header");
}

static void test_phdrs_beyond_file(void **state)
{
    (void)state;
    size_t size = make_elf32();

    put32(28, (uint32_t)size - 4 * 32 + 1);
    expect_fail(size, "program headers end beyond the file");
    size = make_elf64();
    put64(32, UINT64_MAX - 0x10); /* offset + table wraps */
    expect_fail(size, "program headers end beyond the file");
}

static void test_phentsize_too_small(void **state)
{
    (void)state;
    size_t size = make_elf32();

    put16(42, 31);
    expect_fail(size, "program header size 31");
    size = make_elf64();
    put16(54, 55);
    expect_fail(size, "program header size 55");
}

/* A larger entry size is legal: the loader must stride by it. */
static void test_phentsize_larger(void **state)
{
    (void)state;
    elf32_hdr(LOAD, 1);
    put16(42, 40);
    mb_header(MBH, 0);
    put32(52, PT_LOAD);
    put32(52 + 4, DATA);
    put32(52 + 12, LOAD);
    put32(52 + 16, 0x10);
    put32(52 + 20, 0x10);
    parse_ok(DATA + 0x10);
    assert_seg(0, LOAD, DATA, 0x10, 0x10);
}

static void test_no_loadable_segments(void **state)
{
    (void)state;
    size_t size = make_elf32();

    put16(44, 0);
    expect_fail(size, "no loadable segments");
}

static void test_segment_beyond_file(void **state)
{
    (void)state;
    size_t size = make_elf32();

    expect_fail(size - 1,
                "ELF program header 2 ends beyond the file (offset 0x1100 + 0x80 > 0x117f)");
    size = make_elf64();
    elf64_phdr(0, PT_LOAD, UINT64_MAX - 0x10, LOAD, 0x100, 0x100);
    expect_fail(size, "ends beyond the file");
}

static void test_filesz_gt_memsz(void **state)
{
    (void)state;
    size_t size = make_elf32();

    elf32_phdr(2, PT_LOAD, DATA + 0x100, LOAD + 0x1000, 0x80, 0x7f);
    expect_fail(size, "file size 0x80 > memory size 0x7f");
}

static void test_segment_beyond_memory(void **state)
{
    (void)state;
    size_t size = make_elf32();

    elf32_phdr(2, PT_LOAD, DATA + 0x100, MEM - 0x100, 0x80, 0x101);
    expect_fail(size, "does not fit guest memory");
    /* Ending exactly at the top of memory is fine. */
    elf32_phdr(2, PT_LOAD, DATA + 0x100, MEM - 0x100, 0x80, 0x100);
    parse_ok(size);
    assert_int_equal(gi.end, MEM);
}

static void test_segment_wraps(void **state)
{
    (void)state;
    size_t size = make_elf64();

    /* 0xfffffffffffff000 + 0x2000 wraps to 0x1000, inside memory if computed naively. */
    elf64_phdr(0, PT_LOAD, DATA, 0xfffffffffffff000ull, 0x300, 0x2000);
    expect_fail(size, "does not fit guest memory");
    make_elf32();
    elf32_phdr(0, PT_LOAD, DATA, 0xfffff000u, 0x100, 0x2000);
    expect_fail(size, "does not fit guest memory");
}

static void test_overlapping_segments(void **state)
{
    (void)state;
    size_t size = make_elf32();

    elf32_phdr(2, PT_LOAD, DATA + 0x100, LOAD + 0xff, 0x80, 0x200);
    expect_fail(size, "overlaps");
    /* A segment wholly containing an earlier one. */
    elf32_phdr(2, PT_LOAD, DATA + 0x100, LOAD - 0x1000, 0x80, 0x2000);
    expect_fail(size, "overlaps");
    /* Adjacent is fine. */
    elf32_phdr(2, PT_LOAD, DATA + 0x100, LOAD + 0x100, 0x80, 0x200);
    parse_ok(size);
}

static void test_entry_outside(void **state)
{
    (void)state;
    size_t size = make_elf32();

    put32(24, LOAD + 0x100); /* the gap between the two segments */
    expect_fail(size, "entry point 0x100100 is outside");
    put32(24, LOAD + 0x1200);
    expect_fail(size, "is outside");
    put32(24, LOAD + 0x11ff); /* in the data segment's bss */
    parse_ok(size);
    size = make_elf64();
    put64(24, 0x100000000ull + LOAD + 0x20);
    expect_fail(size, "does not fit 32 bits");
}

static void test_too_many_segments(void **state)
{
    (void)state;
    unsigned n = IMAGE_MAX_SEGMENTS + 1;

    elf32_hdr(LOAD, (uint16_t)n);
    mb_header(MBH, 0);
    for (unsigned i = 0; i < n; i++)
        elf32_phdr(i, PT_LOAD, DATA, LOAD + i * 0x1000, 0x10, 0x10);
    expect_fail(DATA + 0x10, "more than 16 loadable");
    put16(44, IMAGE_MAX_SEGMENTS);
    parse_ok(DATA + 0x10);
    assert_int_equal(gi.nsegs, IMAGE_MAX_SEGMENTS);
}

static void test_flat_bad_fields(void **state)
{
    (void)state;
    make_flat();
    /* load_addr above header_addr. */
    flat_fields(LOAD + FLAT_HDR, LOAD + FLAT_HDR + 4, 0, 0, LOAD + FLAT_HDR + 4);
    expect_fail(FLAT_SIZE, "load_addr");
    /* The load would start before the file. */
    flat_fields(LOAD + FLAT_HDR, LOAD - 4, 0, 0, LOAD);
    expect_fail(FLAT_SIZE, "load_addr");
    flat_fields(LOAD + FLAT_HDR, LOAD, LOAD - 1, 0, LOAD);
    expect_fail(FLAT_SIZE, "load_end_addr");
    flat_fields(LOAD + FLAT_HDR, LOAD, LOAD + FLAT_SIZE + 1, 0, LOAD);
    expect_fail(FLAT_SIZE, "beyond the file");
    flat_fields(LOAD + FLAT_HDR, LOAD, LOAD + 0x400, LOAD + 0x3ff, LOAD);
    expect_fail(FLAT_SIZE, "bss_end_addr");
    /* Without load_end_addr, the load runs to the end of the file. */
    flat_fields(LOAD + FLAT_HDR, LOAD, 0, LOAD + FLAT_SIZE - 1, LOAD);
    expect_fail(FLAT_SIZE, "bss_end_addr");
    flat_fields(LOAD + FLAT_HDR, LOAD, 0, MEM + 1, LOAD);
    expect_fail(FLAT_SIZE, "beyond guest memory");
    flat_fields(LOAD + FLAT_HDR, MEM - 0x100 + FLAT_HDR, 0, 0, MEM - 0x100 + FLAT_HDR);
    put32(FLAT_HDR + 12, MEM - 0x100 + 2 * FLAT_HDR);
    expect_fail(FLAT_SIZE, "does not fit guest memory");
    flat_fields(LOAD + FLAT_HDR, LOAD, 0, LOAD + 0x2000, LOAD + 0x2000);
    expect_fail(FLAT_SIZE, "outside the image");
    flat_fields(LOAD + FLAT_HDR, LOAD, 0, 0, LOAD + FLAT_SIZE);
    expect_fail(FLAT_SIZE, "outside the image");
    flat_fields(LOAD + FLAT_HDR, LOAD, 0, 0, LOAD - 1);
    expect_fail(FLAT_SIZE, "outside the image");
}

static void test_flat_truncated_fields(void **state)
{
    (void)state;
    make_flat();
    expect_fail(FLAT_HDR + 31, "address fields are truncated");
}

static void test_load_elf(void **state)
{
    (void)state;
    size_t size = make_elf32();

    parse_ok(size);
    memset(guest, 0xaa, sizeof(guest));
    image_load(img, &gi, guest);
    assert_memory_equal(guest + LOAD, img + DATA, 0x100);
    assert_memory_equal(guest + LOAD + 0x1000, img + DATA + 0x100, 0x80);
    for (size_t i = 0x80; i < 0x200; i++)
        assert_int_equal(guest[LOAD + 0x1000 + i], 0);
    assert_int_equal(guest[LOAD - 1], 0xaa);
    assert_int_equal(guest[LOAD + 0x100], 0xaa);
    assert_int_equal(guest[LOAD + 0xfff], 0xaa);
    assert_int_equal(guest[LOAD + 0x1200], 0xaa);
}

static void test_load_flat(void **state)
{
    (void)state;
    parse_ok(make_flat());
    memset(guest, 0xaa, sizeof(guest));
    image_load(img, &gi, guest);
    assert_memory_equal(guest + LOAD, img, FLAT_SIZE);
    for (size_t i = FLAT_SIZE; i < 0x2000; i++)
        assert_int_equal(guest[LOAD + i], 0);
    assert_int_equal(guest[LOAD + 0x2000], 0xaa);
}

#define INFO_GPA 0x9000u
#define MB_MEM   (32ull << 20)

static void check_mmap_entry(const uint8_t *e, uint64_t base, uint64_t len, uint32_t type)
{
    assert_int_equal(get32(e), 20);
    assert_int_equal(get64(e + 4), base);
    assert_int_equal(get64(e + 12), len);
    assert_int_equal(get32(e + 20), type);
}

static void test_mbinfo_layout(void **state)
{
    (void)state;
    const char *cmd = "console=ttyS0 quiet";
    size_t want = 116 + 3 * 24 + strlen(cmd) + 1;
    const uint8_t *info = guest + INFO_GPA;

    memset(guest, 0xaa, sizeof(guest));
    assert_int_equal(mbinfo_build(guest, MB_MEM, INFO_GPA, 4096, cmd), want);
    assert_int_equal(get32(info + 0), (1u << 0) | (1u << 2) | (1u << 6));
    assert_int_equal(get32(info + 4), 639);
    assert_int_equal(get32(info + 8), (MB_MEM - 0x100000) / 1024);
    assert_int_equal(get32(info + 16), INFO_GPA + 116 + 72);
    assert_int_equal(get32(info + 44), 72);
    assert_int_equal(get32(info + 48), INFO_GPA + 116);
    /* Everything not set above was zeroed over the 0xaa fill. */
    for (size_t off = 0; off < 116; off += 4) {
        if (off != 0 && off != 4 && off != 8 && off != 16 && off != 44 && off != 48)
            assert_int_equal(get32(info + off), 0);
    }
    check_mmap_entry(info + 116, 0, 0x9fc00, 1);
    check_mmap_entry(info + 116 + 24, 0x9fc00, 0x100000 - 0x9fc00, 2);
    check_mmap_entry(info + 116 + 48, 0x100000, MB_MEM - 0x100000, 1);
    assert_string_equal((const char *)info + 116 + 72, cmd);
    assert_int_equal(guest[INFO_GPA + want], 0xaa);
    assert_int_equal(guest[INFO_GPA - 1], 0xaa);
}

static void test_mbinfo_small_memory(void **state)
{
    (void)state;
    const uint8_t *info = guest + INFO_GPA;

    memset(guest, 0xaa, sizeof(guest));
    assert_int_equal(mbinfo_build(guest, 0x100000, INFO_GPA, 4096, ""), 116 + 48 + 1);
    assert_int_equal(get32(info + 8), 0);
    assert_int_equal(get32(info + 44), 48);
    assert_int_equal(get32(info + 16), INFO_GPA + 116 + 48);
    check_mmap_entry(info + 116 + 24, 0x9fc00, 0x100000 - 0x9fc00, 2);
    assert_int_equal(info[116 + 48], 0);
}

static void test_mbinfo_too_small(void **state)
{
    (void)state;
    const char *cmd = "abc";
    size_t want = 116 + 72 + 4;

    assert_int_equal(mbinfo_build(guest, MB_MEM, INFO_GPA, want - 1, cmd), 0);
    assert_int_equal(mbinfo_build(guest, MB_MEM, INFO_GPA, 100, cmd), 0);
    assert_int_equal(mbinfo_build(guest, MB_MEM, INFO_GPA, want, cmd), want);
    /* Against the top of guest memory: exactly fitting, one byte short, and past it. */
    assert_int_equal(mbinfo_build(guest, MEM, (uint32_t)(MEM - want), 4096, cmd), want);
    assert_int_equal(mbinfo_build(guest, MEM, (uint32_t)(MEM - want + 1), 4096, cmd), 0);
    assert_int_equal(mbinfo_build(guest, MEM, 0xfffffff0u, 4096, cmd), 0);
}

/* Issue 37: the IVT a BIOS leaves, so that IRQ 0 in real mode finds a handler that sends its EOI.
 */
static void test_bios_ivt(void **state)
{
    (void)state;
    _Static_assert(MEM >= 0x100000, "the BIOS area lies below 1 MiB");
    memset(guest, 0, 0x100000);
    bios_ivt_build(guest);
    uint32_t iret = 0xf0000000u | BIOS_IRET_IP;
    assert_int_equal(get32(guest + 0x00 * 4), iret);
    assert_int_equal(get32(guest + 0x10 * 4), iret);
    assert_int_equal(get32(guest + 0xff * 4), iret);
    assert_int_equal(guest[0xf0000 + BIOS_IRET_IP], 0xcf);
    uint32_t irq0 = get32(guest + 0x08 * 4), irq8 = get32(guest + 0x70 * 4);
    assert_int_equal(irq0 >> 16, 0xf000);
    assert_int_equal(get32(guest + 0x0f * 4), irq0);
    assert_int_equal(get32(guest + 0x77 * 4), irq8);
    assert_int_not_equal(get32(guest + 0x10 * 4), irq0);
    /* push ax; mov al, 0x20; out 0x20, al; pop ax; iret */
    static const uint8_t eoi1[] = {0x50, 0xb0, 0x20, 0xe6, 0x20, 0x58, 0xcf};
    assert_memory_equal(guest + 0xf0000 + (irq0 & 0xffff), eoi1, sizeof(eoi1));
    static const uint8_t eoi2[] = {0x50, 0xb0, 0x20, 0xe6, 0xa0, 0xe6, 0x20, 0x58, 0xcf};
    assert_memory_equal(guest + 0xf0000 + (irq8 & 0xffff), eoi2, sizeof(eoi2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_elf32_valid, setup),
        cmocka_unit_test_setup(test_elf64_valid, setup),
        cmocka_unit_test_setup(test_flat_valid, setup),
        cmocka_unit_test_setup(test_flat_explicit_end, setup),
        cmocka_unit_test_setup(test_flat_overrides_elf, setup),
        cmocka_unit_test_setup(test_no_header, setup),
        cmocka_unit_test_setup(test_header_search_limit, setup),
        cmocka_unit_test_setup(test_header_unaligned, setup),
        cmocka_unit_test_setup(test_bad_checksum, setup),
        cmocka_unit_test_setup(test_flags, setup),
        cmocka_unit_test_setup(test_not_elf, setup),
        cmocka_unit_test_setup(test_elf_header_checks, setup),
        cmocka_unit_test_setup(test_truncated_elf_header, setup),
        cmocka_unit_test_setup(test_phdrs_beyond_file, setup),
        cmocka_unit_test_setup(test_phentsize_too_small, setup),
        cmocka_unit_test_setup(test_phentsize_larger, setup),
        cmocka_unit_test_setup(test_no_loadable_segments, setup),
        cmocka_unit_test_setup(test_segment_beyond_file, setup),
        cmocka_unit_test_setup(test_filesz_gt_memsz, setup),
        cmocka_unit_test_setup(test_segment_beyond_memory, setup),
        cmocka_unit_test_setup(test_segment_wraps, setup),
        cmocka_unit_test_setup(test_overlapping_segments, setup),
        cmocka_unit_test_setup(test_entry_outside, setup),
        cmocka_unit_test_setup(test_too_many_segments, setup),
        cmocka_unit_test_setup(test_flat_bad_fields, setup),
        cmocka_unit_test_setup(test_flat_truncated_fields, setup),
        cmocka_unit_test_setup(test_load_elf, setup),
        cmocka_unit_test_setup(test_load_flat, setup),
        cmocka_unit_test_setup(test_mbinfo_layout, setup),
        cmocka_unit_test_setup(test_mbinfo_small_memory, setup),
        cmocka_unit_test_setup(test_mbinfo_too_small, setup),
        cmocka_unit_test(test_bios_ivt),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

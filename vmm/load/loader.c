/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Multiboot1 guest image parser and loader. Every field is read with memcpy
 * (the image is an arbitrary byte buffer, so nothing is assumed aligned) and
 * every offset or size taken from the image is checked in a form that cannot
 * wrap: `a > limit || b > limit - a` rather than `a + b > limit`.
 */
#include "vmm/load/loader.h"

#include <stdarg.h>
#include <stdbool.h>

#include "lib/format.h"
#include "lib/bytes.h"
#include "lib/string.h"
#include "vmm/load/e820.h"

#define MB1_MAGIC        0x1BADB002u
#define MB1_SEARCH       8192
#define MB1_HEADER_SIZE  12 /* magic, flags, checksum */
#define MB1_ADDR_SIZE    32 /* plus header_addr .. entry_addr */
#define MB1_FLAG_ALIGN   (1u << 0)
#define MB1_FLAG_MEMINFO (1u << 1)
#define MB1_FLAG_VIDEO   (1u << 2)
#define MB1_FLAG_ADDR    (1u << 16)
/* Bits 0-15 are requirements the loader must honour or refuse; bits 16-31 may be ignored. */
#define MB1_REQUIRED_MASK 0xffffu

#define ELF_CLASS32   1
#define ELF_CLASS64   2
#define ELF_DATA_LSB  1
#define ELF_ET_EXEC   2
#define ELF_EM_386    3
#define ELF_EM_X86_64 62
#define ELF_PT_LOAD   1

#define ELF_IDENT_SIZE 16
#define ELF32_EHDR     52
#define ELF64_EHDR     64
#define ELF32_PHDR     32
#define ELF64_PHDR     56

#define INFO_SIZE       116
#define INFO_FLAG_MEM   (1u << 0)
#define INFO_FLAG_CMD   (1u << 2)
#define INFO_FLAG_MMAP  (1u << 6)
#define INFO_OFF_FLAGS  0
#define INFO_OFF_LOWER  4
#define INFO_OFF_UPPER  8
#define INFO_OFF_CMD    16
#define INFO_OFF_MMAPL  44
#define INFO_OFF_MMAPA  48
#define MMAP_ENTRY      24 /* size field + base, length, type */
#define MMAP_ENTRY_SIZE 20 /* the size field does not count itself */
#define ADDR32_LIMIT    0x100000000ull

/* True when [off, off + len) lies inside [0, limit). */
static bool range_ok(uint64_t off, uint64_t len, uint64_t limit)
{
    return len <= limit && off <= limit - len;
}

/*
 * Find the multiboot header. A magic with a bad checksum is skipped, as
 * other loaders do, but remembered so the failure names it. Returns the
 * header offset or -1.
 */
static long find_header(const uint8_t *data, size_t size, char *err, size_t errlen)
{
    size_t limit = size < MB1_SEARCH ? size : MB1_SEARCH;
    long bad = -1;

    for (size_t off = 0; limit >= MB1_HEADER_SIZE && off <= limit - MB1_HEADER_SIZE; off += 4) {
        uint32_t magic = get_le32(data + off);

        if (magic != MB1_MAGIC)
            continue;
        if ((uint32_t)(magic + get_le32(data + off + 4) + get_le32(data + off + 8)) == 0)
            return (long)off;
        if (bad < 0)
            bad = (long)off;
    }
    if (bad >= 0)
        return format_error(err, errlen, "multiboot header at 0x%lx has a bad checksum", bad);
    return format_error(err, errlen, "no multiboot header in the first 8 KiB");
}

static void add_segment(struct guest_image *img, uint64_t gpa, uint64_t off, uint64_t filesz,
                        uint64_t memsz)
{
    struct image_segment *s = &img->segs[img->nsegs++];

    s->gpa = gpa;
    s->file_off = off;
    s->file_size = filesz;
    s->mem_size = memsz;
    if (gpa + memsz > img->end)
        img->end = gpa + memsz;
}

static int parse_flat(const uint8_t *data, size_t size, uint64_t mem_size, size_t hdr,
                      struct guest_image *img, char *err, size_t errlen)
{
    const uint8_t *h = data + hdr;
    uint32_t header_addr = get_le32(h + 12), load_addr = get_le32(h + 16);
    uint32_t load_end_addr = get_le32(h + 20), bss_end_addr = get_le32(h + 24);
    uint64_t off, load_size, load_end, mem_end;

    img->entry = get_le32(h + 28);
    if (load_addr > header_addr || header_addr - load_addr > hdr)
        return format_error(
            err, errlen,
            "multiboot load_addr 0x%x does not fit header_addr 0x%x at file offset 0x%zx",
            load_addr, header_addr, hdr);
    off = hdr - (header_addr - load_addr);

    if (load_end_addr == 0) {
        load_size = size - off;
    } else {
        if (load_end_addr < load_addr)
            return format_error(err, errlen, "multiboot load_end_addr 0x%x is below load_addr 0x%x",
                                load_end_addr, load_addr);
        load_size = load_end_addr - load_addr;
        if (!range_ok(off, load_size, size))
            return format_error(
                err, errlen, "multiboot load ends beyond the file (offset 0x%llx + 0x%llx > 0x%zx)",
                (unsigned long long)off, (unsigned long long)load_size, size);
    }
    if (!range_ok(load_addr, load_size, mem_size))
        return format_error(err, errlen,
                            "multiboot load does not fit guest memory (0x%x + 0x%llx > 0x%llx)",
                            load_addr, (unsigned long long)load_size, (unsigned long long)mem_size);
    load_end = load_addr + load_size;

    mem_end = load_end;
    if (bss_end_addr != 0) {
        if (bss_end_addr < load_end)
            return format_error(err, errlen,
                                "multiboot bss_end_addr 0x%x is below the load end 0x%llx",
                                bss_end_addr, (unsigned long long)load_end);
        if (bss_end_addr > mem_size)
            return format_error(
                err, errlen, "multiboot bss_end_addr 0x%x is beyond guest memory of 0x%llx bytes",
                bss_end_addr, (unsigned long long)mem_size);
        mem_end = bss_end_addr;
    }
    if (img->entry < load_addr || img->entry >= mem_end)
        return format_error(err, errlen, "entry point 0x%x is outside the image [0x%x, 0x%llx)",
                            img->entry, load_addr, (unsigned long long)mem_end);

    add_segment(img, load_addr, off, load_size, mem_end - load_addr);
    img->format = "flat";
    return 0;
}

static const uint8_t elf_magic[4] = {0x7f, 'E', 'L', 'F'};

struct elf_info {
    bool is64;
    uint64_t entry, phoff;
    unsigned phentsize, phnum;
};

static int parse_ehdr(const uint8_t *data, size_t size, struct elf_info *e, char *err,
                      size_t errlen)
{
    unsigned machine;

    if (size < ELF_IDENT_SIZE || memcmp(data, elf_magic, sizeof(elf_magic)) != 0)
        return format_error(
            err, errlen,
            "not an ELF file and the multiboot header has no address fields (flag bit 16)");
    if (data[4] != ELF_CLASS32 && data[4] != ELF_CLASS64)
        return format_error(err, errlen, "unsupported ELF class %u", data[4]);
    if (data[5] != ELF_DATA_LSB)
        return format_error(err, errlen, "ELF file is not little endian");
    e->is64 = data[4] == ELF_CLASS64;
    if (size < (e->is64 ? ELF64_EHDR : ELF32_EHDR))
        return format_error(err, errlen, "truncated ELF header (%zu bytes)", size);
    if (get_le16(data + 16) != ELF_ET_EXEC)
        return format_error(err, errlen, "ELF type %u is not an executable", get_le16(data + 16));
    machine = get_le16(data + 18);
    if (machine != (e->is64 ? ELF_EM_X86_64 : ELF_EM_386))
        return format_error(err, errlen, "ELF%s machine %u is not %s", e->is64 ? "64" : "32",
                            machine, e->is64 ? "x86-64" : "i386");

    if (e->is64) {
        e->entry = get_le64(data + 24);
        e->phoff = get_le64(data + 32);
        e->phentsize = get_le16(data + 54);
        e->phnum = get_le16(data + 56);
    } else {
        e->entry = get_le32(data + 24);
        e->phoff = get_le32(data + 28);
        e->phentsize = get_le16(data + 42);
        e->phnum = get_le16(data + 44);
    }
    if (e->phnum == 0)
        return 0;
    if (e->phentsize < (e->is64 ? ELF64_PHDR : ELF32_PHDR))
        return format_error(err, errlen, "ELF program header size %u is too small", e->phentsize);
    /* Both factors are 16-bit, so the product cannot overflow. */
    if (!range_ok(e->phoff, (uint64_t)e->phentsize * e->phnum, size))
        return format_error(
            err, errlen,
            "ELF program headers end beyond the file (offset 0x%llx + %u * %u > 0x%zx)",
            (unsigned long long)e->phoff, e->phnum, e->phentsize, size);
    return 0;
}

static int parse_elf(const uint8_t *data, size_t size, uint64_t mem_size, struct guest_image *img,
                     char *err, size_t errlen)
{
    struct elf_info e = {0}; /* GCC cannot see that parse_ehdr fills it on success */
    bool entry_found = false;

    if (parse_ehdr(data, size, &e, err, errlen))
        return -1;

    for (unsigned i = 0; i < e.phnum; i++) {
        const uint8_t *ph = data + e.phoff + (uint64_t)i * e.phentsize;
        uint64_t off, paddr, filesz, memsz;

        if (get_le32(ph) != ELF_PT_LOAD)
            continue;
        if (e.is64) {
            off = get_le64(ph + 8);
            paddr = get_le64(ph + 24);
            filesz = get_le64(ph + 32);
            memsz = get_le64(ph + 40);
        } else {
            off = get_le32(ph + 4);
            paddr = get_le32(ph + 12);
            filesz = get_le32(ph + 16);
            memsz = get_le32(ph + 20);
        }
        if (memsz == 0)
            continue;
        if (filesz > memsz)
            return format_error(err, errlen,
                                "ELF program header %u has file size 0x%llx > memory size 0x%llx",
                                i, (unsigned long long)filesz, (unsigned long long)memsz);
        if (!range_ok(off, filesz, size))
            return format_error(
                err, errlen,
                "ELF program header %u ends beyond the file (offset 0x%llx + 0x%llx > "
                "0x%zx)",
                i, (unsigned long long)off, (unsigned long long)filesz, size);
        if (!range_ok(paddr, memsz, mem_size))
            return format_error(
                err, errlen,
                "ELF program header %u does not fit guest memory (0x%llx + 0x%llx > "
                "0x%llx)",
                i, (unsigned long long)paddr, (unsigned long long)memsz,
                (unsigned long long)mem_size);
        if (img->nsegs == IMAGE_MAX_SEGMENTS)
            return format_error(err, errlen, "more than %u loadable ELF segments",
                                IMAGE_MAX_SEGMENTS);
        for (unsigned j = 0; j < img->nsegs; j++) {
            const struct image_segment *s = &img->segs[j];

            /* Both ranges were checked against mem_size, so the ends cannot wrap. */
            if (paddr < s->gpa + s->mem_size && s->gpa < paddr + memsz)
                return format_error(
                    err, errlen,
                    "ELF program header %u [0x%llx, 0x%llx) overlaps segment [0x%llx, "
                    "0x%llx)",
                    i, (unsigned long long)paddr, (unsigned long long)(paddr + memsz),
                    (unsigned long long)s->gpa, (unsigned long long)(s->gpa + s->mem_size));
        }
        add_segment(img, paddr, off, filesz, memsz);
        if (e.entry >= paddr && e.entry - paddr < memsz)
            entry_found = true;
    }

    if (img->nsegs == 0)
        return format_error(err, errlen, "ELF file has no loadable segments");
    if (e.entry >= ADDR32_LIMIT)
        return format_error(err, errlen, "ELF entry point 0x%llx does not fit 32 bits",
                            (unsigned long long)e.entry);
    if (!entry_found)
        return format_error(err, errlen, "ELF entry point 0x%llx is outside the loaded segments",
                            (unsigned long long)e.entry);
    img->entry = (uint32_t)e.entry;
    img->format = e.is64 ? "elf64" : "elf32";
    return 0;
}

int image_parse(const uint8_t *data, size_t size, uint64_t mem_size, struct guest_image *out,
                char *err, size_t errlen)
{
    long hdr;
    uint32_t flags, unknown;

    memset(out, 0, sizeof(*out));
    hdr = find_header(data, size, err, errlen);
    if (hdr < 0)
        return -1;

    flags = get_le32(data + hdr + 4);
    if (flags & MB1_FLAG_VIDEO)
        return format_error(err, errlen, "multiboot header requests a video mode (flag bit 2)");
    /* Alignment holds because segments load at their own addresses; memory info is always given. */
    unknown = flags & MB1_REQUIRED_MASK & ~(MB1_FLAG_ALIGN | MB1_FLAG_MEMINFO);
    if (unknown)
        return format_error(err, errlen, "multiboot header has unsupported required flags 0x%x",
                            unknown);

    if (flags & MB1_FLAG_ADDR) {
        /* The whole header, address fields included, must lie in the search area. */
        if ((size_t)hdr + MB1_ADDR_SIZE > size || (size_t)hdr + MB1_ADDR_SIZE > MB1_SEARCH)
            return format_error(err, errlen,
                                "multiboot header at 0x%lx: address fields are truncated", hdr);
        return parse_flat(data, size, mem_size, (size_t)hdr, out, err, errlen);
    }
    return parse_elf(data, size, mem_size, out, err, errlen);
}

void image_load(const uint8_t *data, const struct guest_image *img, uint8_t *mem)
{
    for (unsigned i = 0; i < img->nsegs; i++) {
        const struct image_segment *s = &img->segs[i];

        memcpy(mem + s->gpa, data + s->file_off, s->file_size);
        memset(mem + s->gpa + s->file_size, 0, s->mem_size - s->file_size);
    }
}

static uint8_t *put_mmap(uint8_t *p, uint64_t base, uint64_t len, uint32_t type)
{
    put_le32(p, MMAP_ENTRY_SIZE);
    put_le64(p + 4, base);
    put_le64(p + 12, len);
    put_le32(p + 20, type);
    return p + MMAP_ENTRY;
}

#define BIOS_SEGMENT 0xf000u
#define BIOS_EOI1_IP 0xfe00u /* the master's IRQs */
#define BIOS_EOI2_IP 0xfe10u /* the slave's */
#define IRQ0_VECTOR  0x08u
#define IRQ8_VECTOR  0x70u
#define IVT_ENTRIES  256u

static void set_vector(uint8_t *mem, unsigned vector, uint16_t ip)
{
    put_le32(mem + vector * 4, (uint32_t)BIOS_SEGMENT << 16 | ip);
}

void bios_ivt_build(uint8_t *mem)
{
    /* push ax; mov al, 0x20 (EOI); out 0x20 (and 0xa0 first for the slave's); pop ax; iret */
    static const uint8_t eoi1[] = {0x50, 0xb0, 0x20, 0xe6, 0x20, 0x58, 0xcf};
    static const uint8_t eoi2[] = {0x50, 0xb0, 0x20, 0xe6, 0xa0, 0xe6, 0x20, 0x58, 0xcf};
    uint8_t *bios = mem + (BIOS_SEGMENT << 4);
    bios[BIOS_IRET_IP] = 0xcf;
    memcpy(bios + BIOS_EOI1_IP, eoi1, sizeof(eoi1));
    memcpy(bios + BIOS_EOI2_IP, eoi2, sizeof(eoi2));
    for (unsigned v = 0; v < IVT_ENTRIES; v++)
        set_vector(mem, v, BIOS_IRET_IP);
    for (unsigned i = 0; i < 8; i++) {
        set_vector(mem, IRQ0_VECTOR + i, BIOS_EOI1_IP);
        set_vector(mem, IRQ8_VECTOR + i, BIOS_EOI2_IP);
    }
}

size_t mbinfo_build(uint8_t *mem, uint64_t mem_size, uint32_t info_gpa, size_t max_len,
                    const char *cmdline)
{
    struct e820_entry map[E820_MAX];
    size_t nmap = e820_build(map, mem_size);
    size_t fixed = INFO_SIZE + nmap * MMAP_ENTRY;
    size_t cmdlen = strlen(cmdline);
    /* Multiboot1 pointers are 32-bit, so the block must also end below 4 GiB. */
    uint64_t limit = mem_size < ADDR32_LIMIT ? mem_size : ADDR32_LIMIT;
    size_t total;
    uint8_t *info, *p;

    if (max_len < fixed || cmdlen >= max_len - fixed)
        return 0;
    total = fixed + cmdlen + 1;
    if (!range_ok(info_gpa, total, limit))
        return 0;

    info = mem + info_gpa;
    memset(info, 0, INFO_SIZE);
    put_le32(info + INFO_OFF_FLAGS, INFO_FLAG_MEM | INFO_FLAG_CMD | INFO_FLAG_MMAP);
    put_le32(info + INFO_OFF_LOWER, (uint32_t)(E820_LOW_MEM_END / 1024));
    put_le32(info + INFO_OFF_UPPER, mem_size > E820_HIGH_MEM_START
                                        ? (uint32_t)((mem_size - E820_HIGH_MEM_START) / 1024)
                                        : 0);
    put_le32(info + INFO_OFF_MMAPL, (uint32_t)(nmap * MMAP_ENTRY));
    put_le32(info + INFO_OFF_MMAPA, info_gpa + INFO_SIZE);
    put_le32(info + INFO_OFF_CMD, (uint32_t)(info_gpa + fixed));

    p = info + INFO_SIZE;
    for (size_t i = 0; i < nmap; i++)
        p = put_mmap(p, map[i].base, map[i].len, map[i].type);
    memcpy(p, cmdline, cmdlen + 1);
    return total;
}

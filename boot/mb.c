/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Multiboot 1 and 2 information parsers. All multi-byte fields are read with
 * memcpy: the loader controls every offset, and multiboot1 memory-map
 * entries are packed, so no field is assumed to be aligned.
 */
#include "arch/x86/bootinfo.h"

#include <stdarg.h>
#include <stdbool.h>

#include "lib/format.h"
#include "lib/bytes.h"
#include "lib/string.h"

#define XSTR(x) #x
#define STR(x)  XSTR(x)

/* Strings are probed in chunks of this size, aligned so a chunk never crosses a page. */
#define STRING_CHUNK 64

#define MB2_TAG_END      0
#define MB2_TAG_CMDLINE  1
#define MB2_TAG_LOADER   2
#define MB2_TAG_MODULE   3
#define MB2_TAG_MMAP     6
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15

#define MB2_HEADER_SIZE     8
#define MB2_TAG_HEADER_SIZE 8
#define MB2_MODULE_HEADER   16 /* tag header, mod_start, mod_end */
#define MB2_MMAP_HEADER     16 /* tag header, entry_size, entry_version */
#define MB2_MMAP_ENTRY_MIN  24
#define ACPI_RSDP_V1_SIZE   20
#define ACPI_RSDP_V2_SIZE   36

#define MB1_INFO_SIZE       116
#define MB1_FLAG_CMDLINE    (1u << 2)
#define MB1_FLAG_MODS       (1u << 3)
#define MB1_FLAG_MMAP       (1u << 6)
#define MB1_FLAG_LOADER     (1u << 9)
#define MB1_OFF_FLAGS       0
#define MB1_OFF_CMDLINE     16
#define MB1_OFF_MODS_COUNT  20
#define MB1_OFF_MODS_ADDR   24
#define MB1_OFF_MMAP_LENGTH 44
#define MB1_OFF_MMAP_ADDR   48
#define MB1_OFF_LOADER      64
#define MB1_MODULE_SIZE     16
#define MB1_MMAP_ENTRY_MIN  20 /* base, len, type; the size field is not counted */

/* Names are clipped so that a message naming two modules keeps both. */
#define NAME_MAX_SHOWN 64

/*
 * Map the NUL-terminated string at phys (multiboot1 pointers are 32-bit). The map callback only
 * promises whole ranges, so the terminator is searched chunk by chunk, falling back to single bytes
 * where a chunk runs past the end of what is accessible. Returns NULL and sets *why when the string
 * is unreadable or too long.
 */
static const char *map_string(uint32_t phys, phys_map_fn map, void *ctx, const char **why)
{
    size_t off = 0;

    while (off < BOOT_MAX_STRING) {
        uint64_t at = (uint64_t)phys + off; /* a 32-bit base plus < 4 KiB cannot wrap */
        size_t chunk = STRING_CHUNK - (size_t)(at % STRING_CHUNK);
        const char *p;
        size_t n;

        if (chunk > BOOT_MAX_STRING - off)
            chunk = BOOT_MAX_STRING - off;
        p = map(at, chunk, ctx);
        if (!p) {
            chunk = 1;
            p = map(at, chunk, ctx);
        }
        if (!p)
            break;
        n = strnlen(p, chunk);
        if (n < chunk) {
            p = map(phys, off + n + 1, ctx);
            if (p)
                return p;
            break;
        }
        off += chunk;
    }
    *why = off >= BOOT_MAX_STRING ? "is not NUL-terminated within " STR(BOOT_MAX_STRING) " bytes"
                                  : "is not accessible";
    return NULL;
}

static void boot_info_reset(struct boot_info *out, int protocol)
{
    memset(out, 0, sizeof(*out));
    out->protocol = protocol;
    out->cmdline = "";
    out->loader = "";
}

/* ------------------------------------------------------------ multiboot2 */

struct mb2_ctx {
    const uint8_t *info;
    uint64_t phys;
    struct boot_info *out;
    bool have_mmap;
    bool have_new_rsdp;
    char *err;
    size_t errlen;
};

static int mb2_too_small(struct mb2_ctx *c, uint32_t type, size_t off, uint32_t size, uint32_t min)
{
    return format_error(c->err, c->errlen,
                        "multiboot2: tag type %u at offset 0x%zx has size 0x%x (< %u)", type, off,
                        size, min);
}

/* The string fills the tag's payload; it must end inside the tag. */
static int mb2_string(struct mb2_ctx *c, uint32_t type, size_t off, uint32_t size, size_t str_off,
                      const char **dst)
{
    const char *s = (const char *)c->info + off + str_off;
    size_t room = size - str_off;

    if (strnlen(s, room) == room)
        return format_error(c->err, c->errlen,
                            "multiboot2: tag type %u at offset 0x%zx: string is not NUL-terminated "
                            "within the tag",
                            type, off);
    *dst = s;
    return 0;
}

static int mb2_module(struct mb2_ctx *c, size_t off, uint32_t size)
{
    const uint8_t *tag = c->info + off;
    struct boot_module *m;

    if (size < MB2_MODULE_HEADER + 1)
        return mb2_too_small(c, MB2_TAG_MODULE, off, size, MB2_MODULE_HEADER + 1);
    if (c->out->mod_count == BOOT_MAX_MODULES)
        return format_error(
            c->err, c->errlen,
            "multiboot2: module tag at offset 0x%zx exceeds the limit of %u modules "
            "(BOOT_MAX_MODULES)",
            off, BOOT_MAX_MODULES);
    m = &c->out->mods[c->out->mod_count];
    m->start = get_le32(tag + 8);
    m->end = get_le32(tag + 12);
    if (mb2_string(c, MB2_TAG_MODULE, off, size, MB2_MODULE_HEADER, &m->cmdline) < 0)
        return -1;
    c->out->mod_count++;
    return 0;
}

static int mb2_mmap(struct mb2_ctx *c, size_t off, uint32_t size)
{
    const uint8_t *tag = c->info + off;
    uint32_t entry_size;
    size_t body;

    if (size < MB2_MMAP_HEADER)
        return mb2_too_small(c, MB2_TAG_MMAP, off, size, MB2_MMAP_HEADER);
    entry_size = get_le32(tag + 8);
    body = size - MB2_MMAP_HEADER;
    if (entry_size < MB2_MMAP_ENTRY_MIN)
        return format_error(c->err, c->errlen,
                            "multiboot2: memory map tag at offset 0x%zx has entry_size 0x%x (< %u)",
                            off, entry_size, MB2_MMAP_ENTRY_MIN);
    if (body % entry_size)
        return format_error(c->err, c->errlen,
                            "multiboot2: memory map tag at offset 0x%zx: size 0x%x is not %u + a "
                            "multiple of entry_size 0x%x",
                            off, size, MB2_MMAP_HEADER, entry_size);

    for (size_t e = 0; e < body; e += entry_size) {
        const uint8_t *p = tag + MB2_MMAP_HEADER + e;
        struct mem_range *r;

        if (c->out->mmap_count == BOOT_MAX_MMAP)
            return format_error(
                c->err, c->errlen,
                "multiboot2: memory map tag at offset 0x%zx exceeds the limit of %u "
                "entries (BOOT_MAX_MMAP)",
                off, BOOT_MAX_MMAP);
        r = &c->out->mmap[c->out->mmap_count++];
        r->base = get_le64(p);
        r->len = get_le64(p + 8);
        r->type = get_le32(p + 16);
    }
    c->have_mmap = true;
    return 0;
}

static int mb2_tag(struct mb2_ctx *c, uint32_t type, size_t off, uint32_t size)
{
    switch (type) {
    case MB2_TAG_CMDLINE:
        return mb2_string(c, type, off, size, MB2_TAG_HEADER_SIZE, &c->out->cmdline);
    case MB2_TAG_LOADER:
        return mb2_string(c, type, off, size, MB2_TAG_HEADER_SIZE, &c->out->loader);
    case MB2_TAG_MODULE:
        return mb2_module(c, off, size);
    case MB2_TAG_MMAP:
        return mb2_mmap(c, off, size);
    case MB2_TAG_ACPI_OLD:
        if (size < MB2_TAG_HEADER_SIZE + ACPI_RSDP_V1_SIZE)
            return mb2_too_small(c, type, off, size, MB2_TAG_HEADER_SIZE + ACPI_RSDP_V1_SIZE);
        /* The new (ACPI 2.0+) copy wins whichever order the tags come in. */
        if (!c->have_new_rsdp)
            c->out->rsdp = c->phys + off + MB2_TAG_HEADER_SIZE;
        return 0;
    case MB2_TAG_ACPI_NEW:
        if (size < MB2_TAG_HEADER_SIZE + ACPI_RSDP_V2_SIZE)
            return mb2_too_small(c, type, off, size, MB2_TAG_HEADER_SIZE + ACPI_RSDP_V2_SIZE);
        c->out->rsdp = c->phys + off + MB2_TAG_HEADER_SIZE;
        c->have_new_rsdp = true;
        return 0;
    default:
        return 0;
    }
}

int mb2_parse(uint64_t info_phys, size_t max_size, phys_map_fn map, void *ctx,
              struct boot_info *out, char *err, size_t errlen)
{
    struct mb2_ctx c = {.phys = info_phys, .out = out, .err = err, .errlen = errlen};
    const uint8_t *hdr;
    uint32_t total, size;
    bool found_end = false;
    size_t off;

    boot_info_reset(out, 2);
    hdr = map(info_phys, MB2_HEADER_SIZE, ctx);
    if (!hdr)
        return format_error(err, errlen, "multiboot2: info header at 0x%llx is not accessible",
                            (unsigned long long)info_phys);
    total = get_le32(hdr);
    if (total < MB2_HEADER_SIZE + MB2_TAG_HEADER_SIZE)
        return format_error(err, errlen, "multiboot2: total_size 0x%x is too small (< 0x%x)", total,
                            MB2_HEADER_SIZE + MB2_TAG_HEADER_SIZE);
    if (total > max_size)
        return format_error(err, errlen, "multiboot2: total_size 0x%x exceeds the limit 0x%zx",
                            total, max_size);
    if (info_phys + total < info_phys || !(c.info = map(info_phys, total, ctx)))
        return format_error(err, errlen, "multiboot2: info [0x%llx, +0x%x) is not accessible",
                            (unsigned long long)info_phys, total);
    out->info_start = info_phys;
    out->info_end = info_phys + total;

    /* off never passes total + 7, so the sums below cannot wrap. */
    for (off = MB2_HEADER_SIZE; off + MB2_TAG_HEADER_SIZE <= total; off += (size + 7) & ~7u) {
        uint32_t type = get_le32(c.info + off);

        size = get_le32(c.info + off + 4);
        if (size < MB2_TAG_HEADER_SIZE)
            return mb2_too_small(&c, type, off, size, MB2_TAG_HEADER_SIZE);
        if (size > total - off)
            return format_error(err, errlen,
                                "multiboot2: tag type %u at offset 0x%zx with size 0x%x overruns "
                                "total_size 0x%x",
                                type, off, size, total);
        if (type == MB2_TAG_END) {
            found_end = true;
            break;
        }
        if (mb2_tag(&c, type, off, size) < 0)
            return -1;
    }
    if (!found_end)
        return format_error(err, errlen, "multiboot2: no end tag within total_size 0x%x", total);
    if (!c.have_mmap)
        return format_error(err, errlen, "multiboot2: no memory map tag (type %u)", MB2_TAG_MMAP);
    if (out->mmap_count == 0)
        return format_error(err, errlen, "multiboot2: the memory map has no entries");
    return 0;
}

/* ------------------------------------------------------------ multiboot1 */

static int mb1_string(uint32_t phys, const char *what, phys_map_fn map, void *ctx, const char **dst,
                      char *err, size_t errlen)
{
    const char *why;
    const char *s = map_string(phys, map, ctx, &why);

    if (!s)
        return format_error(err, errlen, "multiboot1: %s at 0x%x %s", what, phys, why);
    *dst = s;
    return 0;
}

static int mb1_modules(const uint8_t *info, phys_map_fn map, void *ctx, struct boot_info *out,
                       char *err, size_t errlen)
{
    uint32_t count = get_le32(info + MB1_OFF_MODS_COUNT);
    uint32_t addr = get_le32(info + MB1_OFF_MODS_ADDR);
    const uint8_t *mods;

    if (count > BOOT_MAX_MODULES)
        return format_error(
            err, errlen,
            "multiboot1: mods_count %u exceeds the limit of %u modules (BOOT_MAX_MODULES)", count,
            BOOT_MAX_MODULES);
    if (count == 0)
        return 0;
    mods = map(addr, (size_t)count * MB1_MODULE_SIZE, ctx);
    if (!mods)
        return format_error(err, errlen, "multiboot1: module list [0x%x, +0x%x) is not accessible",
                            addr, count * MB1_MODULE_SIZE);

    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = mods + (size_t)i * MB1_MODULE_SIZE;
        struct boot_module *m = &out->mods[i];
        uint32_t str = get_le32(e + 8);
        char what[32];

        m->start = get_le32(e);
        m->end = get_le32(e + 4);
        m->cmdline = "";
        /* The spec allows 0 for a module without a string. */
        if (str != 0) {
            snprintf(what, sizeof(what), "module %u string", i);
            if (mb1_string(str, what, map, ctx, &m->cmdline, err, errlen) < 0)
                return -1;
        }
    }
    out->mod_count = count;
    return 0;
}

static int mb1_mmap(const uint8_t *info, phys_map_fn map, void *ctx, struct boot_info *out,
                    char *err, size_t errlen)
{
    uint32_t length = get_le32(info + MB1_OFF_MMAP_LENGTH);
    uint32_t addr = get_le32(info + MB1_OFF_MMAP_ADDR);
    const uint8_t *mm;
    size_t off = 0;

    if (length == 0)
        return format_error(err, errlen, "multiboot1: the memory map has no entries");
    mm = map(addr, length, ctx);
    if (!mm)
        return format_error(err, errlen, "multiboot1: memory map [0x%x, +0x%x) is not accessible",
                            addr, length);

    while (off < length) {
        uint32_t size;
        struct mem_range *r;

        if (length - off < 4)
            return format_error(
                err, errlen,
                "multiboot1: memory map entry at offset 0x%zx overruns mmap_length 0x%x", off,
                length);
        size = get_le32(mm + off);
        if (size < MB1_MMAP_ENTRY_MIN)
            return format_error(err, errlen,
                                "multiboot1: memory map entry at offset 0x%zx has size %u (< %u)",
                                off, size, MB1_MMAP_ENTRY_MIN);
        if (size > length - off - 4)
            return format_error(
                err, errlen,
                "multiboot1: memory map entry at offset 0x%zx with size %u overruns "
                "mmap_length 0x%x",
                off, size, length);
        if (out->mmap_count == BOOT_MAX_MMAP)
            return format_error(
                err, errlen,
                "multiboot1: memory map at offset 0x%zx exceeds the limit of %u entries "
                "(BOOT_MAX_MMAP)",
                off, BOOT_MAX_MMAP);
        r = &out->mmap[out->mmap_count++];
        r->base = get_le64(mm + off + 4);
        r->len = get_le64(mm + off + 12);
        r->type = get_le32(mm + off + 20);
        off += (size_t)size + 4;
    }
    return 0;
}

int mb1_parse(uint64_t info_phys, phys_map_fn map, void *ctx, struct boot_info *out, char *err,
              size_t errlen)
{
    const uint8_t *info;
    uint32_t flags;

    boot_info_reset(out, 1);
    info = map(info_phys, MB1_INFO_SIZE, ctx);
    if (!info)
        return format_error(err, errlen, "multiboot1: info block [0x%llx, +0x%x) is not accessible",
                            (unsigned long long)info_phys, MB1_INFO_SIZE);
    out->info_start = info_phys;
    out->info_end = info_phys + MB1_INFO_SIZE;
    flags = get_le32(info + MB1_OFF_FLAGS);

    if ((flags & MB1_FLAG_CMDLINE) && mb1_string(get_le32(info + MB1_OFF_CMDLINE), "cmdline", map,
                                                 ctx, &out->cmdline, err, errlen) < 0)
        return -1;
    if ((flags & MB1_FLAG_LOADER) && mb1_string(get_le32(info + MB1_OFF_LOADER), "boot_loader_name",
                                                map, ctx, &out->loader, err, errlen) < 0)
        return -1;
    if ((flags & MB1_FLAG_MODS) && mb1_modules(info, map, ctx, out, err, errlen) < 0)
        return -1;
    if (!(flags & MB1_FLAG_MMAP))
        return format_error(err, errlen, "multiboot1: flags 0x%x lack bit 6 (memory map)", flags);
    return mb1_mmap(info, map, ctx, out, err, errlen);
}

/* ------------------------------------------------------------ cross-checks */

static bool overlaps(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end)
{
    return a_start < b_end && b_start < a_end;
}

int bootinfo_check(const struct boot_info *bi, uint64_t kernel_start, uint64_t kernel_end,
                   char *err, size_t errlen)
{
    for (unsigned i = 0; i < bi->mod_count; i++) {
        const struct boot_module *m = &bi->mods[i];

        if (m->start >= m->end)
            return format_error(err, errlen,
                                "module %u (name=%.*s) has start 0x%llx >= end 0x%llx (empty or "
                                "inverted)",
                                i, NAME_MAX_SHOWN, m->cmdline, (unsigned long long)m->start,
                                (unsigned long long)m->end);
        if (overlaps(m->start, m->end, kernel_start, kernel_end))
            return format_error(
                err, errlen,
                "module %u (name=%.*s) [0x%llx, 0x%llx) overlaps the kernel [0x%llx, "
                "0x%llx)",
                i, NAME_MAX_SHOWN, m->cmdline, (unsigned long long)m->start,
                (unsigned long long)m->end, (unsigned long long)kernel_start,
                (unsigned long long)kernel_end);
        if (overlaps(m->start, m->end, bi->info_start, bi->info_end))
            return format_error(
                err, errlen,
                "module %u (name=%.*s) [0x%llx, 0x%llx) overlaps the boot info [0x%llx, "
                "0x%llx)",
                i, NAME_MAX_SHOWN, m->cmdline, (unsigned long long)m->start,
                (unsigned long long)m->end, (unsigned long long)bi->info_start,
                (unsigned long long)bi->info_end);
        for (unsigned j = 0; j < i; j++) {
            const struct boot_module *o = &bi->mods[j];

            if (overlaps(m->start, m->end, o->start, o->end))
                return format_error(err, errlen,
                                    "module %u (name=%.*s) overlaps module %u (name=%.*s)", i,
                                    NAME_MAX_SHOWN, m->cmdline, j, NAME_MAX_SHOWN, o->cmdline);
        }
    }
    return 0;
}

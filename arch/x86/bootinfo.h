/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Boot information handed over by the loader, in one protocol-neutral form.
 *
 * Contract: the parsers never trust the loader. Every length, offset and
 * string is checked against the bounds of the structure that holds it; on
 * any inconsistency they return -1 and write a one-line reason into err
 * (e.g. "multiboot2: tag 6 at offset 0x48 overruns total_size 0x40").
 * They never fault on malformed input. Physical addresses are reached only
 * through the caller's phys_map callback, so host unit tests can feed
 * synthetic memory.
 */
#ifndef POLLUX_ARCH_X86_BOOTINFO_H
#define POLLUX_ARCH_X86_BOOTINFO_H

#include <stddef.h>
#include <stdint.h>

#define BOOT_MAX_MMAP    128
#define BOOT_MAX_MODULES 32
#define BOOT_MAX_STRING  4096 /* longest command line accepted */

#define MB1_BOOT_MAGIC 0x2BADB002u
#define MB2_BOOT_MAGIC 0x36d76289u

/* Memory-map entry types, as in E820 / multiboot. */
enum mem_type {
    MEM_USABLE = 1,
    MEM_RESERVED = 2,
    MEM_ACPI_RECLAIMABLE = 3,
    MEM_ACPI_NVS = 4,
    MEM_BAD = 5,
};

struct mem_range {
    uint64_t base;
    uint64_t len;
    uint32_t type; /* enum mem_type; unknown values are kept and treated as reserved */
};

struct boot_module {
    uint64_t start;      /* physical, inclusive */
    uint64_t end;        /* physical, exclusive */
    const char *cmdline; /* NUL-terminated, never NULL ("" if none) */
};

struct boot_info {
    int protocol;        /* 1 or 2 */
    const char *cmdline; /* never NULL */
    const char *loader;  /* boot loader name, or "" */
    struct mem_range mmap[BOOT_MAX_MMAP];
    unsigned mmap_count;
    struct boot_module mods[BOOT_MAX_MODULES];
    unsigned mod_count;
    uint64_t rsdp;       /* physical address of an RSDP (or of the loader's copy), 0 if none */
    uint64_t info_start; /* physical range of the loader's info structure, */
    uint64_t info_end;   /* to be reserved by the page allocator */
};

/*
 * Translate [phys, phys+len) to a pointer, or NULL if it is not accessible.
 * Pointers returned stay valid after later calls (callers keep them), as
 * with the hypervisor's identity map.
 */
typedef const void *(*phys_map_fn)(uint64_t phys, size_t len, void *ctx);

/*
 * Parse a multiboot2 information structure at physical address info_phys.
 * Tags used: 1 (command line), 2 (loader name), 3 (module), 6 (memory map),
 * 14/15 (ACPI old/new RSDP copy). Unknown tags are skipped. Requires the end
 * tag and 8-byte tag alignment. A total_size above max_size is rejected.
 */
int mb2_parse(uint64_t info_phys, size_t max_size, phys_map_fn map, void *ctx,
              struct boot_info *out, char *err, size_t errlen);

/*
 * Parse a multiboot1 information structure. Uses flags bit 2 (cmdline),
 * bit 3 (modules), bit 6 (memory map, required) and bit 9 (loader name).
 * info_start/info_end cover the info block only; rsdp is left 0 (the caller
 * scans the BIOS areas).
 */
int mb1_parse(uint64_t info_phys, phys_map_fn map, void *ctx, struct boot_info *out, char *err,
              size_t errlen);

/*
 * Cross-checks shared by both protocols: modules must have start < end, must
 * not overlap each other, the kernel image [kernel_start, kernel_end) or the
 * info structure. The reason names the offending module by index and command
 * line.
 */
int bootinfo_check(const struct boot_info *bi, uint64_t kernel_start, uint64_t kernel_end,
                   char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every field is read with the lib/bytes.h helpers: the image is an arbitrary
 * byte buffer. Offsets are those of boot_params (the setup header sits at
 * 0x1f1 in both the file and the zero page).
 */
#include "vmm/load/bzimage.h"

#include "arch/x86/pmm.h"
#include "lib/bytes.h"
#include "lib/format.h"
#include "lib/string.h"

#define BP_ACPI_RSDP      0x070
#define BP_E820_ENTRIES   0x1e8
#define HDR_START         0x1f1 /* setup_sects */
#define HDR_BOOT_FLAG     0x1fe
#define HDR_JUMP          0x200 /* a short jump over the header: its end is 0x202 + byte 0x201 */
#define HDR_MAGIC         0x202
#define HDR_VERSION       0x206
#define HDR_LOADER_TYPE   0x210
#define HDR_LOADFLAGS     0x211
#define HDR_RAMDISK_IMAGE 0x218
#define HDR_RAMDISK_SIZE  0x21c
#define HDR_CMD_LINE_PTR  0x228
#define HDR_INITRD_MAX    0x22c
#define HDR_RELOCATABLE   0x234
#define HDR_CMDLINE_SIZE  0x238
#define HDR_PREF_ADDRESS  0x258
#define HDR_INIT_SIZE     0x260
#define HDR_MIN_END       0x264 /* the fields above, all of protocol 2.10+ */
#define BP_HDR_LIMIT      0x290 /* the zero page's room for the header */
#define BP_E820_TABLE     0x2d0
#define BP_E820_MAX       128
#define E820_ENTRY_SIZE   20

#define BOOT_FLAG          0xaa55
#define HDRS_MAGIC         0x53726448u /* "HdrS" */
#define LOADFLAG_HIGH      0x01        /* the protected-mode kernel is loaded at 1 MiB or above */
#define LOADER_TYPE_OTHER  0xff        /* no assigned boot loader id */
#define DEFAULT_SETUP_SECT 4           /* setup_sects 0 means 4 */
#define SECTOR             512

static bool range_ok(uint64_t off, uint64_t len, uint64_t limit)
{
    return len <= limit && off <= limit - len;
}

bool bzimage_detect(const uint8_t *data, size_t size)
{
    return size >= HDR_MAGIC + 4 && get_le32(data + HDR_MAGIC) == HDRS_MAGIC;
}

int bzimage_parse(const uint8_t *data, size_t size, uint64_t mem_size, struct bzimage *out,
                  char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (size < HDR_MIN_END || !bzimage_detect(data, size))
        return format_error(err, errlen, "not a Linux bzImage (no setup header)");
    if (get_le16(data + HDR_BOOT_FLAG) != BOOT_FLAG)
        return format_error(err, errlen, "bzImage boot flag is 0x%x, not 0xaa55",
                            get_le16(data + HDR_BOOT_FLAG));
    out->version = get_le16(data + HDR_VERSION);
    if (out->version < BZIMAGE_MIN_VERSION)
        return format_error(err, errlen,
                            "Linux boot protocol %u.%02u is older than 2.12 (no xloadflags)",
                            out->version >> 8, out->version & 0xff);
    if (!data[HDR_RELOCATABLE])
        return format_error(err, errlen, "the Linux kernel is not relocatable");
    if (!(data[HDR_LOADFLAGS] & LOADFLAG_HIGH))
        return format_error(err, errlen, "not a bzImage (a zImage loads below 1 MiB)");

    unsigned sects = data[HDR_START] ? data[HDR_START] : DEFAULT_SETUP_SECT;
    out->kernel_off = (uint64_t)(sects + 1) * SECTOR;
    if (out->kernel_off >= size)
        return format_error(
            err, errlen, "bzImage setup (%u sectors) leaves no kernel in 0x%zx bytes", sects, size);
    out->kernel_size = size - out->kernel_off;
    /* The header ends where its own jump over it lands. */
    out->hdr_end = HDR_JUMP + 2 + data[HDR_JUMP + 1];
    if (out->hdr_end < HDR_MIN_END)
        out->hdr_end = HDR_MIN_END;
    if (out->hdr_end > BP_HDR_LIMIT)
        out->hdr_end = BP_HDR_LIMIT;

    uint64_t pref = get_le64(data + HDR_PREF_ADDRESS);
    uint32_t init_size = get_le32(data + HDR_INIT_SIZE);
    if (init_size < out->kernel_size)
        return format_error(err, errlen,
                            "bzImage init_size 0x%x is below its kernel's 0x%llx bytes", init_size,
                            (unsigned long long)out->kernel_size);
    if (pref < E820_HIGH_MEM_START || !range_ok(pref, init_size, mem_size))
        return format_error(err, errlen,
                            "the kernel needs [0x%llx, 0x%llx): more than the VM's %llu MiB",
                            (unsigned long long)pref, (unsigned long long)(pref + init_size),
                            (unsigned long long)(mem_size >> 20));
    out->load_gpa = pref;
    out->end = pref + init_size;
    out->initrd_max = get_le32(data + HDR_INITRD_MAX);
    out->cmdline_max = get_le32(data + HDR_CMDLINE_SIZE);
    return 0;
}

uint64_t bzimage_initrd_gpa(const struct bzimage *k, uint64_t mem_size, uint64_t size)
{
    uint64_t top = mem_size < (uint64_t)k->initrd_max + 1 ? mem_size : (uint64_t)k->initrd_max + 1;
    if (size > top)
        return 0;
    uint64_t gpa = (top - size) & ~(PAGE_SIZE - 1);
    return gpa >= k->end ? gpa : 0;
}

void bzimage_boot_params(uint8_t *bp, const uint8_t *data, const struct bzimage *k,
                         const struct linux_boot *b)
{
    memset(bp, 0, BOOT_PARAMS_SIZE);
    memcpy(bp + HDR_START, data + HDR_START, k->hdr_end - HDR_START);

    bp[HDR_LOADER_TYPE] = LOADER_TYPE_OTHER;
    put_le32(bp + HDR_CMD_LINE_PTR, b->cmdline_gpa);
    put_le32(bp + HDR_RAMDISK_IMAGE, b->initrd_gpa);
    put_le32(bp + HDR_RAMDISK_SIZE, b->initrd_size);
    put_le64(bp + BP_ACPI_RSDP, b->rsdp_gpa);
    unsigned n = b->e820_count < BP_E820_MAX ? b->e820_count : BP_E820_MAX;
    bp[BP_E820_ENTRIES] = (uint8_t)n;
    for (unsigned i = 0; i < n; i++) {
        uint8_t *e = bp + BP_E820_TABLE + i * E820_ENTRY_SIZE;
        put_le64(e, b->e820[i].base);
        put_le64(e + 8, b->e820[i].len);
        put_le32(e + 16, b->e820[i].type);
    }
}

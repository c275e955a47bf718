/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Linux's x86 boot protocol (Documentation/arch/x86/boot.rst), as a
 * bootloader without a BIOS uses it: the kernel's setup header is read from
 * the bzImage, the protected-mode kernel is copied to the address the header
 * prefers, and a boot_params page ("zero page") describes memory (e820), the
 * command line, the initramfs and the ACPI RSDP. The kernel is entered at its
 * 32-bit entry point in flat protected mode, paging off, ESI = boot_params.
 *
 * Contract: bzimage_parse never trusts the image. It accepts only protocol
 * 2.12 or later (xloadflags, the 64-bit-capable header) with a relocatable
 * kernel, and checks the protected-mode kernel lies inside the file and
 * [pref_address, pref_address + init_size) inside guest memory; otherwise
 * -1 with a one-line reason. It never reads outside [data, data + size).
 */
#ifndef POLLUX_VMM_LOAD_BZIMAGE_H
#define POLLUX_VMM_LOAD_BZIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/load/e820.h"

#define BZIMAGE_MIN_VERSION 0x020c
#define BOOT_PARAMS_SIZE    4096

struct bzimage {
    uint16_t version;     /* boot protocol, e.g. 0x020f */
    uint64_t kernel_off;  /* file offset of the protected-mode kernel */
    uint64_t kernel_size; /* its bytes in the file */
    uint64_t load_gpa;    /* where it is copied (and its 32-bit entry point) */
    uint64_t end;         /* load_gpa + init_size: memory the kernel decompresses into */
    uint32_t initrd_max;  /* highest address the initramfs may occupy */
    uint32_t cmdline_max; /* longest command line, without the NUL */
    uint32_t hdr_end;     /* end of the setup header in the file (within its first sectors) */
};

/* Does the image carry a Linux setup header ("HdrS")? */
bool bzimage_detect(const uint8_t *data, size_t size);

int bzimage_parse(const uint8_t *data, size_t size, uint64_t mem_size, struct bzimage *out,
                  char *err, size_t errlen);

/* Where the boot loader put things, for the boot_params page. */
struct linux_boot {
    uint32_t cmdline_gpa;
    uint32_t initrd_gpa, initrd_size; /* size 0: no initramfs */
    uint64_t rsdp_gpa;
    const struct e820_entry *e820;
    unsigned e820_count;
};

/*
 * Highest page-aligned address for an initramfs of size bytes, below both
 * mem_size and the kernel's limit and above its decompression area; 0 if it
 * does not fit.
 */
uint64_t bzimage_initrd_gpa(const struct bzimage *k, uint64_t mem_size, uint64_t size);

/* Fill the boot_params page bp (BOOT_PARAMS_SIZE bytes) from the parsed image and b. */
void bzimage_boot_params(uint8_t *bp, const uint8_t *data, const struct bzimage *k,
                         const struct linux_boot *b);

#endif

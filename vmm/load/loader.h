/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Guest images: multiboot1 kernels, as ELF32, ELF64 or flat binaries whose
 * multiboot header carries the address fields (flags bit 16).
 *
 * Contract: image_parse never trusts the image. It finds the multiboot1
 * header (4-byte aligned, within the first 8 KiB, magic + flags + checksum
 * == 0), rejects header flags it cannot honour (bits 0-1 are accepted and
 * satisfied; bit 2, video mode, and any other unknown bit in the low 16 are
 * refused), and checks every segment lies inside the file and inside guest
 * memory [0, mem_size), segments do not overlap each other, and the entry
 * point is inside a loaded segment. On failure it returns -1 with a one-line
 * reason (e.g. "ELF program header 2 ends beyond the file (offset 0x1200 +
 * 0x4000 > 0x3000)"). It never reads outside [data, data+size).
 */
#ifndef POLLUX_VMM_LOAD_LOADER_H
#define POLLUX_VMM_LOAD_LOADER_H

#include <stddef.h>
#include <stdint.h>

#define IMAGE_MAX_SEGMENTS 16

struct image_segment {
    uint64_t gpa;       /* guest-physical load address */
    uint64_t file_off;  /* offset of the bytes in the image */
    uint64_t file_size; /* bytes copied from the image */
    uint64_t mem_size;  /* bytes occupied in memory (the rest zeroed), >= file_size */
};

struct guest_image {
    uint32_t entry; /* guest-physical entry point, entered in 32-bit protected mode */
    struct image_segment segs[IMAGE_MAX_SEGMENTS];
    unsigned nsegs;
    uint64_t end;       /* highest gpa occupied + 1 */
    const char *format; /* "elf32", "elf64" or "flat" */
};

int image_parse(const uint8_t *data, size_t size, uint64_t mem_size, struct guest_image *out,
                char *err, size_t errlen);

/* Copy the segments into guest memory (mem = host pointer to gpa 0), zeroing BSS. */
void image_load(const uint8_t *data, const struct guest_image *img, uint8_t *mem);

/*
 * Build a multiboot1 information block for the guest at gpa info_gpa, with
 * flags MEM | CMDLINE | MMAP: mem_lower 639 KiB, mem_upper from 1 MiB to
 * mem_size, a memory map of [0, 0x9fc00) usable, [0x9fc00, 0x100000)
 * reserved, [0x100000, mem_size) usable, and the command line (copied after
 * the map). Returns the bytes used, or 0 if it does not fit below mem_size
 * or in max_len bytes.
 */
size_t mbinfo_build(uint8_t *mem, uint64_t mem_size, uint32_t info_gpa, size_t max_len,
                    const char *cmdline);

/*
 * The real-mode interrupt vector table a PC BIOS leaves (SeaBIOS's
 * ivt_init), for a guest that enables interrupts in real mode without
 * vectors of its own: every vector an IRET at F000:FF53 (the IBM PC's
 * dummy handler, SeaBIOS's entry_iret_official), the 8259s' vectors
 * (0x08-0x0f, 0x70-0x77, as the 8259s start: vmm/dev/vpic.c) a handler that
 * sends the EOI (the slave's to both chips) and returns. The handlers sit
 * in the BIOS area at 0xF0000, which the memory map leaves out. mem holds
 * at least 1 MiB.
 */
#define BIOS_IRET_IP 0xff53u
void bios_ivt_build(uint8_t *mem);

#endif

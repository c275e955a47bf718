/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest-physical memory map every VM is told about (multiboot mmap,
 * Linux's boot_params e820 table): a PC's layout, because Linux expects one.
 *   [0, 0x9fc00)          RAM: Linux puts its real-mode AP trampoline here
 *   [0x9fc00, 0x100000)   reserved: EBDA, ROM area; pollux's ACPI tables
 *                         live at E820_ACPI_BASE inside it
 *   [0x100000, mem_size)  RAM
 */
#ifndef POLLUX_VMM_LOAD_E820_H
#define POLLUX_VMM_LOAD_E820_H

#include <stdint.h>

#define E820_RAM      1
#define E820_RESERVED 2
#define E820_MAX      3

#define E820_LOW_MEM_END    0x9fc00ull
#define E820_HIGH_MEM_START 0x100000ull
/* Where ACPI tables go: Linux also scans 0xe0000-0xfffff for the RSDP. */
#define E820_ACPI_BASE 0xe0000ull
#define E820_ACPI_SIZE 0x10000ull

struct e820_entry {
    uint64_t base, len;
    uint32_t type;
};

/* Fill map (E820_MAX entries) for a VM of mem_size bytes; returns the entry count. */
unsigned e820_build(struct e820_entry map[E820_MAX], uint64_t mem_size);

#endif

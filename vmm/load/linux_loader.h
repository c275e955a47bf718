/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Putting a Linux kernel into a VM's memory the way a BIOS-less boot loader
 * does (docs/linux.md): the bzImage's protected-mode kernel at the address
 * its header prefers, the initramfs as high as the kernel allows, the
 * command line and boot_params below 640 KiB, the ACPI tables at
 * E820_ACPI_BASE. Guest-physical layout:
 *   LINUX_BOOT_PARAMS_GPA  boot_params (4 KiB)
 *   LINUX_CMDLINE_GPA      the command line (up to LINUX_CMDLINE_MAX bytes)
 *   E820_ACPI_BASE         RSDP, XSDT, FADT, MADT, DSDT, SSDT (virtio devices)
 */
#ifndef POLLUX_VMM_LOAD_LINUX_LOADER_H
#define POLLUX_VMM_LOAD_LINUX_LOADER_H

#include <stddef.h>
#include <stdint.h>

#define LINUX_BOOT_PARAMS_GPA 0x7000u
#define LINUX_CMDLINE_GPA     0x20000u
#define LINUX_CMDLINE_MAX     0x10000u
/* The command line of the module that holds a VM's initramfs (the module after the kernel's). */
#define LINUX_INITRD_MODULE "initrd"

struct linux_image {
    const uint8_t *kernel, *initrd;
    size_t kernel_size, initrd_size;
};

/*
 * Load img into mem (host pointer to guest-physical 0, mem_size bytes,
 * zeroed) for a VM of nvcpus with command line cmdline, whose ACPI tables
 * declare the virtio slots in virtio_slots (bit n for slot n,
 * vmconfig_virtio_slots()). On success returns 0 and the 32-bit entry
 * point; else -1 with a one-line reason.
 */
int linux_load(uint8_t *mem, uint64_t mem_size, unsigned nvcpus, unsigned virtio_slots,
               const struct linux_image *img, const char *cmdline, uint32_t *entry, char *err,
               size_t errlen);

#endif

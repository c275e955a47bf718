/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/load/linux_loader.h"

#include <stdarg.h>

#include "lib/format.h"
#include "lib/string.h"
#include "vmm/load/acpi_tables.h"
#include "vmm/load/bzimage.h"
#include "vmm/dev/vioapic.h"

int linux_load(uint8_t *mem, uint64_t mem_size, unsigned nvcpus, unsigned virtio_slots,
               const struct linux_image *img, const char *cmdline, uint32_t *entry, char *err,
               size_t errlen)
{
    struct bzimage k;
    if (bzimage_parse(img->kernel, img->kernel_size, mem_size, &k, err, errlen))
        return -1;
    size_t cmdlen = strlen(cmdline);
    uint32_t cmd_max =
        k.cmdline_max < LINUX_CMDLINE_MAX - 1 ? k.cmdline_max : LINUX_CMDLINE_MAX - 1;
    if (cmdlen > cmd_max)
        return format_error(err, errlen, "the command line has %zu characters; the kernel takes %u",
                            cmdlen, cmd_max);
    uint64_t initrd_gpa = 0;
    if (img->initrd_size) {
        initrd_gpa = bzimage_initrd_gpa(&k, mem_size, img->initrd_size);
        if (!initrd_gpa)
            return format_error(err, errlen,
                                "no room for the %zu KiB initramfs between the kernel's end 0x%llx "
                                "and memory's end",
                                img->initrd_size >> 10, (unsigned long long)k.end);
        memcpy(mem + initrd_gpa, img->initrd, img->initrd_size);
    }
    size_t acpi_len =
        acpi_tables_build(mem + E820_ACPI_BASE, E820_ACPI_SIZE, E820_ACPI_BASE, nvcpus, IOAPIC_BASE,
                          acpi_dsdt_aml, (size_t)(acpi_dsdt_aml_end - acpi_dsdt_aml), virtio_slots);
    if (!acpi_len)
        return format_error(err, errlen, "the ACPI tables for %u vCPUs do not fit", nvcpus);

    memcpy(mem + k.load_gpa, img->kernel + k.kernel_off, k.kernel_size);
    memcpy(mem + LINUX_CMDLINE_GPA, cmdline, cmdlen + 1);
    struct e820_entry map[E820_MAX];
    struct linux_boot b = {.cmdline_gpa = LINUX_CMDLINE_GPA,
                           .initrd_gpa = (uint32_t)initrd_gpa,
                           .initrd_size = (uint32_t)img->initrd_size,
                           .rsdp_gpa = E820_ACPI_BASE,
                           .e820 = map,
                           .e820_count = e820_build(map, mem_size)};
    bzimage_boot_params(mem + LINUX_BOOT_PARAMS_GPA, img->kernel, &k, &b);
    *entry = (uint32_t)k.load_gpa;
    return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ACPI parser (drivers/acpi.c), three ways on each input: as a MADT
 * body; as physical memory at TABLES_BASE whose first bytes are the RSDP
 * (an exactly sized heap copy: any read past the input is caught); and
 * placed in the BIOS area 0xE0000-0xFFFFF, where acpi_scan_rsdp must find
 * an RSDP by itself (for one input in 16: the scan reads 128 KiB, and
 * would otherwise set the pace). Results must keep the contract.
 */
#include "tests/fuzz/fuzz.h"

#include "drivers/acpi.h"

#define TABLES_BASE 0x200000ull
#define BIOS_BASE   0xe0000ull
#define BIOS_SIZE   0x20000u

static void check_info(const struct acpi_info *info)
{
    FUZZ_REQUIRE(info->cpu_count <= ACPI_MAX_CPUS);
    for (unsigned i = 0; i < info->cpu_count; i++)
        for (unsigned j = 0; j < i; j++)
            FUZZ_REQUIRE(info->cpus[i].apic_id != info->cpus[j].apic_id);
}

static void check(int rc, const struct acpi_info *info, const char *err)
{
    if (rc == 0)
        check_info(info);
    else
        FUZZ_REQUIRE(rc == -1 && err[0] && !strchr(err, '\n'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct acpi_info info;
    char err[192];

    uint8_t *madt = malloc(size ? size : 1);
    memcpy(madt, data, size);
    check(acpi_parse_madt(madt, size, &info, err, sizeof(err)), &info, err);
    free(madt);

    struct fuzz_mem tables = fuzz_mem_new(TABLES_BASE, data, size);
    check(acpi_init(TABLES_BASE, fuzz_mem_map, &tables, &info, err, sizeof(err)), &info, err);
    fuzz_mem_free(&tables);

    if (size >= 2 && size <= BIOS_SIZE && (data[0] & 0xf) == 0) {
        static uint8_t bios[BIOS_SIZE];
        size_t at = ((size_t)(data[0] | data[1] << 8) * 16) % (BIOS_SIZE - size + 1);
        memcpy(bios + at, data, size);
        struct fuzz_mem area = {BIOS_BASE, bios, BIOS_SIZE};
        uint64_t rsdp = acpi_scan_rsdp(fuzz_mem_map, &area);
        FUZZ_REQUIRE(rsdp == 0 || (rsdp >= BIOS_BASE + at && rsdp < BIOS_BASE + at + size));
        if (rsdp)
            check(acpi_init(rsdp, fuzz_mem_map, &area, &info, err, sizeof(err)), &info, err);
        memset(bios + at, 0, size);
    }
    return 0;
}

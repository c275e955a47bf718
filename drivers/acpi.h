/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ACPI table discovery: RSDP -> RSDT/XSDT -> MADT (CPUs) and FADT (power off).
 *
 * Contract: every table is checked (signature, length within what the mapper
 * grants, checksum) before use; on failure the functions return -1 with a
 * one-line reason in err and never fault. Physical memory is reached through
 * the phys_map callback so the parsers run in host unit tests.
 */
#ifndef POLLUX_DRIVERS_ACPI_H
#define POLLUX_DRIVERS_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/bootinfo.h"

#define ACPI_MAX_CPUS 256

struct acpi_cpu {
    uint32_t apic_id;
    uint32_t uid;     /* ACPI processor UID */
    bool from_x2apic; /* described by a type-9 (x2APIC) entry */
};

struct acpi_info {
    uint64_t lapic_base; /* from MADT (overridden by a type-5 entry if present) */
    struct acpi_cpu cpus[ACPI_MAX_CPUS];
    unsigned cpu_count;   /* enabled or online-capable processors only, no duplicates */
    unsigned cpus_beyond; /* more such entries past ACPI_MAX_CPUS: not kept, only counted */
    /* FADT power-off data; s5_valid is false when any piece is missing. */
    bool s5_valid;
    uint16_t pm1a_cnt_port;
    uint16_t pm1b_cnt_port; /* 0 if none */
    uint16_t slp_typa, slp_typb;
};

/* Scan the EBDA's first KiB and 0xE0000-0xFFFFF for a valid RSDP. 0 if none. */
uint64_t acpi_scan_rsdp(phys_map_fn map, void *ctx);

/* Parse a MADT body (the whole table, header included) of length len. */
int acpi_parse_madt(const void *madt, size_t len, struct acpi_info *out, char *err, size_t errlen);

/*
 * From the RSDP: find the MADT (required) and the FADT/DSDT (optional: the
 * \_S5_ package is located by a byte scan of the DSDT for "_S5_" followed by
 * a package of at least two integers).
 */
int acpi_init(uint64_t rsdp_phys, phys_map_fn map, void *ctx, struct acpi_info *out, char *err,
              size_t errlen);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ACPI tables a VM's firmware would provide, generated per VM so that a
 * Linux guest finds its CPUs, its interrupt controller, its UART and how to
 * power off and reset, with no PC legacy hardware at all (docs/linux.md):
 *   RSDP (revision 2) -> XSDT -> FADT (revision 6, HW_REDUCED_ACPI) -> DSDT
 *                             -> MADT (a local APIC per vCPU, the IOAPIC,
 *                                interrupt source overrides)
 *                             -> SSDT (the VM's virtio-mmio devices, if any)
 * The DSDT is AML compiled from vmm/load/dsdt.asl by iasl at build time; the
 * SSDT depends on the VM's devices and is emitted here (vmm/load/aml.h).
 */
#ifndef POLLUX_VMM_LOAD_ACPI_TABLES_H
#define POLLUX_VMM_LOAD_ACPI_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* Ports of the FADT's registers; vmm/dev/acpi_pm.c gives them their meaning. */
#define ACPI_SLEEP_CONTROL_PORT 0x600
#define ACPI_SLEEP_STATUS_PORT  0x601
#define ACPI_RESET_PORT         0xcf9
#define ACPI_RESET_VALUE        0x06
/* SLEEP_CONTROL: SLP_TYP in bits 2-4, SLP_EN bit 5; \_S5's SLP_TYP (vmm/load/dsdt.asl). */
#define ACPI_SLP_EN     0x20
#define ACPI_SLP_TYP(v) (((v) >> 2) & 7)
#define ACPI_S5_SLP_TYP 5

#define ACPI_IOAPIC_ID  0 /* the IOAPIC's ID; local APIC IDs are the vCPU numbers */
#define ACPI_TABLES_MAX 4096

/* The DSDT's AML (build/gen/dsdt.S, from vmm/load/dsdt.asl). */
extern const uint8_t acpi_dsdt_aml[], acpi_dsdt_aml_end[];

/*
 * Write the tables into buf (at most max bytes), which the guest sees at
 * guest-physical base; the RSDP comes first, at base. virtio_slots has bit
 * n set for each virtio slot n (abi/virtio.h) the VM has: each becomes a
 * device of the SSDT, and with none there is no SSDT. Returns the bytes
 * used, or 0 if they do not fit (or a slot does not exist).
 */
size_t acpi_tables_build(uint8_t *buf, size_t max, uint64_t base, unsigned nvcpus,
                         uint64_t ioapic_base, const uint8_t *dsdt, size_t dsdt_len,
                         unsigned virtio_slots);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/* Table layouts are ACPI 6.x's; offsets are named where a field is written. */
#include "vmm/load/acpi_tables.h"

#include "abi/virtio.h"
#include "lib/bytes.h"
#include "lib/string.h"
#include "vmm/load/aml.h"

#define SDT_HEADER        36
#define RSDP_LEN          36
#define FADT_LEN          276 /* revision 6 */
#define FADT_REV          6
#define MADT_LAPIC_LEN    8
#define MADT_IOAPIC_LEN   12
#define MADT_OVERRIDE_LEN 10
#define SSDT_REV          2 /* 64-bit integers */
#define TABLE_ALIGN       16

#define FADT_IAPC_BOOT_ARCH 109
#define FADT_FLAGS          112
#define FADT_RESET_REG      116
#define FADT_RESET_VALUE    128
#define FADT_MINOR          131
#define FADT_X_DSDT         140
#define FADT_SLEEP_CONTROL  244
#define FADT_SLEEP_STATUS   256
#define FADT_HYPERVISOR_ID  268

#define BOOT_ARCH_NO_VGA   (1u << 2)
#define BOOT_ARCH_NO_CMOS  (1u << 5)
#define FADT_RESET_REG_SUP (1u << 10)
#define FADT_HW_REDUCED    (1u << 20)

#define GAS_SYSTEM_IO   1
#define GAS_ACCESS_BYTE 1

#define MADT_TYPE_LAPIC    0
#define MADT_TYPE_IOAPIC   1
#define MADT_TYPE_OVERRIDE 2
#define MADT_LAPIC_ENABLED 1
#define LAPIC_BASE         0xfee00000u
/* MPS INTI flags: polarity bits 0-1, trigger mode bits 2-3; 1 = high / edge. */
#define INTI_EDGE_HIGH 0x5

#define OEM_ID       "POLLUX"
#define OEM_TABLE_ID "POLLUXVM"
#define CREATOR_ID   "PLUX"

static void sdt_header(uint8_t *t, const char *sig, uint32_t len, uint8_t rev)
{
    memcpy(t, sig, 4);
    put_le32(t + 4, len);
    t[8] = rev;
    memcpy(t + 10, OEM_ID, 6);
    memcpy(t + 16, OEM_TABLE_ID, 8);
    put_le32(t + 24, 1);
    memcpy(t + 28, CREATOR_ID, 4);
    put_le32(t + 32, 1);
}

/* The checksum byte makes the whole table sum to zero. */
static void seal(uint8_t *t, size_t len, size_t checksum_off)
{
    t[checksum_off] = 0;
    t[checksum_off] = (uint8_t)-sum8(t, len);
}

static void gas_io8(uint8_t *g, uint16_t port)
{
    g[0] = GAS_SYSTEM_IO;
    g[1] = 8;
    g[2] = 0;
    g[3] = GAS_ACCESS_BYTE;
    put_le64(g + 4, port);
}

static size_t build_fadt(uint8_t *t, uint64_t dsdt_gpa)
{
    memset(t, 0, FADT_LEN);
    sdt_header(t, "FACP", FADT_LEN, FADT_REV);
    /* The 32-bit DSDT field stays 0: with X_DSDT set, a reader must use X_DSDT. */
    put_le16(t + FADT_IAPC_BOOT_ARCH, BOOT_ARCH_NO_VGA | BOOT_ARCH_NO_CMOS);
    put_le32(t + FADT_FLAGS, FADT_HW_REDUCED | FADT_RESET_REG_SUP);
    gas_io8(t + FADT_RESET_REG, ACPI_RESET_PORT);
    t[FADT_RESET_VALUE] = ACPI_RESET_VALUE;
    t[FADT_MINOR] = 0;
    put_le64(t + FADT_X_DSDT, dsdt_gpa);
    gas_io8(t + FADT_SLEEP_CONTROL, ACPI_SLEEP_CONTROL_PORT);
    gas_io8(t + FADT_SLEEP_STATUS, ACPI_SLEEP_STATUS_PORT);
    memcpy(t + FADT_HYPERVISOR_ID, "pollux\0\0", 8);
    seal(t, FADT_LEN, 9);
    return FADT_LEN;
}

static uint8_t *madt_override(uint8_t *e, uint8_t irq, uint32_t gsi)
{
    e[0] = MADT_TYPE_OVERRIDE;
    e[1] = MADT_OVERRIDE_LEN;
    e[2] = 0; /* ISA */
    e[3] = irq;
    put_le32(e + 4, gsi);
    put_le16(e + 8, INTI_EDGE_HIGH);
    return e + MADT_OVERRIDE_LEN;
}

static size_t build_madt(uint8_t *t, unsigned nvcpus, uint64_t ioapic_base)
{
    uint8_t *e = t + SDT_HEADER + 8;
    put_le32(t + SDT_HEADER, LAPIC_BASE);
    put_le32(t + SDT_HEADER + 4, 0); /* no PCAT_COMPAT: there is no 8259 to disable */
    for (unsigned i = 0; i < nvcpus; i++, e += MADT_LAPIC_LEN) {
        e[0] = MADT_TYPE_LAPIC;
        e[1] = MADT_LAPIC_LEN;
        e[2] = (uint8_t)i; /* processor UID */
        e[3] = (uint8_t)i; /* APIC ID */
        put_le32(e + 4, MADT_LAPIC_ENABLED);
    }
    e[0] = MADT_TYPE_IOAPIC;
    e[1] = MADT_IOAPIC_LEN;
    e[2] = ACPI_IOAPIC_ID;
    e[3] = 0;
    put_le32(e + 4, (uint32_t)ioapic_base);
    put_le32(e + 8, 0); /* GSI base */
    e += MADT_IOAPIC_LEN;
    /* A PC's ISA routing: the timer's IRQ 0 on pin 2, COM1's IRQ 4 on its own pin. */
    e = madt_override(e, 0, 2);
    e = madt_override(e, 4, 4);
    size_t len = (size_t)(e - t);
    sdt_header(t, "APIC", (uint32_t)len, 5);
    seal(t, len, 9);
    return len;
}

/*
 * Scope (\_SB) { Device (VIOn) {...} } for each virtio slot n present, as
 * Firecracker declares its virtio-mmio devices: Linux's virtio_mmio binds to
 * _HID "LNRO0005" and takes its registers and interrupt from _CRS. Returns
 * the table's length, 0 if it does not fit in max bytes.
 */
static size_t build_ssdt(uint8_t *t, size_t max, unsigned virtio_slots)
{
    _Static_assert(VIRTIO_SLOTS <= 16, "a slot is one hex digit of its device's name");
    if (max < SDT_HEADER)
        return 0;
    struct aml a;
    aml_init(&a, t + SDT_HEADER, max - SDT_HEADER);
    aml_scope_begin(&a, "\\_SB");
    for (unsigned slot = 0; slot < VIRTIO_SLOTS; slot++) {
        if (!(virtio_slots & 1u << slot))
            continue;
        char name[] = "VIO?";
        name[3] = "0123456789ABCDEF"[slot];
        aml_device_begin(&a, name);
        aml_name(&a, "_HID");
        aml_string(&a, VIRTIO_ACPI_HID);
        aml_name(&a, "_UID");
        aml_integer(&a, slot);
        /* DMA is cache-coherent (what x86 Linux assumes without _CCA; arm64's requires it). */
        aml_name(&a, "_CCA");
        aml_integer(&a, 1);
        aml_name(&a, "_CRS");
        aml_resource_template_begin(&a);
        aml_memory32_fixed_rw(&a, (uint32_t)(VIRTIO_MMIO_BASE + slot * VIRTIO_MMIO_SIZE),
                              VIRTIO_MMIO_SIZE);
        aml_interrupt_edge_high(&a, VIRTIO_GSI_FIRST + slot);
        aml_resource_template_end(&a);
        aml_end(&a);
    }
    aml_end(&a);
    if (a.failed)
        return 0;
    size_t len = SDT_HEADER + a.len;
    sdt_header(t, "SSDT", (uint32_t)len, SSDT_REV);
    seal(t, len, 9);
    return len;
}

static size_t align_up(size_t n)
{
    return (n + TABLE_ALIGN - 1) & ~(size_t)(TABLE_ALIGN - 1);
}

size_t acpi_tables_build(uint8_t *buf, size_t max, uint64_t base, unsigned nvcpus,
                         uint64_t ioapic_base, const uint8_t *dsdt, size_t dsdt_len,
                         unsigned virtio_slots)
{
    size_t xsdt_entries = virtio_slots ? 3 : 2; /* FADT, MADT and the SSDT if any device */
    size_t xsdt_off = align_up(RSDP_LEN);
    size_t xsdt_len = SDT_HEADER + 8 * xsdt_entries;
    size_t fadt_off = align_up(xsdt_off + xsdt_len);
    size_t madt_off = align_up(fadt_off + FADT_LEN);
    size_t madt_len =
        SDT_HEADER + 8 + nvcpus * MADT_LAPIC_LEN + MADT_IOAPIC_LEN + 2 * MADT_OVERRIDE_LEN;
    size_t dsdt_off = align_up(madt_off + madt_len);
    size_t total = dsdt_off + dsdt_len;
    if (total > max || nvcpus > 255 || virtio_slots >> VIRTIO_SLOTS)
        return 0;
    memset(buf, 0, total);
    if (virtio_slots) {
        size_t ssdt_off = align_up(total);
        if (ssdt_off > max)
            return 0;
        size_t ssdt_len = build_ssdt(buf + ssdt_off, max - ssdt_off, virtio_slots);
        if (!ssdt_len)
            return 0;
        memset(buf + total, 0, ssdt_off - total);
        total = ssdt_off + ssdt_len;
    }

    uint8_t *r = buf;
    memcpy(r, "RSD PTR ", 8);
    memcpy(r + 9, OEM_ID, 6);
    r[15] = 2; /* revision: XSDT address and extended checksum present */
    put_le32(r + 20, RSDP_LEN);
    put_le64(r + 24, base + xsdt_off);
    seal(r, 20, 8);
    seal(r, RSDP_LEN, 32);

    uint8_t *x = buf + xsdt_off;
    sdt_header(x, "XSDT", (uint32_t)xsdt_len, 1);
    put_le64(x + SDT_HEADER, base + fadt_off);
    put_le64(x + SDT_HEADER + 8, base + madt_off);
    if (virtio_slots)
        put_le64(x + SDT_HEADER + 16, base + align_up(dsdt_off + dsdt_len));
    seal(x, xsdt_len, 9);

    build_fadt(buf + fadt_off, base + dsdt_off);
    build_madt(buf + madt_off, nvcpus, ioapic_base);
    memcpy(buf + dsdt_off, dsdt, dsdt_len);
    return total;
}

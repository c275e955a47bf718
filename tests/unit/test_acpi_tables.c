/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ACPI tables a VM gets: each table's checksum and layout, read back
 * with pollux's own host-side parser (drivers/acpi.c) as a second reader,
 * and the DSDT that iasl compiled from vmm/load/dsdt.asl.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "drivers/acpi.h"
#include "lib/bytes.h"
#include "vmm/load/acpi_tables.h"

#define BASE        0xe0000u
#define AREA        0x20000u
#define IOAPIC_BASE 0xfec00000u

static uint8_t area[AREA]; /* guest-physical 0xe0000..0x100000 */
static size_t used;

static const void *map(uint64_t phys, size_t len, void *ctx)
{
    (void)ctx;
    if (phys < BASE || phys - BASE > AREA || len > AREA - (phys - BASE))
        return NULL;
    return area + (phys - BASE);
}

static size_t dsdt_len(void)
{
    return (size_t)(acpi_dsdt_aml_end - acpi_dsdt_aml);
}

static void build(unsigned nvcpus)
{
    memset(area, 0, sizeof(area));
    used = acpi_tables_build(area, ACPI_TABLES_MAX, BASE, nvcpus, IOAPIC_BASE, acpi_dsdt_aml,
                             dsdt_len());
    assert_true(used > 0);
}

/* The table behind XSDT entry i, checked: signature, length inside the area, checksum. */
static const uint8_t *xsdt_entry(unsigned i, const char *sig)
{
    const uint8_t *x = map(get_le64(area + 24), 36, NULL);
    assert_non_null(x);
    assert_memory_equal(x, "XSDT", 4);
    assert_true(get_le32(x + 4) >= 36 + 8 * (i + 1));
    assert_int_equal(sum8(x, get_le32(x + 4)), 0);
    const uint8_t *t = map(get_le64(x + 36 + 8 * i), 36, NULL);
    assert_non_null(t);
    assert_memory_equal(t, sig, 4);
    assert_non_null(map(get_le64(x + 36 + 8 * i), get_le32(t + 4), NULL));
    assert_int_equal(sum8(t, get_le32(t + 4)), 0);
    return t;
}

static void test_rsdp_is_found_where_linux_scans(void **state)
{
    (void)state;
    build(2);
    assert_int_equal(acpi_scan_rsdp(map, NULL), BASE);
    assert_int_equal(area[15], 2);
    assert_int_equal(sum8(area, 20), 0);
    assert_int_equal(sum8(area, 36), 0);
    assert_int_equal(get_le32(area + 20), 36);
}

static void test_madt_describes_every_vcpu_and_the_ioapic(void **state)
{
    (void)state;
    build(4);
    struct acpi_info info;
    char err[200] = "";
    assert_int_equal(acpi_init(BASE, map, NULL, &info, err, sizeof(err)), 0);
    assert_int_equal(info.cpu_count, 4);
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(info.cpus[i].apic_id, i);
        assert_int_equal(info.cpus[i].uid, i);
    }
    assert_int_equal(info.lapic_base, 0xfee00000u);

    const uint8_t *m = xsdt_entry(1, "APIC");
    assert_int_equal(get_le32(m + 40), 0); /* no PCAT_COMPAT */
    const uint8_t *e = m + 44 + 4 * 8;
    assert_int_equal(e[0], 1);
    assert_int_equal(e[1], 12);
    assert_int_equal(get_le32(e + 4), IOAPIC_BASE);
    assert_int_equal(get_le32(e + 8), 0);
    e += 12;
    /* IRQ 0 -> GSI 2 and IRQ 4 -> GSI 4, edge, active high. */
    assert_int_equal(e[0], 2);
    assert_int_equal(e[3], 0);
    assert_int_equal(get_le32(e + 4), 2);
    assert_int_equal(get_le16(e + 8), 5);
    e += 10;
    assert_int_equal(e[3], 4);
    assert_int_equal(get_le32(e + 4), 4);
    assert_int_equal(e + 10 - m, get_le32(m + 4));
}

static void test_fadt_is_hardware_reduced(void **state)
{
    (void)state;
    build(1);
    const uint8_t *f = xsdt_entry(0, "FACP");
    assert_int_equal(get_le32(f + 4), 276);
    assert_true(f[8] >= 5);
    uint32_t flags = get_le32(f + 112);
    assert_int_equal(flags, (1u << 20) | (1u << 10));
    assert_int_equal(get_le16(f + 109), (1u << 2) | (1u << 5));
    /* No PM or GPE blocks, 32-bit or extended. */
    for (unsigned off = 56; off < 96; off++)
        assert_int_equal(f[off], 0);
    for (unsigned off = 148; off < 244; off++)
        assert_int_equal(f[off], 0);
    /* RESET_REG: SystemIO 0xcf9, 8 bits, value 6. */
    assert_int_equal(f[116], 1);
    assert_int_equal(f[117], 8);
    assert_int_equal(get_le64(f + 120), 0xcf9);
    assert_int_equal(f[128], 6);
    /* SLEEP_CONTROL and SLEEP_STATUS: 8-bit SystemIO, both present. */
    assert_int_equal(f[244], 1);
    assert_int_equal(f[245], 8);
    assert_int_equal(get_le64(f + 248), ACPI_SLEEP_CONTROL_PORT);
    assert_int_equal(f[256], 1);
    assert_int_equal(f[257], 8);
    assert_int_equal(get_le64(f + 260), ACPI_SLEEP_STATUS_PORT);
    /* X_DSDT names the DSDT; the 32-bit field is unused. */
    assert_int_equal(get_le32(f + 40), 0);
    const uint8_t *d = map(get_le64(f + 140), 36, NULL);
    assert_non_null(d);
    assert_memory_equal(d, "DSDT", 4);
    assert_int_equal(get_le32(d + 4), dsdt_len());
    assert_int_equal(sum8(d, dsdt_len()), 0);
}

static bool contains(const uint8_t *t, size_t len, const void *what, size_t n)
{
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(t + i, what, n))
            return true;
    return false;
}

static void test_dsdt_has_s5_and_com1(void **state)
{
    (void)state;
    const uint8_t *d = acpi_dsdt_aml;
    size_t len = dsdt_len();
    /* Name(_S5, Package(4) {5, 5, 0, 0}): the SLP_TYP pollux's sleep register expects. */
    static const uint8_t s5[] = {
        '_',  'S', '5', '_', 0x12, 0x08, 0x04, 0x0a, ACPI_S5_SLP_TYP, 0x0a, ACPI_S5_SLP_TYP,
        0x00, 0x00};
    assert_true(contains(d, len, s5, sizeof(s5)));
    assert_true(contains(d, len, "COM1", 4));
    /* EisaId("PNP0501") as AML: DWordPrefix 0x0c, then 0x0105d041. */
    static const uint8_t pnp0501[] = {0x0c, 0x41, 0xd0, 0x05, 0x01};
    assert_true(contains(d, len, pnp0501, sizeof(pnp0501)));
    /* IO descriptor: 0x47, decode16, min 0x3f8, max 0x3f8, align 1, length 8. */
    static const uint8_t io[] = {0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x01, 0x08};
    assert_true(contains(d, len, io, sizeof(io)));
    /* Extended interrupt descriptor: consumer, edge, active high, exclusive, one GSI: 4. */
    static const uint8_t irq[] = {0x89, 0x06, 0x00, 0x03, 0x01, 0x04, 0x00, 0x00, 0x00};
    assert_true(contains(d, len, irq, sizeof(irq)));
}

static void test_too_small_a_buffer_is_refused(void **state)
{
    (void)state;
    assert_int_equal(acpi_tables_build(area, 200, BASE, 2, IOAPIC_BASE, acpi_dsdt_aml, dsdt_len()),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rsdp_is_found_where_linux_scans),
        cmocka_unit_test(test_madt_describes_every_vcpu_and_the_ioapic),
        cmocka_unit_test(test_fadt_is_hardware_reduced),
        cmocka_unit_test(test_dsdt_has_s5_and_com1),
        cmocka_unit_test(test_too_small_a_buffer_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

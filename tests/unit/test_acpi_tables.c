/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ACPI tables a VM gets: each table's checksum and layout, read back
 * with pollux's own host-side parser (drivers/acpi.c) as a second reader,
 * the DSDT that iasl compiled from vmm/load/dsdt.asl, and the SSDT of the
 * VM's virtio devices, read back by a small AML decoder here and
 * disassembled by iasl.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, strnlen */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/virtio.h"
#include "drivers/acpi.h"
#include "lib/bytes.h"
#include "vmm/load/acpi_tables.h"

#define BOTH_SLOTS (1u << VIRTIO_SLOT_NET | 1u << VIRTIO_SLOT_BLK)

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

static void build(unsigned nvcpus, unsigned virtio_slots)
{
    memset(area, 0xee, sizeof(area));
    used = acpi_tables_build(area, ACPI_TABLES_MAX, BASE, nvcpus, IOAPIC_BASE, acpi_dsdt_aml,
                             dsdt_len(), virtio_slots);
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
    build(2, 0);
    assert_int_equal(acpi_scan_rsdp(map, NULL), BASE);
    assert_int_equal(area[15], 2);
    assert_int_equal(sum8(area, 20), 0);
    assert_int_equal(sum8(area, 36), 0);
    assert_int_equal(get_le32(area + 20), 36);
}

static void test_madt_describes_every_vcpu_and_the_ioapic(void **state)
{
    (void)state;
    build(4, 0);
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
    build(1, 0);
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
    assert_int_equal(
        acpi_tables_build(area, 200, BASE, 2, IOAPIC_BASE, acpi_dsdt_aml, dsdt_len(), 0), 0);
    /* Room for every table but the SSDT. */
    build(2, 0);
    size_t without = used;
    build(2, BOTH_SLOTS);
    assert_true(used > without);
    for (size_t max = without; max < used; max++)
        assert_int_equal(acpi_tables_build(area, max, BASE, 2, IOAPIC_BASE, acpi_dsdt_aml,
                                           dsdt_len(), BOTH_SLOTS),
                         0);
    /* A slot that does not exist. */
    assert_int_equal(acpi_tables_build(area, ACPI_TABLES_MAX, BASE, 2, IOAPIC_BASE, acpi_dsdt_aml,
                                       dsdt_len(), 1u << VIRTIO_SLOTS),
                     0);
}

/*
 * A decoder of the AML subset the SSDT uses, written from ACPI 6.5's grammar
 * (20.2) independently of the emitter: Scope and Device terms, Name with
 * String, Integer and Buffer data. Anything else fails the test.
 */
struct aml_device {
    char path[32]; /* e.g. "\\_SB_.VIO0" */
    char hid[16];
    uint64_t uid, cca;
    bool has_uid, has_cca;
    const uint8_t *crs; /* the Buffer's bytes */
    size_t crs_len;
};

struct decoded {
    struct aml_device dev[8];
    unsigned count;
};

/* PkgLength at *p: returns the end of the term it measures (from the PkgLength's start). */
static const uint8_t *pkg_end(const uint8_t **p, const uint8_t *end)
{
    assert_true(*p < end);
    unsigned follow = **p >> 6;
    size_t len = follow ? **p & 0xf : **p & 0x3f;
    assert_true(*p + 1 + follow <= end);
    for (unsigned i = 0; i < follow; i++)
        len |= (size_t)(*p)[1 + i] << (4 + 8 * i);
    const uint8_t *term_end = *p + len;
    assert_true(term_end <= end);
    *p += 1 + follow;
    return term_end;
}

/* A NameString into out as dotted segments ("\\_SB_.VIO0"). */
static void name_string(const uint8_t **p, const uint8_t *end, char *out, size_t outlen)
{
    size_t n = 0;
    if (**p == '\\')
        out[n++] = (char)*(*p)++;
    unsigned segs = 1;
    if (**p == 0x2e) {
        segs = 2;
        (*p)++;
    } else if (**p == 0x2f) {
        segs = (*p)[1];
        *p += 2;
    }
    assert_true(*p + 4 * segs <= end);
    assert_true(n + 5 * segs < outlen);
    for (unsigned i = 0; i < segs; i++, *p += 4) {
        if (i)
            out[n++] = '.';
        memcpy(out + n, *p, 4);
        n += 4;
    }
    out[n] = 0;
}

static uint64_t integer(const uint8_t **p, const uint8_t *end)
{
    static const unsigned size[] = {[0x0a] = 1, [0x0b] = 2, [0x0c] = 4, [0x0e] = 8};
    uint8_t op = *(*p)++;
    if (op == 0x00 || op == 0x01)
        return op;
    assert_true(op < sizeof(size) / sizeof(size[0]) && size[op]);
    assert_true(*p + size[op] <= end);
    uint64_t v = 0;
    for (unsigned i = 0; i < size[op]; i++)
        v |= (uint64_t)(*p)[i] << (8 * i);
    *p += size[op];
    return v;
}

static void term_list(const uint8_t *p, const uint8_t *end, const char *scope, struct decoded *d,
                      struct aml_device *dev)
{
    while (p < end) {
        char name[32], path[sizeof(((struct aml_device *)0)->path)];
        if (*p == 0x10 || (p[0] == 0x5b && p + 1 < end && p[1] == 0x82)) {
            p += *p == 0x10 ? 1 : 2;
            bool device = p[-1] == 0x82;
            const uint8_t *term_end = pkg_end(&p, end);
            name_string(&p, term_end, name, sizeof(name));
            int n = snprintf(path, sizeof(path), "%s%s%s", name[0] == '\\' ? "" : scope,
                             name[0] == '\\' || !*scope ? "" : ".", name);
            assert_true(n > 0 && (size_t)n < sizeof(path));
            struct aml_device *inner = dev;
            if (device) {
                assert_true(d->count < sizeof(d->dev) / sizeof(d->dev[0]));
                inner = &d->dev[d->count++];
                memset(inner, 0, sizeof(*inner));
                memcpy(inner->path, path, sizeof(path));
            }
            term_list(p, term_end, path, d, inner);
            p = term_end;
        } else if (*p == 0x08) {
            p++;
            name_string(&p, end, name, sizeof(name));
            assert_non_null(dev);
            if (*p == 0x0d) {
                const char *s = (const char *)++p;
                size_t len = strnlen(s, (size_t)(end - p));
                assert_true(p + len < end);
                assert_string_equal(name, "_HID");
                assert_true(len < sizeof(dev->hid));
                memcpy(dev->hid, s, len + 1);
                p += len + 1;
            } else if (*p == 0x11) {
                p++;
                const uint8_t *term_end = pkg_end(&p, end);
                size_t size = integer(&p, term_end);
                assert_int_equal(size, term_end - p);
                assert_string_equal(name, "_CRS");
                dev->crs = p;
                dev->crs_len = size;
                p = term_end;
            } else {
                uint64_t v = integer(&p, end);
                if (!strcmp(name, "_UID")) {
                    dev->uid = v;
                    dev->has_uid = true;
                } else {
                    assert_string_equal(name, "_CCA");
                    dev->cca = v;
                    dev->has_cca = true;
                }
            }
        } else {
            fail_msg("unexpected AML opcode 0x%02x", *p);
        }
    }
}

/* A _CRS of exactly one Memory32Fixed and one one-interrupt Extended Interrupt, and its End Tag. */
static void crs(const struct aml_device *dev, uint32_t *base, uint32_t *len, uint8_t *rw,
                uint8_t *irq_flags, uint32_t *gsi)
{
    const uint8_t *r = dev->crs, *end = dev->crs + dev->crs_len;
    unsigned seen = 0;
    while (r < end) {
        if (*r & 0x80) { /* large descriptor */
            assert_true(r + 3 <= end);
            size_t len16 = get_le16(r + 1);
            assert_true(r + 3 + len16 <= end);
            if (r[0] == 0x86) {
                assert_int_equal(len16, 9);
                *rw = r[3];
                *base = get_le32(r + 4);
                *len = get_le32(r + 8);
                seen |= 1;
            } else {
                assert_int_equal(r[0], 0x89);
                assert_int_equal(len16, 6);
                *irq_flags = r[3];
                assert_int_equal(r[4], 1);
                *gsi = get_le32(r + 5);
                seen |= 2;
            }
            r += 3 + len16;
        } else { /* small descriptor: only the End Tag, last, summing the template to 0 */
            assert_int_equal(r[0], 0x79);
            assert_int_equal(r + 2, end);
            assert_int_equal(sum8(dev->crs, dev->crs_len), 0);
            seen |= 4;
            r += 2;
        }
    }
    assert_int_equal(seen, 7);
}

/* The SSDT behind XSDT entry 2, decoded; none when the XSDT has 2 entries. */
static const uint8_t *ssdt(struct decoded *d)
{
    const uint8_t *s = xsdt_entry(2, "SSDT");
    assert_int_equal(s[8], 2);
    memset(d, 0, sizeof(*d));
    term_list(s + 36, s + get_le32(s + 4), "", d, NULL);
    return s;
}

static void test_ssdt_declares_each_virtio_slot(void **state)
{
    (void)state;
    static const unsigned configs[] = {1u << VIRTIO_SLOT_NET, 1u << VIRTIO_SLOT_BLK, BOTH_SLOTS};
    for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
        build(2, configs[c]);
        struct decoded d;
        const uint8_t *s = ssdt(&d);
        /* The tables stay inside what acpi_tables_build said it used. */
        assert_true(s + get_le32(s + 4) <= area + used);
        unsigned i = 0;
        for (unsigned slot = 0; slot < VIRTIO_SLOTS; slot++) {
            if (!(configs[c] & 1u << slot))
                continue;
            assert_true(i < d.count);
            const struct aml_device *dev = &d.dev[i++];
            char path[32];
            snprintf(path, sizeof(path), "\\_SB_.VIO%u", slot);
            assert_string_equal(dev->path, path);
            assert_string_equal(dev->hid, "LNRO0005");
            assert_true(dev->has_uid && dev->uid == slot);
            assert_true(dev->has_cca && dev->cca == 1);
            uint32_t base = 0, len = 0, gsi = 0;
            uint8_t rw = 0, flags = 0;
            crs(dev, &base, &len, &rw, &flags, &gsi);
            assert_int_equal(base, VIRTIO_MMIO_BASE + slot * VIRTIO_MMIO_SIZE);
            assert_int_equal(len, VIRTIO_MMIO_SIZE);
            assert_int_equal(rw, 1);
            assert_int_equal(flags, 0x03); /* consumer, edge; active high, exclusive */
            assert_int_equal(gsi, VIRTIO_GSI_FIRST + slot);
        }
        assert_int_equal(d.count, i);
    }
}

/* Without a device there is no SSDT, and with one the host parser still finds the rest. */
static void test_no_ssdt_without_devices(void **state)
{
    (void)state;
    build(2, 0);
    const uint8_t *x = map(get_le64(area + 24), 36, NULL);
    assert_int_equal(get_le32(x + 4), 36 + 2 * 8);
    build(3, BOTH_SLOTS);
    assert_int_equal(get_le32(x + 4), 36 + 3 * 8);
    struct acpi_info info;
    char err[200] = "";
    assert_int_equal(acpi_init(BASE, map, NULL, &info, err, sizeof(err)), 0);
    assert_int_equal(info.cpu_count, 3);
}

static bool file_contains(const char *path, const char *what)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    return strstr(text, what) != NULL;
}

/* iasl, the reference AML compiler (make deps installs it), disassembles the SSDT to our ASL. */
static void test_iasl_disassembles_the_ssdt(void **state)
{
    (void)state;
    build(1, BOTH_SLOTS);
    struct decoded d;
    const uint8_t *s = ssdt(&d);
    char dir[] = "/tmp/pollux-ssdt-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char aml[64], dsl[64], cmd[256];
    snprintf(aml, sizeof(aml), "%s/ssdt.aml", dir);
    snprintf(dsl, sizeof(dsl), "%s/ssdt.dsl", dir);
    FILE *f = fopen(aml, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(s, 1, get_le32(s + 4), f), get_le32(s + 4));
    fclose(f);
    snprintf(cmd, sizeof(cmd), "iasl -d %s >%s/iasl.log 2>&1", aml, dir);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof(cmd), "cat %s/iasl.log", dir);
        (void)system(cmd);
        fail_msg("iasl -d failed on the SSDT");
    }
    static const char *const want[] = {
        "Scope (\\_SB)",
        "Device (VIO0)",
        "Device (VIO1)",
        "Name (_HID, \"LNRO0005\")",
        "Name (_UID, Zero)",
        "Name (_UID, One)",
        "Name (_CCA, One)",
        "Memory32Fixed (ReadWrite,\n                    0xD0000000,",
        "Memory32Fixed (ReadWrite,\n                    0xD0001000,",
        "Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive, ,, )\n                {\n"
        "                    0x00000005,",
        "Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive, ,, )\n                {\n"
        "                    0x00000006,",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!file_contains(dsl, want[i]))
            fail_msg("%s lacks: %s", dsl, want[i]);
    snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rsdp_is_found_where_linux_scans),
        cmocka_unit_test(test_madt_describes_every_vcpu_and_the_ioapic),
        cmocka_unit_test(test_fadt_is_hardware_reduced),
        cmocka_unit_test(test_dsdt_has_s5_and_com1),
        cmocka_unit_test(test_too_small_a_buffer_is_refused),
        cmocka_unit_test(test_ssdt_declares_each_virtio_slot),
        cmocka_unit_test(test_no_ssdt_without_devices),
        cmocka_unit_test(test_iasl_disassembles_the_ssdt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

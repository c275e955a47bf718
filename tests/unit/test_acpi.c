/* SPDX-License-Identifier: GPL-2.0-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/acpi.h"

/*
 * Fake physical memory: phys is an offset into one heap block, so a table
 * placed at its very end lets AddressSanitizer catch any read past it.
 */
#define MEM_SIZE (2u * 1024 * 1024)

#define RSDP_PHYS  0xE0000u
#define RSDT_PHYS  0x100000u
#define XSDT_PHYS  0x101000u
#define MADT_PHYS  0x102000u
#define FADT_PHYS  0x103000u
#define DSDT_PHYS  0x104000u
#define DSDT2_PHYS 0x105000u
#define LAPIC      0xFEE00000u

struct fake {
    uint8_t *mem;
};

static struct fake fake;
static uint8_t *mem;
static struct acpi_info info;
static char err[160];

static const void *fake_map(uint64_t phys, size_t len, void *ctx)
{
    struct fake *f = ctx;
    if (phys > MEM_SIZE || len > MEM_SIZE - phys)
        return NULL;
    return f->mem + phys;
}

static int setup(void **state)
{
    (void)state;
    mem = fake.mem = calloc(1, MEM_SIZE);
    memset(&info, 0xAA, sizeof(info)); /* acpi_init must not rely on a zeroed result */
    err[0] = '\0';
    return mem ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(mem);
    return 0;
}

static void w16(uint64_t a, uint16_t v)
{
    mem[a] = (uint8_t)v;
    mem[a + 1] = (uint8_t)(v >> 8);
}

static void w32(uint64_t a, uint32_t v)
{
    w16(a, (uint16_t)v);
    w16(a + 2, (uint16_t)(v >> 16));
}

static void w64(uint64_t a, uint64_t v)
{
    w32(a, (uint32_t)v);
    w32(a + 4, (uint32_t)(v >> 32));
}

static uint32_t r32(uint64_t a)
{
    return mem[a] | (uint32_t)mem[a + 1] << 8 | (uint32_t)mem[a + 2] << 16 |
           (uint32_t)mem[a + 3] << 24;
}

/* Sets the byte at phys + at so that [phys, phys + len) sums to zero. */
static void fix_checksum(uint64_t phys, uint32_t len, uint32_t at)
{
    uint8_t s = 0;
    mem[phys + at] = 0;
    for (uint32_t i = 0; i < len; i++)
        s += mem[phys + i];
    mem[phys + at] = (uint8_t)-s;
}

static void sdt_header(uint64_t phys, const char *sig, uint32_t len)
{
    memcpy(mem + phys, sig, 4);
    w32(phys + 4, len);
    mem[phys + 8] = 2;
    memcpy(mem + phys + 10, "POLLUX", 6);
    memcpy(mem + phys + 16, "TESTTBL ", 8);
}

static void sdt_finish(uint64_t phys)
{
    fix_checksum(phys, r32(phys + 4), 9);
}

static void make_rsdp(uint64_t phys, uint8_t rev, uint32_t rsdt, uint64_t xsdt)
{
    memcpy(mem + phys, "RSD PTR ", 8);
    memcpy(mem + phys + 9, "POLLUX", 6);
    mem[phys + 15] = rev;
    w32(phys + 16, rsdt);
    fix_checksum(phys, 20, 8);
    if (rev >= 2) {
        w32(phys + 20, 36);
        w64(phys + 24, xsdt);
        fix_checksum(phys, 36, 32);
    }
}

static void make_root(uint64_t phys, bool xsdt, const uint64_t *entries, unsigned n)
{
    unsigned esize = xsdt ? 8 : 4;
    sdt_header(phys, xsdt ? "XSDT" : "RSDT", 36 + n * esize);
    for (unsigned i = 0; i < n; i++) {
        if (xsdt)
            w64(phys + 36 + i * 8, entries[i]);
        else
            w32(phys + 36 + i * 4, (uint32_t)entries[i]);
    }
    sdt_finish(phys);
}

struct madt {
    uint64_t phys;
    uint32_t len;
};

static struct madt madt_begin(uint64_t phys, uint32_t lapic)
{
    sdt_header(phys, "APIC", 44);
    w32(phys + 36, lapic);
    w32(phys + 40, 1); /* PCAT_COMPAT */
    return (struct madt){phys, 44};
}

static void madt_raw(struct madt *m, const uint8_t *bytes, uint32_t n)
{
    memcpy(mem + m->phys + m->len, bytes, n);
    m->len += n;
}

static void madt_lapic(struct madt *m, uint8_t uid, uint8_t id, uint32_t flags)
{
    uint8_t e[8] = {0, 8, uid, id, (uint8_t)flags, (uint8_t)(flags >> 8)};
    madt_raw(m, e, sizeof(e));
}

static void madt_x2apic(struct madt *m, uint32_t id, uint32_t flags, uint32_t uid)
{
    uint64_t a = m->phys + m->len;
    mem[a] = 9;
    mem[a + 1] = 16;
    w32(a + 4, id);
    w32(a + 8, flags);
    w32(a + 12, uid);
    m->len += 16;
}

static void madt_override(struct madt *m, uint64_t addr)
{
    uint64_t a = m->phys + m->len;
    mem[a] = 5;
    mem[a + 1] = 12;
    w64(a + 4, addr);
    m->len += 12;
}

static void madt_end(struct madt *m)
{
    w32(m->phys + 4, m->len);
    sdt_finish(m->phys);
}

/* X_DSDT is written even past a short table, where it must be ignored. */
static void make_fadt(uint64_t phys, uint32_t len, uint32_t pm1a, uint32_t pm1b, uint32_t dsdt,
                      uint64_t x_dsdt)
{
    sdt_header(phys, "FACP", len);
    w32(phys + 40, dsdt);
    w32(phys + 64, pm1a);
    w32(phys + 68, pm1b);
    w64(phys + 140, x_dsdt);
    sdt_finish(phys);
}

static void make_dsdt(uint64_t phys, const uint8_t *aml, uint32_t n)
{
    sdt_header(phys, "DSDT", 36 + n);
    memcpy(mem + phys + 36, aml, n);
    sdt_finish(phys);
}

/* Name(\_S5, Package(2) {5, 7}) with BytePrefix integers. */
static const uint8_t s5_aml[] = {0x10, 0x08, '_',  'S',  '5',  '_', 0x12,
                                 0x06, 0x02, 0x0A, 0x05, 0x0A, 0x07};

/* RSDP v1 -> RSDT -> {FADT, MADT}; two enabled CPUs; FADT -> DSDT with \_S5. */
static void build_system(void)
{
    struct madt m = madt_begin(MADT_PHYS, LAPIC);
    madt_lapic(&m, 0, 0, 1);
    madt_lapic(&m, 1, 1, 1);
    madt_end(&m);
    make_dsdt(DSDT_PHYS, s5_aml, sizeof(s5_aml));
    make_fadt(FADT_PHYS, 244, 0x604, 0, DSDT_PHYS, 0);
    const uint64_t entries[] = {FADT_PHYS, MADT_PHYS};
    make_root(RSDT_PHYS, false, entries, 2);
    make_rsdp(RSDP_PHYS, 0, RSDT_PHYS, 0);
}

static int init(void)
{
    return acpi_init(RSDP_PHYS, fake_map, &fake, &info, err, sizeof(err));
}

#define ASSERT_FAILS_WITH(text)                                                                    \
    do {                                                                                           \
        assert_int_equal(init(), -1);                                                              \
        if (!strstr(err, text))                                                                    \
            fail_msg("error \"%s\" lacks \"%s\"", err, text);                                      \
    } while (0)

static void test_full_system_rsdt(void **state)
{
    (void)state;
    build_system();
    assert_int_equal(init(), 0);
    assert_int_equal(info.lapic_base, LAPIC);
    assert_int_equal(info.cpu_count, 2);
    assert_int_equal(info.cpus[0].apic_id, 0);
    assert_int_equal(info.cpus[1].apic_id, 1);
    assert_int_equal(info.cpus[1].uid, 1);
    assert_false(info.cpus[1].from_x2apic);
    assert_true(info.s5_valid);
    assert_int_equal(info.pm1a_cnt_port, 0x604);
    assert_int_equal(info.pm1b_cnt_port, 0);
    assert_int_equal(info.slp_typa, 5);
    assert_int_equal(info.slp_typb, 7);
}

static void test_xsdt_preferred(void **state)
{
    (void)state;
    build_system();
    /* The RSDT names a second MADT with one CPU: the XSDT's must win. */
    struct madt m = madt_begin(0x106000, LAPIC);
    madt_lapic(&m, 9, 9, 1);
    madt_end(&m);
    const uint64_t old[] = {0x106000};
    make_root(RSDT_PHYS, false, old, 1);
    const uint64_t entries[] = {0, MADT_PHYS, FADT_PHYS}; /* null entries are skipped */
    make_root(XSDT_PHYS, true, entries, 3);
    make_rsdp(RSDP_PHYS, 2, RSDT_PHYS, XSDT_PHYS);
    assert_int_equal(init(), 0);
    assert_int_equal(info.cpu_count, 2);
    assert_true(info.s5_valid);
}

static void test_rsdp_v2_without_xsdt_uses_rsdt(void **state)
{
    (void)state;
    build_system();
    make_rsdp(RSDP_PHYS, 2, RSDT_PHYS, 0);
    assert_int_equal(init(), 0);
    assert_int_equal(info.cpu_count, 2);
}

static void test_rsdp_errors(void **state)
{
    (void)state;
    build_system();
    mem[RSDP_PHYS + 8]++;
    ASSERT_FAILS_WITH("bad checksum");

    make_rsdp(RSDP_PHYS, 0, RSDT_PHYS, 0);
    mem[RSDP_PHYS] = 'X';
    ASSERT_FAILS_WITH("bad signature");

    /* Revision 2: the first 20 bytes check out, the extended sum does not. */
    make_rsdp(RSDP_PHYS, 2, RSDT_PHYS, XSDT_PHYS);
    mem[RSDP_PHYS + 32]++;
    ASSERT_FAILS_WITH("bad extended checksum");

    make_rsdp(RSDP_PHYS, 2, RSDT_PHYS, XSDT_PHYS);
    w32(RSDP_PHYS + 20, 20); /* outside the first 20 bytes, so their checksum holds */
    ASSERT_FAILS_WITH("length below 36");

    make_rsdp(RSDP_PHYS, 0, 0, 0);
    ASSERT_FAILS_WITH("no RSDT or XSDT address");

    assert_int_equal(acpi_init(MEM_SIZE - 10, fake_map, &fake, &info, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not mapped"));
}

static void test_table_errors(void **state)
{
    (void)state;
    build_system();
    mem[MADT_PHYS + 20]++;
    ASSERT_FAILS_WITH("APIC at 0x102000 has a bad checksum");

    build_system();
    mem[RSDT_PHYS + 20]++;
    ASSERT_FAILS_WITH("RSDT at 0x100000 has a bad checksum");

    /* The RSDP names a FADT where the RSDT should be. */
    build_system();
    make_rsdp(RSDP_PHYS, 0, FADT_PHYS, 0);
    ASSERT_FAILS_WITH("signature 'FACP', expected RSDT");

    build_system();
    w32(RSDT_PHYS + 4, 35);
    ASSERT_FAILS_WITH("below the 36-byte header");

    /* A table whose length runs past the end of memory. */
    build_system();
    const uint64_t entries[] = {FADT_PHYS, MADT_PHYS};
    make_root(MEM_SIZE - 44, false, entries, 2);
    w32(MEM_SIZE - 44 + 4, 48);
    make_rsdp(RSDP_PHYS, 0, MEM_SIZE - 44, 0);
    ASSERT_FAILS_WITH("with length 48 is not mapped");

    /* An XSDT entry pointing outside memory. */
    build_system();
    const uint64_t bad[] = {MADT_PHYS, 0x100000000000ull};
    make_root(XSDT_PHYS, true, bad, 2);
    make_rsdp(RSDP_PHYS, 2, RSDT_PHYS, XSDT_PHYS);
    ASSERT_FAILS_WITH("XSDT entry 1 at 0x100000000000 is not mapped");
}

static void test_missing_madt(void **state)
{
    (void)state;
    build_system();
    const uint64_t entries[] = {FADT_PHYS};
    make_root(RSDT_PHYS, false, entries, 1);
    ASSERT_FAILS_WITH("no MADT");
}

static void test_missing_fadt(void **state)
{
    (void)state;
    build_system();
    const uint64_t entries[] = {MADT_PHYS};
    make_root(RSDT_PHYS, false, entries, 1);
    assert_int_equal(init(), 0);
    assert_int_equal(info.cpu_count, 2);
    assert_false(info.s5_valid);
    assert_int_equal(info.pm1a_cnt_port, 0);
}

/* Parses the MADT at phys from an exact-size heap copy, so overreads are caught. */
static int parse_copy(uint64_t phys)
{
    uint32_t len = r32(phys + 4);
    void *copy = malloc(len);
    memcpy(copy, mem + phys, len);
    int rc = acpi_parse_madt(copy, len, &info, err, sizeof(err));
    free(copy);
    return rc;
}

static void test_madt_cpu_selection(void **state)
{
    (void)state;
    struct madt m = madt_begin(MADT_PHYS, LAPIC);
    madt_lapic(&m, 0, 0, 1);
    madt_lapic(&m, 1, 1, 0); /* disabled, not online capable */
    madt_lapic(&m, 2, 2, 2); /* online capable: can be brought up later */
    madt_lapic(&m, 3, 0, 1); /* duplicate APIC ID */
    static const uint8_t ioapic[12] = {1, 12, 0, 0, 0, 0, 0xC0, 0xFE};
    madt_raw(&m, ioapic, sizeof(ioapic));
    madt_lapic(&m, 4, 4, 3);
    madt_x2apic(&m, 4, 1, 40);      /* same CPU again as an x2APIC */
    madt_x2apic(&m, 0x100, 1, 256); /* beyond 8-bit IDs */
    madt_x2apic(&m, 0x101, 0, 257); /* disabled */
    madt_x2apic(&m, 0x102, 2, 258);
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), 0);
    assert_int_equal(info.lapic_base, LAPIC);
    assert_int_equal(info.cpu_count, 5);
    const uint32_t ids[] = {0, 2, 4, 0x100, 0x102};
    const uint32_t uids[] = {0, 2, 4, 256, 258};
    const bool x2[] = {false, false, false, true, true};
    for (unsigned i = 0; i < 5; i++) {
        assert_int_equal(info.cpus[i].apic_id, ids[i]);
        assert_int_equal(info.cpus[i].uid, uids[i]);
        assert_int_equal(info.cpus[i].from_x2apic, x2[i]);
    }
}

static void test_madt_address_override(void **state)
{
    (void)state;
    /* The override applies wherever it appears among the entries. */
    struct madt m = madt_begin(MADT_PHYS, LAPIC);
    madt_lapic(&m, 0, 0, 1);
    madt_override(&m, 0x123456789000ull);
    madt_lapic(&m, 1, 1, 1);
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), 0);
    assert_int_equal(info.lapic_base, 0x123456789000ull);
    assert_int_equal(info.cpu_count, 2);

    m = madt_begin(MADT_PHYS, LAPIC);
    madt_override(&m, 0xFED00000);
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), 0);
    assert_int_equal(info.lapic_base, 0xFED00000);
    assert_int_equal(info.cpu_count, 0);
}

static void test_madt_bad_entries(void **state)
{
    (void)state;
    /* An entry claiming more bytes than the table has left. */
    struct madt m = madt_begin(MADT_PHYS, LAPIC);
    madt_lapic(&m, 0, 0, 1);
    static const uint8_t overrun[4] = {0, 8, 1, 1};
    madt_raw(&m, overrun, sizeof(overrun));
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), -1);
    assert_non_null(strstr(err, "offset 0x34 has length 8, 4 bytes left"));

    /* Length 0 would loop forever; length 1 would not advance past the header. */
    for (uint8_t len = 0; len < 2; len++) {
        m = madt_begin(MADT_PHYS, LAPIC);
        const uint8_t tiny[4] = {7, len, 0, 0};
        madt_raw(&m, tiny, sizeof(tiny));
        madt_end(&m);
        assert_int_equal(parse_copy(MADT_PHYS), -1);
        assert_non_null(strstr(err, "offset 0x2c has length"));
    }

    /* A single trailing byte cannot even hold an entry header. */
    m = madt_begin(MADT_PHYS, LAPIC);
    madt_lapic(&m, 0, 0, 1);
    static const uint8_t one[1] = {0};
    madt_raw(&m, one, 1);
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), -1);
    assert_non_null(strstr(err, "1 bytes left"));

    /* Known types shorter than their layout. */
    m = madt_begin(MADT_PHYS, LAPIC);
    static const uint8_t short_lapic[6] = {0, 6, 0, 0, 1, 0};
    madt_raw(&m, short_lapic, sizeof(short_lapic));
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), -1);
    assert_non_null(strstr(err, "type 0 entry at offset 0x2c has length 6, needs 8"));

    m = madt_begin(MADT_PHYS, LAPIC);
    static const uint8_t short_x2[12] = {9, 12, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    madt_raw(&m, short_x2, sizeof(short_x2));
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), -1);
    assert_non_null(strstr(err, "type 9"));

    m = madt_begin(MADT_PHYS, LAPIC);
    static const uint8_t short_override[8] = {5, 8};
    madt_raw(&m, short_override, sizeof(short_override));
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), -1);
    assert_non_null(strstr(err, "type 5"));
}

static void test_madt_bad_header(void **state)
{
    (void)state;
    struct madt m = madt_begin(MADT_PHYS, LAPIC);
    madt_lapic(&m, 0, 0, 1);
    madt_end(&m);
    assert_int_equal(acpi_parse_madt(mem + MADT_PHYS, 43, &info, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "shorter than its 44-byte header"));
    /* The header claims more than the caller has. */
    assert_int_equal(acpi_parse_madt(mem + MADT_PHYS, 51, &info, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "length 52 is outside 44..51"));
    mem[MADT_PHYS + 45]++;
    assert_int_equal(acpi_parse_madt(mem + MADT_PHYS, 52, &info, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "bad checksum"));
    memcpy(mem + MADT_PHYS, "APIX", 4);
    assert_int_equal(acpi_parse_madt(mem + MADT_PHYS, 52, &info, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "signature"));
}

static void test_madt_cpu_limit(void **state)
{
    (void)state;
    struct madt m = madt_begin(MADT_PHYS, LAPIC);
    for (uint32_t i = 0; i < ACPI_MAX_CPUS; i++)
        madt_x2apic(&m, i, 1, i);
    /* Duplicates and disabled CPUs do not count against the limit. */
    madt_x2apic(&m, 7, 1, 7);
    madt_lapic(&m, 7, 7, 1);
    madt_x2apic(&m, 1000, 0, 1000);
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), 0);
    assert_int_equal(info.cpu_count, ACPI_MAX_CPUS);
    assert_int_equal(info.cpus[ACPI_MAX_CPUS - 1].apic_id, ACPI_MAX_CPUS - 1);

    assert_int_equal(info.cpus_beyond, 0);

    /* More usable CPUs than fit: the first are kept, the rest counted, and the table is good. */
    m.len -= 16; /* drop the disabled entry */
    madt_x2apic(&m, 1000, 2, 1000);
    madt_x2apic(&m, 1001, 1, 1001);
    madt_end(&m);
    assert_int_equal(parse_copy(MADT_PHYS), 0);
    assert_int_equal(info.cpu_count, ACPI_MAX_CPUS);
    assert_int_equal(info.cpus_beyond, 2);
    assert_int_equal(info.cpus[ACPI_MAX_CPUS - 1].apic_id, ACPI_MAX_CPUS - 1);
}

/*
 * Builds the standard system with the given AML as the DSDT body, placing
 * the DSDT flush against the end of fake memory.
 */
static bool s5_with(const uint8_t *aml, uint32_t n)
{
    build_system();
    uint32_t dsdt = MEM_SIZE - 36 - n;
    make_dsdt(dsdt, aml, n);
    make_fadt(FADT_PHYS, 244, 0x604, 0x0, dsdt, 0);
    assert_int_equal(init(), 0);
    return info.s5_valid;
}

#define S5(...) s5_with((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}))

static void test_s5_integer_encodings(void **state)
{
    (void)state;
    assert_true(S5(0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x02, 0x0A, 0x05, 0x0A, 0x07));
    assert_int_equal(info.slp_typa, 5);
    assert_int_equal(info.slp_typb, 7);
    /* ZeroOp and OneOp. */
    assert_true(S5('_', 'S', '5', '_', 0x12, 0x04, 0x02, 0x00, 0x01));
    assert_int_equal(info.slp_typa, 0);
    assert_int_equal(info.slp_typb, 1);
    /* Raw bytes, as some firmware writes them. */
    assert_true(S5('_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x05, 0x06, 0x00, 0x00));
    assert_int_equal(info.slp_typa, 5);
    assert_int_equal(info.slp_typb, 6);
    /* Mixed, with the package ending exactly at the end of the table. */
    assert_true(S5('_', 'S', '5', '_', 0x12, 0x05, 0x02, 0x0A, 0x03, 0x01));
    assert_int_equal(info.slp_typa, 3);
    assert_int_equal(info.slp_typb, 1);
}

static void test_s5_pkglength_sizes(void **state)
{
    (void)state;
    /* Bits 7-6 of the lead byte give 0-3 following bytes. */
    assert_true(S5('_', 'S', '5', '_', 0x12, 0x46, 0x00, 0x02, 0x0A, 0x01, 0x0A, 0x02));
    assert_int_equal(info.slp_typa, 1);
    assert_int_equal(info.slp_typb, 2);
    assert_true(S5('_', 'S', '5', '_', 0x12, 0x87, 0x00, 0x00, 0x02, 0x0A, 0x03, 0x0A, 0x04));
    assert_int_equal(info.slp_typa, 3);
    assert_int_equal(info.slp_typb, 4);
    assert_true(S5('_', 'S', '5', '_', 0x12, 0xC8, 0x00, 0x00, 0x00, 0x02, 0x0A, 0x05, 0x0A, 0x06));
    assert_int_equal(info.slp_typa, 5);
    assert_int_equal(info.slp_typb, 6);
}

static void test_s5_not_found(void **state)
{
    (void)state;
    /* A one-element package. */
    assert_false(S5('_', 'S', '5', '_', 0x12, 0x03, 0x01, 0x0A, 0x05, 0x00, 0x00));
    /* No PackageOp (a method named _S5_), nothing else. */
    assert_false(S5('_', 'S', '5', '_', 0x14, 0x06, 0x02, 0x0A, 0x05, 0x0A, 0x07));
    assert_false(S5('_', 'S', '4', '_', 0x12, 0x06, 0x02, 0x0A, 0x05, 0x0A, 0x07));
    /* Truncated at every point of the package; the table ends at memory's end. */
    assert_false(S5('_', 'S', '5', '_'));
    assert_false(S5('_', 'S', '5', '_', 0x12));
    assert_false(S5('_', 'S', '5', '_', 0x12, 0xC0, 0x00));
    assert_false(S5('_', 'S', '5', '_', 0x12, 0x06));
    assert_false(S5('_', 'S', '5', '_', 0x12, 0x06, 0x02));
    assert_false(S5('_', 'S', '5', '_', 0x12, 0x06, 0x02, 0x0A));
    assert_false(S5('_', 'S', '5', '_', 0x12, 0x06, 0x02, 0x0A, 0x05));
    assert_false(S5('_', 'S', '5', '_', 0x12, 0x06, 0x02, 0x0A, 0x05, 0x0A));
    assert_false(S5('_', 'S', '5'));
    /* The port was found, the package was not. */
    assert_int_equal(info.pm1a_cnt_port, 0x604);
}

static void test_s5_skips_false_match(void **state)
{
    (void)state;
    assert_true(
        S5('_', 'S', '5', '_', 0x14, 0x00, '_', 'S', '5', '_', 0x12, 0x04, 0x02, 0x07, 0x07));
    assert_int_equal(info.slp_typa, 7);
    assert_int_equal(info.slp_typb, 7);
}

static void test_fadt_dsdt_selection(void **state)
{
    (void)state;
    static const uint8_t no_s5[] = {0x5B, 0x82, 0x00};
    build_system();
    make_dsdt(DSDT2_PHYS, no_s5, sizeof(no_s5));

    /* X_DSDT wins over DSDT in a long enough FADT. */
    make_fadt(FADT_PHYS, 244, 0x604, 0, DSDT2_PHYS, DSDT_PHYS);
    assert_int_equal(init(), 0);
    assert_true(info.s5_valid);

    make_fadt(FADT_PHYS, 244, 0x604, 0, DSDT_PHYS, 0);
    assert_int_equal(init(), 0);
    assert_true(info.s5_valid);

    /* An ACPI 1.0 FADT (116 bytes) has no X_DSDT, whatever follows it. */
    make_fadt(FADT_PHYS, 116, 0x604, 0, DSDT2_PHYS, DSDT_PHYS);
    assert_int_equal(init(), 0);
    assert_false(info.s5_valid);

    /* 148 bytes is just enough for X_DSDT. */
    make_fadt(FADT_PHYS, 148, 0x604, 0, DSDT2_PHYS, DSDT_PHYS);
    assert_int_equal(init(), 0);
    assert_true(info.s5_valid);

    make_fadt(FADT_PHYS, 147, 0x604, 0, DSDT2_PHYS, DSDT_PHYS);
    assert_int_equal(init(), 0);
    assert_false(info.s5_valid);
}

static void test_fadt_ports(void **state)
{
    (void)state;
    build_system();
    make_fadt(FADT_PHYS, 244, 0xB004, 0xB008, DSDT_PHYS, 0);
    assert_int_equal(init(), 0);
    assert_true(info.s5_valid);
    assert_int_equal(info.pm1a_cnt_port, 0xB004);
    assert_int_equal(info.pm1b_cnt_port, 0xB008);

    /* Without PM1a there is no way to power off. */
    make_fadt(FADT_PHYS, 244, 0, 0xB008, DSDT_PHYS, 0);
    assert_int_equal(init(), 0);
    assert_false(info.s5_valid);

    make_fadt(FADT_PHYS, 244, 0x10004, 0, DSDT_PHYS, 0);
    assert_int_equal(init(), 0);
    assert_false(info.s5_valid);

    make_fadt(FADT_PHYS, 244, 0x604, 0, 0, 0);
    assert_int_equal(init(), 0);
    assert_false(info.s5_valid);
}

static void test_fadt_dsdt_errors(void **state)
{
    (void)state;
    build_system();
    make_fadt(FADT_PHYS, 71, 0x604, 0, DSDT_PHYS, 0);
    ASSERT_FAILS_WITH("FACP length 71 is too short");

    make_fadt(FADT_PHYS, 244, 0x604, 0, DSDT_PHYS, 0);
    mem[FADT_PHYS + 100]++;
    ASSERT_FAILS_WITH("FACP at 0x103000 has a bad checksum");

    make_fadt(FADT_PHYS, 244, 0x604, 0, DSDT_PHYS, 0);
    mem[DSDT_PHYS + 40]++;
    ASSERT_FAILS_WITH("DSDT at 0x104000 has a bad checksum");

    make_fadt(FADT_PHYS, 244, 0x604, 0, MADT_PHYS, 0);
    ASSERT_FAILS_WITH("signature 'APIC', expected DSDT");
}

static void test_error_signature_is_printable(void **state)
{
    (void)state;
    build_system();
    memcpy(mem + RSDT_PHYS, "R\nS\x01", 4);
    ASSERT_FAILS_WITH("signature 'R?S?', expected RSDT");
}

static uint64_t scan(void)
{
    return acpi_scan_rsdp(fake_map, &fake);
}

static void test_scan_bios_area(void **state)
{
    (void)state;
    assert_int_equal(scan(), 0);

    /* Not on a 16-byte boundary: invisible to the scan. */
    make_rsdp(0xE0008, 0, RSDT_PHYS, 0);
    assert_int_equal(scan(), 0);

    /* A bad checksum is passed over for a later valid copy. */
    make_rsdp(0xE1230, 0, RSDT_PHYS, 0);
    mem[0xE1230 + 8]++;
    make_rsdp(0xFFFE0, 2, RSDT_PHYS, XSDT_PHYS);
    assert_int_equal(scan(), 0xFFFE0);
    make_rsdp(0xE1230, 0, RSDT_PHYS, 0);
    assert_int_equal(scan(), 0xE1230);
}

static void test_scan_revision2_checksum(void **state)
{
    (void)state;
    make_rsdp(0xE0000, 2, RSDT_PHYS, XSDT_PHYS);
    mem[0xE0000 + 33]++; /* reserved byte: only the extended checksum notices */
    make_rsdp(0xF0000, 2, RSDT_PHYS, XSDT_PHYS);
    assert_int_equal(scan(), 0xF0000);
}

static void test_scan_ebda(void **state)
{
    (void)state;
    w16(0x40E, 0x9FC0); /* EBDA at 0x9FC00 */
    make_rsdp(0xE0000, 0, RSDT_PHYS, 0);
    make_rsdp(0x9FC00 + 0x3F0, 0, RSDT_PHYS, 0);
    /* The EBDA is searched first. */
    assert_int_equal(scan(), 0x9FFF0);

    /* Only its first KiB is. */
    memset(mem + 0x9FFF0, 0, 20);
    w16(0x40E, 0x9F00);
    make_rsdp(0x9F000 + 0x400, 0, RSDT_PHYS, 0);
    assert_int_equal(scan(), 0xE0000);
    make_rsdp(0x9F000, 0, RSDT_PHYS, 0);
    assert_int_equal(scan(), 0x9F000);
}

static void test_scan_and_init(void **state)
{
    (void)state;
    build_system();
    uint64_t rsdp = scan();
    assert_int_equal(rsdp, RSDP_PHYS);
    assert_int_equal(acpi_init(rsdp, fake_map, &fake, &info, err, sizeof(err)), 0);
    assert_int_equal(info.cpu_count, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full_system_rsdt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_xsdt_preferred, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rsdp_v2_without_xsdt_uses_rsdt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rsdp_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_madt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_fadt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_madt_cpu_selection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_madt_address_override, setup, teardown),
        cmocka_unit_test_setup_teardown(test_madt_bad_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_madt_bad_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_madt_cpu_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_s5_integer_encodings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_s5_pkglength_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_s5_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_s5_skips_false_match, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fadt_dsdt_selection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fadt_ports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fadt_dsdt_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_signature_is_printable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_bios_area, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_revision2_checksum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_ebda, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_and_init, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

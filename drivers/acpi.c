/* SPDX-License-Identifier: GPL-2.0-only */
#include "drivers/acpi.h"

#include <stdarg.h>

#include "lib/format.h"
#include "lib/bytes.h"
#include "lib/string.h"

#define SDT_HEADER_LEN  36
#define RSDP_V1_LEN     20
#define RSDP_V2_LEN     36
#define MADT_ENTRIES    44
#define FADT_PM1_END    72  /* PM1a/PM1b_CNT_BLK end here */
#define FADT_X_DSDT_END 148 /* X_DSDT ends here */
#define AML_PACKAGE_OP  0x12
#define AML_BYTE_PREFIX 0x0A

/* Firmware signatures can be garbage; keep the error line printable. */
static void sig_text(const uint8_t *sig, char out[5])
{
    for (int i = 0; i < 4; i++)
        out[i] = sig[i] >= 0x20 && sig[i] < 0x7f ? (char)sig[i] : '?';
    out[4] = '\0';
}

/*
 * Validates the RSDP at phys and returns the root table's address and kind.
 * Returns NULL on success, else the reason.
 */
static const char *check_rsdp(uint64_t phys, phys_map_fn map, void *ctx, uint64_t *root, bool *xsdt)
{
    const uint8_t *r = map(phys, RSDP_V1_LEN, ctx);
    if (!r)
        return "not mapped";
    if (memcmp(r, "RSD PTR ", 8) != 0)
        return "bad signature";
    if (sum8(r, RSDP_V1_LEN) != 0)
        return "bad checksum";
    *root = get_le32(r + 16);
    *xsdt = false;
    if (r[15] >= 2) {
        r = map(phys, RSDP_V2_LEN, ctx);
        if (!r)
            return "revision 2 fields not mapped";
        uint32_t len = get_le32(r + 20);
        if (len < RSDP_V2_LEN)
            return "revision 2 length below 36";
        r = map(phys, len, ctx);
        if (!r)
            return "revision 2 length not mapped";
        if (sum8(r, len) != 0)
            return "bad extended checksum";
        if (get_le64(r + 24) != 0) {
            *root = get_le64(r + 24);
            *xsdt = true;
        }
    }
    return *root ? NULL : "no RSDT or XSDT address";
}

static uint64_t scan_area(uint64_t base, size_t len, phys_map_fn map, void *ctx)
{
    const uint8_t *area = map(base, len, ctx);
    if (!area)
        return 0;
    for (size_t off = 0; off + 8 <= len; off += 16) {
        uint64_t root;
        bool xsdt;
        if (memcmp(area + off, "RSD PTR ", 8) == 0 &&
            !check_rsdp(base + off, map, ctx, &root, &xsdt))
            return base + off;
    }
    return 0;
}

uint64_t acpi_scan_rsdp(phys_map_fn map, void *ctx)
{
    const uint8_t *bda = map(0x40E, 2, ctx);
    if (bda) {
        uint64_t ebda = (uint64_t)(bda[0] | bda[1] << 8) << 4;
        uint64_t found = ebda ? scan_area(ebda, 1024, map, ctx) : 0;
        if (found)
            return found;
    }
    return scan_area(0xE0000, 0x20000, map, ctx);
}

/* Maps the whole table at phys after checking its signature, length and checksum. */
static const uint8_t *map_sdt(uint64_t phys, const char *sig, phys_map_fn map, void *ctx, char *err,
                              size_t errlen)
{
    const uint8_t *t = map(phys, SDT_HEADER_LEN, ctx);
    if (!t) {
        format_error(err, errlen, "acpi: %s at 0x%llx is not mapped", sig,
                     (unsigned long long)phys);
        return NULL;
    }
    if (memcmp(t, sig, 4) != 0) {
        char got[5];
        sig_text(t, got);
        format_error(err, errlen, "acpi: table at 0x%llx has signature '%s', expected %s",
                     (unsigned long long)phys, got, sig);
        return NULL;
    }
    uint32_t len = get_le32(t + 4);
    if (len < SDT_HEADER_LEN) {
        format_error(err, errlen, "acpi: %s at 0x%llx has length %u, below the 36-byte header", sig,
                     (unsigned long long)phys, len);
        return NULL;
    }
    t = map(phys, len, ctx);
    if (!t) {
        format_error(err, errlen, "acpi: %s at 0x%llx with length %u is not mapped", sig,
                     (unsigned long long)phys, len);
        return NULL;
    }
    if (sum8(t, len) != 0) {
        format_error(err, errlen, "acpi: %s at 0x%llx has a bad checksum", sig,
                     (unsigned long long)phys);
        return NULL;
    }
    return t;
}

static void add_cpu(struct acpi_info *out, uint32_t apic_id, uint32_t uid, bool x2apic)
{
    /* Firmware often lists a CPU both as a local APIC and as an x2APIC. */
    for (unsigned i = 0; i < out->cpu_count; i++) {
        if (out->cpus[i].apic_id == apic_id)
            return;
    }
    /* The machine runs on the first ones (smp_boot says so); duplicates among the rest count. */
    if (out->cpu_count == ACPI_MAX_CPUS)
        out->cpus_beyond++;
    else
        out->cpus[out->cpu_count++] = (struct acpi_cpu){apic_id, uid, x2apic};
}

int acpi_parse_madt(const void *madt, size_t len, struct acpi_info *out, char *err, size_t errlen)
{
    const uint8_t *t = madt;
    if (len < MADT_ENTRIES)
        return format_error(err, errlen,
                            "acpi: MADT of %zu bytes is shorter than its 44-byte header", len);
    if (memcmp(t, "APIC", 4) != 0)
        return format_error(err, errlen, "acpi: MADT signature is not APIC");
    uint32_t tlen = get_le32(t + 4);
    if (tlen < MADT_ENTRIES || tlen > len)
        return format_error(err, errlen, "acpi: MADT length %u is outside 44..%zu", tlen, len);
    if (sum8(t, tlen) != 0)
        return format_error(err, errlen, "acpi: MADT has a bad checksum");

    out->lapic_base = get_le32(t + 36);
    out->cpu_count = 0;
    out->cpus_beyond = 0;
    for (uint32_t off = MADT_ENTRIES; off < tlen;) {
        uint32_t avail = tlen - off;
        const uint8_t *e = t + off;
        uint8_t elen = avail >= 2 ? e[1] : 0;
        if (elen < 2 || elen > avail)
            return format_error(
                err, errlen,
                "acpi: MADT entry at offset 0x%x has length %u, %u bytes left in table", off, elen,
                avail);
        uint8_t need = e[0] == 0 ? 8 : e[0] == 5 ? 12 : e[0] == 9 ? 16 : 2;
        if (elen < need)
            return format_error(err, errlen,
                                "acpi: MADT type %u entry at offset 0x%x has length %u, needs %u",
                                e[0], off, elen, need);
        /* Flags bit 0: enabled; bit 1: online capable (can be brought up later). */
        if (e[0] == 0 && (get_le32(e + 4) & 3))
            add_cpu(out, e[3], e[2], false);
        else if (e[0] == 5)
            out->lapic_base = get_le64(e + 4);
        else if (e[0] == 9 && (get_le32(e + 8) & 3))
            add_cpu(out, get_le32(e + 4), get_le32(e + 12), true);
        off += elen;
    }
    return 0;
}

/* Reads an AML integer as written in \_S5_: BytePrefix + byte, ZeroOp, OneOp or a raw byte. */
static bool aml_small_int(const uint8_t *t, size_t len, size_t *pos, uint16_t *v)
{
    if (*pos < len && t[*pos] == AML_BYTE_PREFIX)
        (*pos)++;
    if (*pos >= len)
        return false;
    /* ZeroOp (0x00) and OneOp (0x01) are their own values, like a raw byte. */
    *v = t[(*pos)++];
    return true;
}

/* Byte scan of the DSDT body for "_S5_" PackageOp PkgLength NumElements(>=2) int int. */
static bool find_s5(const uint8_t *t, size_t len, uint16_t *typa, uint16_t *typb)
{
    for (size_t i = SDT_HEADER_LEN; i + 4 <= len; i++) {
        if (memcmp(t + i, "_S5_", 4) != 0)
            continue;
        size_t pos = i + 4;
        if (pos >= len || t[pos] != AML_PACKAGE_OP)
            continue;
        pos++;
        /* PkgLength: bits 7-6 of the lead byte count the bytes that follow it. */
        if (pos >= len)
            continue;
        pos += 1 + (t[pos] >> 6);
        if (pos >= len || t[pos] < 2)
            continue;
        pos++;
        if (aml_small_int(t, len, &pos, typa) && aml_small_int(t, len, &pos, typb))
            return true;
    }
    return false;
}

/* FADT and DSDT: only a malformed table is an error; missing pieces leave s5_valid false. */
static int parse_fadt(uint64_t phys, phys_map_fn map, void *ctx, struct acpi_info *out, char *err,
                      size_t errlen)
{
    const uint8_t *f = map_sdt(phys, "FACP", map, ctx, err, errlen);
    if (!f)
        return -1;
    uint32_t len = get_le32(f + 4);
    if (len < FADT_PM1_END)
        return format_error(err, errlen,
                            "acpi: FACP length %u is too short for the PM1 control blocks", len);
    uint32_t pm1a = get_le32(f + 64), pm1b = get_le32(f + 68);
    uint64_t dsdt_phys = get_le32(f + 40);
    if (len >= FADT_X_DSDT_END && get_le64(f + 140) != 0)
        dsdt_phys = get_le64(f + 140);
    /* I/O ports are 16 bits; anything wider is not a port we can write. */
    if (pm1a == 0 || pm1a > 0xFFFF || pm1b > 0xFFFF || dsdt_phys == 0)
        return 0;
    out->pm1a_cnt_port = (uint16_t)pm1a;
    out->pm1b_cnt_port = (uint16_t)pm1b;

    const uint8_t *dsdt = map_sdt(dsdt_phys, "DSDT", map, ctx, err, errlen);
    if (!dsdt)
        return -1;
    out->s5_valid = find_s5(dsdt, get_le32(dsdt + 4), &out->slp_typa, &out->slp_typb);
    return 0;
}

int acpi_init(uint64_t rsdp_phys, phys_map_fn map, void *ctx, struct acpi_info *out, char *err,
              size_t errlen)
{
    memset(out, 0, sizeof(*out));
    uint64_t root_phys;
    bool xsdt;
    const char *why = check_rsdp(rsdp_phys, map, ctx, &root_phys, &xsdt);
    if (why)
        return format_error(err, errlen, "acpi: RSDP at 0x%llx: %s", (unsigned long long)rsdp_phys,
                            why);

    const char *root_sig = xsdt ? "XSDT" : "RSDT";
    const uint8_t *root = map_sdt(root_phys, root_sig, map, ctx, err, errlen);
    if (!root)
        return -1;
    size_t esize = xsdt ? 8 : 4;
    size_t count = (get_le32(root + 4) - SDT_HEADER_LEN) / esize;
    uint64_t madt_phys = 0, fadt_phys = 0;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *ent = root + SDT_HEADER_LEN + i * esize;
        uint64_t phys = xsdt ? get_le64(ent) : get_le32(ent);
        if (phys == 0)
            continue;
        const uint8_t *hdr = map(phys, 4, ctx);
        if (!hdr)
            return format_error(err, errlen, "acpi: %s entry %zu at 0x%llx is not mapped", root_sig,
                                i, (unsigned long long)phys);
        /* The first of each wins, as in other OSes. */
        if (!madt_phys && memcmp(hdr, "APIC", 4) == 0)
            madt_phys = phys;
        else if (!fadt_phys && memcmp(hdr, "FACP", 4) == 0)
            fadt_phys = phys;
    }

    if (!madt_phys)
        return format_error(err, errlen, "acpi: no MADT (APIC) among the %zu %s entries", count,
                            root_sig);
    const uint8_t *madt = map_sdt(madt_phys, "APIC", map, ctx, err, errlen);
    if (!madt || acpi_parse_madt(madt, get_le32(madt + 4), out, err, errlen))
        return -1;
    return fadt_phys ? parse_fadt(fadt_phys, map, ctx, out, err, errlen) : 0;
}

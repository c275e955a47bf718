/* SPDX-License-Identifier: GPL-2.0-only */
/* Opcodes and encodings: ACPI 6.5, 20.2 (AML grammar) and 6.4 (resource descriptors). */
#include "vmm/load/aml.h"

#include "lib/bytes.h"
#include "lib/string.h"

#define AML_ZERO_OP         0x00
#define AML_ONE_OP          0x01
#define AML_NAME_OP         0x08
#define AML_BYTE_PREFIX     0x0a
#define AML_WORD_PREFIX     0x0b
#define AML_DWORD_PREFIX    0x0c
#define AML_STRING_PREFIX   0x0d
#define AML_QWORD_PREFIX    0x0e
#define AML_SCOPE_OP        0x10
#define AML_BUFFER_OP       0x11
#define AML_DUAL_NAME       0x2e
#define AML_MULTI_NAME      0x2f
#define AML_EXT_OP          0x5b
#define AML_DEVICE_OP       0x82 /* after AML_EXT_OP */
#define AML_ROOT_CHAR       '\\'
#define AML_NAMESEG_LEN     4
#define AML_NAMESEGS_MAX    8 /* this emitter's limit; MultiNamePrefix's SegCount is a byte */
#define AML_PKGLENGTH_1_MAX 0x3f

/* Large resource descriptors (6.4.3): a tag byte, then a 16-bit length of what follows. */
#define RES_MEMORY32_FIXED 0x86
#define RES_MEMORY32_LEN   9
#define RES_MEMORY_RW      1 /* information byte bit 0: writeable */
#define RES_EXT_IRQ        0x89
#define RES_EXT_IRQ_LEN    6 /* flags, table length, one 32-bit interrupt number */
/* Flags bits 0 and 1; bit 2 (active low) and bit 3 (shared) stay clear: active high, exclusive. */
#define RES_IRQ_CONSUMER (1u << 0)
#define RES_IRQ_EDGE     (1u << 1)
#define RES_END_TAG      0x79 /* small descriptor: type 0xf, length 1 */

void aml_init(struct aml *a, uint8_t *buf, size_t cap)
{
    *a = (struct aml){.buf = buf, .cap = cap};
}

static void put(struct aml *a, const uint8_t *bytes, size_t n)
{
    if (a->failed || n > a->cap - a->len) {
        a->failed = true;
        return;
    }
    memcpy(a->buf + a->len, bytes, n);
    a->len += n;
}

static void put_byte(struct aml *a, uint8_t b)
{
    put(a, &b, 1);
}

/* Insert n bytes at off, moving what follows. */
static void insert(struct aml *a, size_t off, const uint8_t *bytes, size_t n)
{
    if (a->failed || n > a->cap - a->len) {
        a->failed = true;
        return;
    }
    memmove(a->buf + off + n, a->buf + off, a->len - off);
    memcpy(a->buf + off, bytes, n);
    a->len += n;
}

unsigned aml_pkglength(uint8_t out[4], size_t n)
{
    /* One byte holds 6 bits of length; with k following bytes, 4 + 8k bits. */
    if (n + 1 <= AML_PKGLENGTH_1_MAX) {
        out[0] = (uint8_t)(n + 1);
        return 1;
    }
    for (unsigned k = 1; k <= 3; k++) {
        size_t total = n + 1 + k;
        if (total >> (4 + 8 * k))
            continue;
        out[0] = (uint8_t)(k << 6 | (total & 0xf));
        for (unsigned i = 1; i <= k; i++)
            out[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
        return k + 1;
    }
    return 0;
}

static bool nameseg_char(char c, bool first)
{
    return (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

void aml_name_string(struct aml *a, const char *path)
{
    if (*path == AML_ROOT_CHAR)
        put_byte(a, (uint8_t)*path++);
    uint8_t segs[AML_NAMESEGS_MAX * AML_NAMESEG_LEN];
    unsigned nsegs = 0;
    for (const char *p = path;; p++) {
        unsigned n = 0;
        for (; *p && *p != '.'; p++, n++)
            if (n == AML_NAMESEG_LEN || !nameseg_char(*p, n == 0)) {
                a->failed = true;
                return;
            }
        if (!n || nsegs == AML_NAMESEGS_MAX) {
            a->failed = true;
            return;
        }
        uint8_t *seg = segs + nsegs++ * AML_NAMESEG_LEN;
        memcpy(seg, p - n, n);
        memset(seg + n, '_', AML_NAMESEG_LEN - n);
        if (!*p)
            break;
    }
    if (nsegs == 2)
        put_byte(a, AML_DUAL_NAME);
    else if (nsegs > 2) {
        put_byte(a, AML_MULTI_NAME);
        put_byte(a, (uint8_t)nsegs);
    }
    put(a, segs, nsegs * AML_NAMESEG_LEN);
}

void aml_integer(struct aml *a, uint64_t v)
{
    uint8_t b[9];
    size_t n;
    if (v <= 1) {
        put_byte(a, v ? AML_ONE_OP : AML_ZERO_OP);
        return;
    }
    if (v <= 0xff) {
        b[0] = AML_BYTE_PREFIX;
        n = 1;
    } else if (v <= 0xffff) {
        b[0] = AML_WORD_PREFIX;
        n = 2;
    } else if (v <= 0xffffffffu) {
        b[0] = AML_DWORD_PREFIX;
        n = 4;
    } else {
        b[0] = AML_QWORD_PREFIX;
        n = 8;
    }
    for (size_t i = 0; i < n; i++)
        b[1 + i] = (uint8_t)(v >> (8 * i));
    put(a, b, 1 + n);
}

void aml_string(struct aml *a, const char *s)
{
    put_byte(a, AML_STRING_PREFIX);
    put(a, (const uint8_t *)s, strlen(s) + 1);
}

void aml_name(struct aml *a, const char *path)
{
    put_byte(a, AML_NAME_OP);
    aml_name_string(a, path);
}

static void open_term(struct aml *a, bool is_buffer)
{
    if (a->depth == AML_DEPTH_MAX) {
        a->failed = true;
        return;
    }
    a->open[a->depth].start = a->len;
    a->open[a->depth].is_buffer = is_buffer;
    a->depth++;
}

void aml_scope_begin(struct aml *a, const char *path)
{
    put_byte(a, AML_SCOPE_OP);
    open_term(a, false);
    aml_name_string(a, path);
}

void aml_device_begin(struct aml *a, const char *path)
{
    put_byte(a, AML_EXT_OP);
    put_byte(a, AML_DEVICE_OP);
    open_term(a, false);
    aml_name_string(a, path);
}

void aml_buffer_begin(struct aml *a)
{
    put_byte(a, AML_BUFFER_OP);
    open_term(a, true);
}

void aml_end(struct aml *a)
{
    if (a->failed || !a->depth) {
        a->failed = true;
        return;
    }
    a->depth--;
    size_t start = a->open[a->depth].start;
    size_t body = a->len - start;
    /* A Buffer's PkgLength covers its BufferSize too: BufferSize first, then PkgLength. */
    uint8_t head[4 + 9];
    size_t head_len = 0;
    if (a->open[a->depth].is_buffer) {
        struct aml size = {.buf = head + 4, .cap = 9};
        aml_integer(&size, body);
        head_len = size.len;
    }
    uint8_t pkglen[4];
    unsigned n = aml_pkglength(pkglen, head_len + body);
    if (!n) {
        a->failed = true;
        return;
    }
    memcpy(head + 4 - n, pkglen, n);
    insert(a, start, head + 4 - n, n + head_len);
}

void aml_resource_template_begin(struct aml *a)
{
    aml_buffer_begin(a);
}

void aml_resource_template_end(struct aml *a)
{
    if (a->failed || !a->depth || !a->open[a->depth - 1].is_buffer) {
        a->failed = true;
        return;
    }
    size_t start = a->open[a->depth - 1].start;
    uint8_t sum = (uint8_t)(sum8(a->buf + start, a->len - start) + RES_END_TAG);
    uint8_t end[2] = {RES_END_TAG, (uint8_t)-sum};
    put(a, end, sizeof(end));
    aml_end(a);
}

void aml_memory32_fixed_rw(struct aml *a, uint32_t base, uint32_t len)
{
    uint8_t d[3 + RES_MEMORY32_LEN] = {RES_MEMORY32_FIXED, RES_MEMORY32_LEN, 0, RES_MEMORY_RW};
    put_le32(d + 4, base);
    put_le32(d + 8, len);
    put(a, d, sizeof(d));
}

void aml_interrupt_edge_high(struct aml *a, uint32_t gsi)
{
    uint8_t d[3 + RES_EXT_IRQ_LEN] = {RES_EXT_IRQ, RES_EXT_IRQ_LEN, 0,
                                      RES_IRQ_CONSUMER | RES_IRQ_EDGE, 1};
    put_le32(d + 5, gsi);
    put(a, d, sizeof(d));
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The AML emitter (vmm/load/aml.c) against the encodings of ACPI 6.5
 * section 20.2, written out byte by byte here; the SSDT it builds is read
 * back by test_acpi_tables (and by iasl there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "vmm/load/aml.h"

static uint8_t buf[0x20000];
static struct aml a;

static void start(void)
{
    memset(buf, 0xee, sizeof(buf));
    aml_init(&a, buf, sizeof(buf));
}

#define EXPECT(...)                                                                                \
    do {                                                                                           \
        const uint8_t want[] = {__VA_ARGS__};                                                      \
        assert_false(a.failed);                                                                    \
        assert_int_equal(a.len, sizeof(want));                                                     \
        assert_memory_equal(buf, want, sizeof(want));                                              \
    } while (0)

static void pkglength_is(size_t n, unsigned bytes, const uint8_t *want)
{
    uint8_t out[4];
    assert_int_equal(aml_pkglength(out, n), bytes);
    assert_memory_equal(out, want, bytes);
}

/*
 * One byte holds lengths up to 63 (bits 0-5); with k more bytes the lead
 * byte's bits 6-7 say k and its bits 0-3 hold the low nibble, each next byte
 * 8 more bits. The encoded length counts the PkgLength itself.
 */
static void test_pkglength_sizes_and_boundaries(void **state)
{
    (void)state;
    pkglength_is(0, 1, (const uint8_t[]){0x01});
    pkglength_is(62, 1, (const uint8_t[]){0x3f});
    pkglength_is(63, 2, (const uint8_t[]){0x41, 0x04});          /* 65 = 0x041 */
    pkglength_is(0xffd, 2, (const uint8_t[]){0x4f, 0xff});       /* 0xfff, 2 bytes' limit */
    pkglength_is(0xffe, 3, (const uint8_t[]){0x81, 0x00, 0x01}); /* 0x1001 */
    pkglength_is(0xffffc, 3, (const uint8_t[]){0x8f, 0xff, 0xff});
    pkglength_is(0xffffd, 4, (const uint8_t[]){0xc1, 0x00, 0x00, 0x01}); /* 0x100001 */
    pkglength_is(0xffffffb, 4, (const uint8_t[]){0xcf, 0xff, 0xff, 0xff});
    uint8_t out[4];
    assert_int_equal(aml_pkglength(out, 0xffffffc), 0);
}

static void test_name_strings(void **state)
{
    (void)state;
    start();
    aml_name_string(&a, "_HID");
    EXPECT('_', 'H', 'I', 'D');
    start();
    aml_name_string(&a, "\\_SB");
    EXPECT('\\', '_', 'S', 'B', '_');
    start();
    aml_name_string(&a, "\\_SB.VIO0");
    EXPECT('\\', 0x2e, '_', 'S', 'B', '_', 'V', 'I', 'O', '0');
    start();
    aml_name_string(&a, "A.B1.C");
    EXPECT(0x2f, 3, 'A', '_', '_', '_', 'B', '1', '_', '_', 'C', '_', '_', '_');
}

static void test_bad_names_fail(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "\\", "VIO00", "1ABC", "vio0", "A..B", "A.", "\\_SB.", "A.B.C.D.E.F.G.H.I"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        start();
        aml_name_string(&a, bad[i]);
        if (!a.failed)
            fail_msg("name '%s' accepted", bad[i]);
    }
}

static void test_integers_take_the_smallest_encoding(void **state)
{
    (void)state;
    start();
    aml_integer(&a, 0);
    aml_integer(&a, 1);
    aml_integer(&a, 2);
    aml_integer(&a, 0xff);
    aml_integer(&a, 0x100);
    aml_integer(&a, 0x10000);
    aml_integer(&a, 0x100000000ull);
    EXPECT(0x00, 0x01, 0x0a, 0x02, 0x0a, 0xff, 0x0b, 0x00, 0x01, 0x0c, 0x00, 0x00, 0x01, 0x00, 0x0e,
           0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00);
}

static void test_name_and_string(void **state)
{
    (void)state;
    start();
    aml_name(&a, "_HID");
    aml_string(&a, "LNRO0005");
    EXPECT(0x08, '_', 'H', 'I', 'D', 0x0d, 'L', 'N', 'R', 'O', '0', '0', '0', '5', 0x00);
}

/* Scope, Device and Buffer get their PkgLength (and a Buffer its BufferSize) when closed. */
static void test_nested_terms(void **state)
{
    (void)state;
    start();
    aml_scope_begin(&a, "\\_SB");
    aml_device_begin(&a, "VIO0");
    aml_name(&a, "_UID");
    aml_integer(&a, 0);
    aml_end(&a);
    aml_end(&a);
    EXPECT(0x10, 0x13, '\\', '_', 'S', 'B', '_', /* Scope, PkgLength 19 */
           0x5b, 0x82, 0x0b, 'V', 'I', 'O', '0', /* Device, PkgLength 11 */
           0x08, '_', 'U', 'I', 'D', 0x00);
    assert_int_equal(a.depth, 0);

    start();
    aml_buffer_begin(&a);
    aml_integer(&a, 0x55);
    EXPECT(0x11, 0x0a, 0x55);
    aml_end(&a);
    EXPECT(0x11, 0x05, 0x0a, 0x02, 0x0a, 0x55); /* PkgLength 5, BufferSize 2, the 2 bytes */
}

/* Contents past 62 bytes move to make room for a 2-byte PkgLength. */
static void test_long_contents_move_for_a_longer_pkglength(void **state)
{
    (void)state;
    start();
    aml_device_begin(&a, "BIG0");
    for (unsigned i = 0; i < 20; i++) {
        aml_name(&a, "NAME");
        aml_integer(&a, 0);
    }
    aml_end(&a);
    assert_false(a.failed);
    /* 4 (name) + 20 * 6 = 124 bytes after the PkgLength; with its 2 bytes, 126 = 0x7e. */
    assert_int_equal(a.len, 2 + 2 + 124);
    assert_int_equal(buf[2], 0x40 | (126 & 0xf));
    assert_int_equal(buf[3], 126 >> 4);
    assert_memory_equal(buf + 4, "BIG0", 4);
    for (unsigned i = 0; i < 20; i++) {
        const uint8_t *name = buf + 8 + 6 * i;
        assert_int_equal(name[0], 0x08);
        assert_memory_equal(name + 1, "NAME", 4);
        assert_int_equal(name[5], 0x00);
    }
}

/* A Buffer of 0x1000 bytes: a 2-byte PkgLength covering the Word BufferSize and the bytes. */
static void test_large_buffer(void **state)
{
    (void)state;
    start();
    aml_buffer_begin(&a);
    for (unsigned i = 0; i < 0x1000 / 2; i++)
        aml_integer(&a, 0x10 + i % 0x20); /* 2 bytes each */
    aml_end(&a);
    assert_false(a.failed);
    size_t total = 0x1000 + 3 + 3; /* the bytes, BufferSize 0b 00 10, a 3-byte PkgLength */
    assert_int_equal(a.len, 1 + total);
    assert_int_equal(buf[1], 0x80 | (total & 0xf));
    assert_int_equal(buf[2], (total >> 4) & 0xff);
    assert_int_equal(buf[3], total >> 12);
    assert_int_equal(buf[4], 0x0b);
    assert_int_equal(buf[5], 0x00);
    assert_int_equal(buf[6], 0x10);
    assert_int_equal(buf[7], 0x0a);
    assert_int_equal(buf[8], 0x10);
}

static void test_resource_template(void **state)
{
    (void)state;
    start();
    aml_resource_template_begin(&a);
    aml_memory32_fixed_rw(&a, 0xd0001000, 0x1000);
    aml_interrupt_edge_high(&a, 6);
    aml_resource_template_end(&a);
    /* Memory32Fixed 12 bytes, Extended Interrupt 9, End Tag 2: 23 = BufferSize 0x17. */
    uint8_t sum = 0;
    for (size_t i = 4; i < 4 + 23 - 1; i++)
        sum += buf[i];
    uint8_t checksum = (uint8_t)-sum;
    EXPECT(0x11, 0x1a, 0x0a, 0x17,                                                 /* Buffer */
           0x86, 0x09, 0x00, 0x01, 0x00, 0x10, 0x00, 0xd0, 0x00, 0x10, 0x00, 0x00, /* RW */
           0x89, 0x06, 0x00, 0x03, 0x01, 0x06, 0x00, 0x00, 0x00, /* consumer, edge, high */
           0x79, checksum);
}

/* Running out of room, closing what is not open and nesting too deep all fail, never overrun. */
static void test_failures(void **state)
{
    (void)state;
    start();
    a.cap = 6;
    aml_name(&a, "_HID");
    aml_string(&a, "LNRO0005");
    assert_true(a.failed);
    assert_int_equal(buf[6], 0xee);

    start();
    aml_end(&a);
    assert_true(a.failed);

    start();
    for (unsigned i = 0; i <= AML_DEPTH_MAX; i++)
        aml_scope_begin(&a, "S");
    assert_true(a.failed);

    /* A Device's PkgLength must fit after its contents: no room for it, no write past cap. */
    start();
    aml_device_begin(&a, "D");
    aml_integer(&a, 0);
    a.cap = a.len;
    aml_end(&a);
    assert_true(a.failed);
    assert_int_equal(buf[a.cap], 0xee);

    start();
    aml_scope_begin(&a, "S");
    aml_resource_template_end(&a); /* not a Buffer */
    assert_true(a.failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pkglength_sizes_and_boundaries),
        cmocka_unit_test(test_name_strings),
        cmocka_unit_test(test_bad_names_fail),
        cmocka_unit_test(test_integers_take_the_smallest_encoding),
        cmocka_unit_test(test_name_and_string),
        cmocka_unit_test(test_nested_terms),
        cmocka_unit_test(test_long_contents_move_for_a_longer_pkglength),
        cmocka_unit_test(test_large_buffer),
        cmocka_unit_test(test_resource_template),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

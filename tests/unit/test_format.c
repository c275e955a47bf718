/* SPDX-License-Identifier: GPL-2.0-only */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/format.h"

/*
 * Calls go through vsnprintf so gcc cannot fold a constant snprintf at
 * compile time and bypass the code under test.
 */
static char out[256];

static int fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static int fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    memset(out, 'X', sizeof(out));
    int n = vsnprintf(out, sizeof(out), f, ap);
    va_end(ap);
    return n;
}

/* For formats -Wformat rejects as literals: flag clashes, truncating lengths, bad specs. */
static int fmt_nonliteral(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    memset(out, 'X', sizeof(out));
    int n = vsnprintf(out, sizeof(out), f, ap);
    va_end(ap);
    return n;
}

#define CHECK(expect, ...)                                                                         \
    do {                                                                                           \
        int n_ = fmt(__VA_ARGS__);                                                                 \
        assert_string_equal(out, expect);                                                          \
        assert_int_equal(n_, strlen(expect));                                                      \
    } while (0)

#define CHECK_NL(expect, ...)                                                                      \
    do {                                                                                           \
        int n_ = fmt_nonliteral(__VA_ARGS__);                                                      \
        assert_string_equal(out, expect);                                                          \
        assert_int_equal(n_, strlen(expect));                                                      \
    } while (0)

static void test_plain_text(void **state)
{
    (void)state;
    CHECK("", "%s", "");
    CHECK("hello, world", "hello, world");
    CHECK("100%", "100%%");
    CHECK("a%b", "a%%%c", 'b');
}

static void test_signed(void **state)
{
    (void)state;
    CHECK("0", "%d", 0);
    CHECK("42 -42", "%d %i", 42, -42);
    CHECK("2147483647", "%d", INT_MAX);
    CHECK("-2147483648", "%d", INT_MIN);
    CHECK("-9223372036854775808", "%lld", (long long)INT64_MIN);
    CHECK("9223372036854775807", "%ld", (long)INT64_MAX);
    CHECK("-9223372036854775808", "%jd", INTMAX_MIN);
    CHECK("-5", "%td", (ptrdiff_t)-5);
    CHECK("-1", "%zd", (long)-1);
}

static void test_unsigned_and_bases(void **state)
{
    (void)state;
    CHECK("4294967295", "%u", UINT_MAX);
    CHECK("18446744073709551615", "%llu", (unsigned long long)UINT64_MAX);
    CHECK("18446744073709551615", "%zu", SIZE_MAX);
    CHECK("deadbeef DEADBEEF", "%x %X", 0xdeadbeefu, 0xdeadbeefu);
    CHECK("ffffffffffffffff", "%lx", (unsigned long)UINT64_MAX);
    CHECK("1234abcd", "%jx", (uintmax_t)0x1234abcd);
    CHECK("0 10 777", "%o %o %o", 0u, 8u, 0777u);
    CHECK("1777777777777777777777", "%llo", (unsigned long long)UINT64_MAX);
    CHECK("fffffffb", "%x", (unsigned)-5);
}

static void test_char_and_short_lengths(void **state)
{
    (void)state;
    /*
     * The int argument is truncated to the named type; clang's -Wformat
     * rejects such literals, hence the non-literal formats.
     */
    CHECK_NL("-1", "%hhd", 255);
    CHECK_NL("1", "%hhu", 257);
    CHECK_NL("ff", "%hhx", 0x1ff);
    CHECK_NL("-1", "%hd", 65535);
    CHECK_NL("1", "%hu", 65537);
    CHECK_NL("-32768", "%hi", 32768);
}

static void test_width_and_flags(void **state)
{
    (void)state;
    CHECK("   42", "%5d", 42);
    CHECK("42   |", "%-5d|", 42);
    CHECK("00042", "%05d", 42);
    CHECK("-0042", "%05d", -42);
    CHECK("+5 -5  5", "%+d %+d % d", 5, -5, 5);
    CHECK("+0005", "%+05d", 5);
    CHECK("   +5", "%+5d", 5);
    CHECK("42", "%1d", 42);
    CHECK("0000ff", "%06x", 0xffu);
    CHECK_NL("42   |", "%-05d|", 42); /* '-' wins over '0' */
    CHECK_NL("+5", "% +d", 5);        /* '+' wins over ' ' */
}

static void test_precision(void **state)
{
    (void)state;
    CHECK("00042", "%.5d", 42);
    CHECK("-00042", "%.5d", -42);
    CHECK("   00042", "%8.5d", 42);
    CHECK("", "%.0d", 0);
    CHECK("     ", "%5.0d", 0);
    CHECK("", "%.0x", 0u);
    CHECK("7", "%.0d", 7);
    CHECK("+007", "%+.3d", 7);
    CHECK_NL("   00042", "%08.5d", 42); /* '0' is ignored with a precision */
}

static void test_star(void **state)
{
    (void)state;
    CHECK("   42", "%*d", 5, 42);
    CHECK("42   |", "%*d|", -5, 42); /* negative width means left-justify */
    CHECK("007", "%.*d", 3, 7);
    /* A negative precision means none. */
    CHECK("7", "%.*d", -1, 7);
    CHECK("0", "%.*d", -1, 0);
    CHECK("abcdef", "%.*s", -1, "abcdef");
    CHECK("  007", "%*.*d", 5, 3, 7);
    CHECK("ab", "%.*s", 2, "abcdef");
}

static void test_strings(void **state)
{
    (void)state;
    CHECK("abc", "%s", "abc");
    CHECK("     abc", "%8s", "abc");
    CHECK("abc     |", "%-8s|", "abc");
    CHECK("abc", "%.3s", "abcdef");
    CHECK("  abc", "%5.3s", "abcdef");
    CHECK("abcdef", "%.10s", "abcdef");
    CHECK("", "%.0s", "abc");
    const char *volatile null = NULL;
    CHECK("(null)", "%s", null);
}

/* Precision can stop %s before an unterminated end. */
static void test_string_precision_stops_reading(void **state)
{
    (void)state;
    char raw[3] = {'x', 'y', 'z'};
    CHECK("xy", "%.2s", raw);
}

static void test_chars(void **state)
{
    (void)state;
    CHECK("A", "%c", 'A');
    CHECK("  A", "%3c", 'A');
    CHECK("A  |", "%-3c|", 'A');
}

static void test_pointer(void **state)
{
    (void)state;
    CHECK("0x1234", "%p", (void *)0x1234);
    CHECK("0x0", "%p", (void *)0);
    CHECK("0xffffffffffffffff", "%p", (void *)UINTPTR_MAX);
    CHECK("  0xabc", "%7p", (void *)0xabc);
    CHECK("0xabc  |", "%-7p|", (void *)0xabc);
}

static void test_alternate_form(void **state)
{
    (void)state;
    CHECK("0xff 0XFF", "%#x %#X", 0xffu, 0xffu);
    CHECK("0", "%#x", 0u);
    CHECK("0x0000ff", "%#08x", 0xffu);
    CHECK("010 0", "%#o %#o", 8u, 0u);
    CHECK("0", "%#.0o", 0u);
    CHECK("00010", "%#.5o", 8u);
}

static void test_unknown_and_trailing(void **state)
{
    (void)state;
    CHECK_NL("%q 1", "%q %d", 1);
    CHECK_NL("%-5y", "%-5y");
    CHECK_NL("abc%", "abc%");
    CHECK_NL("abc%-3", "abc%-3");
}

static void test_snprintf_truncation(void **state)
{
    (void)state;
    /* Through a volatile pointer so gcc cannot fold the calls. */
    int (*volatile sn)(char *, size_t, const char *, ...) = snprintf;
    char buf[8];

    memset(buf, 'X', sizeof(buf));
    assert_int_equal(sn(buf, 0, "hello"), 5);
    assert_int_equal(buf[0], 'X');
    assert_int_equal(sn(NULL, 0, "%d", 12345), 5);

    memset(buf, 'X', sizeof(buf));
    assert_int_equal(sn(buf, 1, "hello"), 5);
    assert_int_equal(buf[0], '\0');
    assert_int_equal(buf[1], 'X');

    memset(buf, 'X', sizeof(buf));
    assert_int_equal(sn(buf, 4, "hello"), 5);
    assert_memory_equal(buf, "hel\0XXXX", 8);

    memset(buf, 'X', sizeof(buf));
    assert_int_equal(sn(buf, 6, "hello"), 5);
    assert_memory_equal(buf, "hello\0XX", 8);

    memset(buf, 'X', sizeof(buf));
    assert_int_equal(sn(buf, 5, "hello"), 5);
    assert_memory_equal(buf, "hell\0XXX", 8);

    memset(buf, 'X', sizeof(buf));
    assert_int_equal(sn(buf, sizeof(buf), "%d-%s", -123, "abcdef"), 11);
    assert_string_equal(buf, "-123-ab");
}

struct collect {
    char buf[32];
    size_t n;
};

static void collect_sink(char c, void *ctx)
{
    struct collect *col = ctx;
    col->buf[col->n++] = c;
}

static int collect_fmt(struct collect *col, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vformat(collect_sink, col, f, ap);
    va_end(ap);
    return n;
}

static void test_vformat_sink(void **state)
{
    (void)state;
    struct collect col = {0};
    /* A NUL from %c is a character like any other. */
    assert_int_equal(collect_fmt(&col, "a%cb%3d", 0, 7), 6);
    assert_int_equal(col.n, 6);
    assert_memory_equal(col.buf, "a\0b  7", 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_text),
        cmocka_unit_test(test_signed),
        cmocka_unit_test(test_unsigned_and_bases),
        cmocka_unit_test(test_char_and_short_lengths),
        cmocka_unit_test(test_width_and_flags),
        cmocka_unit_test(test_precision),
        cmocka_unit_test(test_star),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_string_precision_stops_reading),
        cmocka_unit_test(test_chars),
        cmocka_unit_test(test_pointer),
        cmocka_unit_test(test_alternate_form),
        cmocka_unit_test(test_unknown_and_trailing),
        cmocka_unit_test(test_snprintf_truncation),
        cmocka_unit_test(test_vformat_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

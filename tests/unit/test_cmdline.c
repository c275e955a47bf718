/* SPDX-License-Identifier: GPL-2.0-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "lib/options.h"

static struct token tok(const char *s)
{
    return (struct token){s, strlen(s)};
}

/* Copies each report, since the reason may live in a buffer reused by the next one. */
struct reports {
    unsigned n;
    char word[8][64];
    char reason[8][160];
};

static void record(struct token word, const char *reason, void *ctx)
{
    struct reports *r = ctx;

    assert_true(r->n < 8);
    snprintf(r->word[r->n], sizeof(r->word[0]), "%.*s", (int)word.len, word.s);
    snprintf(r->reason[r->n], sizeof(r->reason[0]), "%s", reason);
    r->n++;
}

static void test_next_splits_words(void **state)
{
    (void)state;
    const char *cur = "  a=1 \t\n b=x=y   flag \t";
    struct token k, v;

    assert_true(cmdline_next(&cur, &k, &v));
    assert_true(token_eq(k, "a"));
    assert_true(token_eq(v, "1"));

    assert_true(cmdline_next(&cur, &k, &v));
    assert_true(token_eq(k, "b"));
    assert_true(token_eq(v, "x=y"));

    assert_true(cmdline_next(&cur, &k, &v));
    assert_true(token_eq(k, "flag"));
    assert_null(v.s);
    assert_int_equal(v.len, 0);

    assert_false(cmdline_next(&cur, &k, &v));
    assert_false(cmdline_next(&cur, &k, &v));
}

static void test_next_empty_value(void **state)
{
    (void)state;
    const char *cur = "k= =v";
    struct token k, v;

    assert_true(cmdline_next(&cur, &k, &v));
    assert_true(token_eq(k, "k"));
    assert_non_null(v.s);
    assert_int_equal(v.len, 0);

    assert_true(cmdline_next(&cur, &k, &v));
    assert_int_equal(k.len, 0);
    assert_true(token_eq(v, "v"));

    assert_false(cmdline_next(&cur, &k, &v));
}

static void test_next_blank_string(void **state)
{
    (void)state;
    const char *blank = " \t\n ";
    const char *empty = "";
    struct token k, v;

    assert_false(cmdline_next(&blank, &k, &v));
    assert_false(cmdline_next(&empty, &k, &v));
}

static void test_token_eq(void **state)
{
    (void)state;
    struct token t = {"abcdef", 3};

    assert_true(token_eq(t, "abc"));
    assert_false(token_eq(t, "ab"));
    assert_false(token_eq(t, "abcd"));
    assert_true(token_eq((struct token){NULL, 0}, ""));
    assert_false(token_eq((struct token){NULL, 0}, "a"));
}

static void test_parse_u64(void **state)
{
    (void)state;
    uint64_t n = 0;

    assert_true(parse_u64(tok("0"), &n));
    assert_int_equal(n, 0);
    assert_true(parse_u64(tok("12345"), &n));
    assert_int_equal(n, 12345);
    assert_true(parse_u64(tok("0x1F"), &n));
    assert_int_equal(n, 0x1f);
    assert_true(parse_u64(tok("0XdeadBEEF"), &n));
    assert_int_equal(n, 0xdeadbeef);
    assert_true(parse_u64(tok("18446744073709551615"), &n));
    assert_true(n == UINT64_MAX);
    assert_true(parse_u64(tok("0xffffffffffffffff"), &n));
    assert_true(n == UINT64_MAX);
    /* A slice stops at its length, not at the string's NUL. */
    assert_true(parse_u64((struct token){"42junk", 2}, &n));
    assert_int_equal(n, 42);
}

static void test_parse_u64_rejects(void **state)
{
    (void)state;
    uint64_t n = 7;

    assert_false(parse_u64(tok(""), &n));
    assert_false(parse_u64(tok("0x"), &n));
    assert_false(parse_u64(tok("12a"), &n));
    assert_false(parse_u64(tok("ff"), &n));
    assert_false(parse_u64(tok("0xfg"), &n));
    assert_false(parse_u64(tok("-1"), &n));
    assert_false(parse_u64(tok("+1"), &n));
    assert_false(parse_u64(tok(" 1"), &n));
    assert_false(parse_u64(tok("18446744073709551616"), &n));
    assert_false(parse_u64(tok("99999999999999999999"), &n));
    assert_false(parse_u64(tok("0x10000000000000000"), &n));
    assert_false(parse_u64(tok("1K"), &n));
    assert_int_equal(n, 7);
}

static void test_parse_size(void **state)
{
    (void)state;
    uint64_t n = 0;

    assert_true(parse_size(tok("4096"), &n));
    assert_int_equal(n, 4096);
    assert_true(parse_size(tok("4K"), &n));
    assert_int_equal(n, 4096);
    assert_true(parse_size(tok("2k"), &n));
    assert_int_equal(n, 2048);
    assert_true(parse_size(tok("64M"), &n));
    assert_int_equal(n, 64ull << 20);
    assert_true(parse_size(tok("0x10M"), &n));
    assert_int_equal(n, 16ull << 20);
    assert_true(parse_size(tok("3G"), &n));
    assert_int_equal(n, 3ull << 30);
    assert_true(parse_size(tok("17179869183G"), &n));
    assert_true(n == 17179869183ull << 30);
}

static void test_parse_size_rejects(void **state)
{
    (void)state;
    uint64_t n = 7;

    assert_false(parse_size(tok("K"), &n));
    assert_false(parse_size(tok("0xK"), &n));
    assert_false(parse_size(tok("1T"), &n));
    assert_false(parse_size(tok("1KK"), &n));
    assert_false(parse_size(tok("1 K"), &n));
    assert_false(parse_size(tok("17179869184G"), &n));
    assert_false(parse_size(tok("0x40000000000000K"), &n));
    assert_int_equal(n, 7);
}

static const char *const modes[] = {"auto", "vmx", "svm", NULL};

struct config {
    uint64_t cpus;
    uint64_t heap;
    bool debug;
    bool serial;
    unsigned mode;
};

#define NOPTS 5

static void make_opts(struct option o[NOPTS], struct config *c)
{
    *c = (struct config){.cpus = 1, .heap = 1 << 20, .debug = false, .serial = true, .mode = 0};
    o[0] = (struct option){"cpus", OPT_UINT, &c->cpus, 1, 64, NULL, "CPUs to start (1)"};
    o[1] = (struct option){"heap", OPT_UINT, &c->heap, 4096, 1ull << 32, NULL, "heap (1M)"};
    o[2] = (struct option){"debug", OPT_BOOL, &c->debug, 0, 0, NULL, "debug output (off)"};
    o[3] = (struct option){"serial", OPT_BOOL, &c->serial, 0, 0, NULL, "serial log (on)"};
    o[4] = (struct option){"mode", OPT_ENUM, &c->mode, 0, 0, modes, "virt backend (auto)"};
}

static void test_options_all_valid(void **state)
{
    (void)state;
    struct option o[NOPTS];
    struct config c;
    struct reports r = {0};

    make_opts(o, &c);
    assert_int_equal(options_parse("  cpus=0x10\theap=2M  debug=yes serial=off mode=svm\n", o,
                                   NOPTS, record, &r),
                     0);
    assert_int_equal(r.n, 0);
    assert_int_equal(c.cpus, 16);
    assert_int_equal(c.heap, 2u << 20);
    assert_true(c.debug);
    assert_false(c.serial);
    assert_int_equal(c.mode, 2);
}

static void test_options_empty(void **state)
{
    (void)state;
    struct option o[NOPTS];
    struct config c;
    struct reports r = {0};

    make_opts(o, &c);
    assert_int_equal(options_parse("", o, NOPTS, record, &r), 0);
    assert_int_equal(options_parse(" \t\n", o, NOPTS, record, &r), 0);
    assert_int_equal(r.n, 0);
    assert_int_equal(c.cpus, 1);
}

static void test_options_bool_spellings(void **state)
{
    (void)state;
    static const char *const yes[] = {"1", "yes", "on", "true"};
    static const char *const no[] = {"0", "no", "off", "false"};
    struct option o[NOPTS];
    struct config c;
    char line[64];

    make_opts(o, &c);
    for (size_t i = 0; i < 4; i++) {
        c.debug = false;
        snprintf(line, sizeof(line), "debug=%s", yes[i]);
        assert_int_equal(options_parse(line, o, NOPTS, NULL, NULL), 0);
        assert_true(c.debug);

        snprintf(line, sizeof(line), "debug=%s", no[i]);
        assert_int_equal(options_parse(line, o, NOPTS, NULL, NULL), 0);
        assert_false(c.debug);
    }
}

static void test_options_last_wins(void **state)
{
    (void)state;
    struct option o[NOPTS];
    struct config c;

    make_opts(o, &c);
    assert_int_equal(options_parse("cpus=2 cpus=3", o, NOPTS, NULL, NULL), 0);
    assert_int_equal(c.cpus, 3);
}

static void test_options_each_error_kind(void **state)
{
    (void)state;
    struct option o[NOPTS];
    struct config c;
    struct reports r = {0};

    make_opts(o, &c);
    assert_int_equal(options_parse("bogus=1 cpus heap= cpus=12x cpus=65 debug=maybe mode=kvm "
                                   "nothing",
                                   o, NOPTS, record, &r),
                     8);
    assert_int_equal(r.n, 8);

    assert_string_equal(r.word[0], "bogus=1");
    assert_string_equal(r.reason[0], "unknown option");
    assert_string_equal(r.word[1], "cpus");
    assert_string_equal(r.reason[1], "missing value");
    assert_string_equal(r.word[2], "heap=");
    assert_string_equal(r.reason[2], "missing value");
    assert_string_equal(r.word[3], "cpus=12x");
    assert_string_equal(r.reason[3], "not a number");
    assert_string_equal(r.word[4], "cpus=65");
    assert_string_equal(r.reason[4], "out of range [1, 64]");
    assert_string_equal(r.word[5], "debug=maybe");
    assert_non_null(strstr(r.reason[5], "expected one of"));
    assert_non_null(strstr(r.reason[5], "yes"));
    assert_string_equal(r.word[6], "mode=kvm");
    assert_string_equal(r.reason[6], "expected one of auto, vmx, svm");
    assert_string_equal(r.word[7], "nothing");
    assert_string_equal(r.reason[7], "unknown option");

    /* Every rejected option keeps its default. */
    assert_int_equal(c.cpus, 1);
    assert_int_equal(c.heap, 1 << 20);
    assert_false(c.debug);
    assert_true(c.serial);
    assert_int_equal(c.mode, 0);
}

static void test_options_errors_do_not_stop_parsing(void **state)
{
    (void)state;
    struct option o[NOPTS];
    struct config c;
    struct reports r = {0};

    make_opts(o, &c);
    assert_int_equal(options_parse("cpus=0 heap=8K oops mode=vmx", o, NOPTS, record, &r), 2);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.word[0], "cpus=0");
    assert_string_equal(r.reason[0], "out of range [1, 64]");
    assert_string_equal(r.word[1], "oops");
    assert_int_equal(c.cpus, 1);
    assert_int_equal(c.heap, 8192);
    assert_int_equal(c.mode, 1);
}

static void test_options_range_bounds(void **state)
{
    (void)state;
    struct option o[NOPTS];
    struct config c;
    struct reports r = {0};

    make_opts(o, &c);
    assert_int_equal(options_parse("cpus=64 heap=4G", o, NOPTS, record, &r), 0);
    assert_int_equal(c.cpus, 64);
    assert_true(c.heap == 1ull << 32);
    assert_int_equal(options_parse("heap=4095 heap=0x100000001", o, NOPTS, record, &r), 2);
    assert_string_equal(r.reason[0], "out of range [4096, 4294967296]");
    assert_string_equal(r.reason[1], "out of range [4096, 4294967296]");
    assert_true(c.heap == 1ull << 32);
    /* A number too big for 64 bits is malformed rather than out of range. */
    assert_int_equal(options_parse("cpus=99999999999999999999", o, NOPTS, record, &r), 1);
    assert_string_equal(r.reason[2], "not a number");
}

static void test_options_without_report(void **state)
{
    (void)state;
    struct option o[NOPTS];
    struct config c;

    make_opts(o, &c);
    assert_int_equal(options_parse("x y=1 cpus=2", o, NOPTS, NULL, NULL), 2);
    assert_int_equal(c.cpus, 2);
}

static const char *const traces[] = {"halt_poll", "ple", "sched", NULL};

static void test_options_flags(void **state)
{
    (void)state;
    unsigned mask = 0;
    struct reports r = {0};
    struct option o = {"trace", OPT_FLAGS, &mask, 0, 0, traces, "traces (none)"};

    assert_int_equal(options_parse("trace=sched,halt_poll", &o, 1, record, &r), 0);
    assert_int_equal(mask, 5);
    /* A repeated option adds to the mask. */
    assert_int_equal(options_parse("trace=ple", &o, 1, record, &r), 0);
    assert_int_equal(mask, 7);
    mask = 0;
    /* One bad item rejects the whole word and stores nothing. */
    assert_int_equal(
        options_parse("trace=ple,bogus trace=ple, trace=,ple trace=", &o, 1, record, &r), 4);
    assert_int_equal(mask, 0);
    assert_string_equal(r.word[0], "trace=ple,bogus");
    assert_string_equal(r.reason[0], "expected a comma-separated list of halt_poll, ple, sched");
    assert_string_equal(r.word[1], "trace=ple,");
    assert_string_equal(r.word[2], "trace=,ple");
    assert_string_equal(r.reason[3], "missing value");
}

/* OPT_INT: a signed plain number (KVM's timer_advance_ns=-1), its range read as signed. */
static void test_options_signed(void **state)
{
    (void)state;
    int64_t v = 0;
    struct reports r = {0};
    struct option o = {"advance", OPT_INT, &v, (uint64_t)-1, 1000, NULL, "advance (-1)"};
    char buf[32];

    assert_int_equal(options_parse("advance=-1", &o, 1, record, &r), 0);
    assert_int_equal(v, -1);
    option_format_value(&o, buf, sizeof(buf));
    assert_string_equal(buf, "-1");
    assert_int_equal(options_parse("advance=0x10", &o, 1, record, &r), 0);
    assert_int_equal(v, 16);
    assert_int_equal(options_parse("advance=-2 advance=1001 advance=--1 advance=- advance=1K", &o,
                                   1, record, &r),
                     5);
    assert_string_equal(r.reason[0], "out of range [-1, 1000]");
    assert_string_equal(r.reason[1], "out of range [-1, 1000]");
    assert_string_equal(r.reason[2], "not a number");
    assert_string_equal(r.reason[3], "not a number");
    assert_string_equal(r.reason[4], "not a number");
    assert_int_equal(v, 16);
}

/* The defaults the list of valid options prints, and a table that stops at its first bad word. */
static void test_options_format_and_stop(void **state)
{
    (void)state;
    struct option o[NOPTS];
    struct config c;
    struct reports r = {0};
    char buf[32];

    make_opts(o, &c);
    option_format_value(&o[0], buf, sizeof(buf));
    assert_string_equal(buf, "1");
    option_format_value(&o[3], buf, sizeof(buf));
    assert_string_equal(buf, "on");
    option_format_value(&o[4], buf, sizeof(buf));
    assert_string_equal(buf, "auto");

    const struct option_parser p = {o, NOPTS, "unknown key", true};
    assert_int_equal(options_parse_with(&p, "cpus=2 what=1 cpus=3", record, &r), 1);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.word[0], "what=1");
    assert_string_equal(r.reason[0], "unknown key");
    assert_int_equal(c.cpus, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_splits_words),
        cmocka_unit_test(test_next_empty_value),
        cmocka_unit_test(test_next_blank_string),
        cmocka_unit_test(test_token_eq),
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_parse_u64_rejects),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_size_rejects),
        cmocka_unit_test(test_options_all_valid),
        cmocka_unit_test(test_options_empty),
        cmocka_unit_test(test_options_bool_spellings),
        cmocka_unit_test(test_options_last_wins),
        cmocka_unit_test(test_options_each_error_kind),
        cmocka_unit_test(test_options_signed),
        cmocka_unit_test(test_options_errors_do_not_stop_parsing),
        cmocka_unit_test(test_options_range_bounds),
        cmocka_unit_test(test_options_without_report),
        cmocka_unit_test(test_options_flags),
        cmocka_unit_test(test_options_format_and_stop),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

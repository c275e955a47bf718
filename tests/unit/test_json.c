/* SPDX-License-Identifier: GPL-2.0-only */
/* The @event JSON builder: escaping, nesting, overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "lib/json.h"

static void test_flat_object(void **state)
{
    (void)state;
    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_u64(&j, "cpus", 4);
    json_str(&j, "virt", "svm");
    json_i64(&j, "vector", -1);
    json_bool(&j, "ok", true);
    json_hex(&j, "rip", 0x100e1b);
    assert_string_equal(
        json_end(&j),
        "{\"cpus\":4,\"virt\":\"svm\",\"vector\":-1,\"ok\":true,\"rip\":\"0x100e1b\"}");
}

static void test_nested_objects_close(void **state)
{
    (void)state;
    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_object(&j, "a");
    json_bool(&j, "x", false);
    json_close(&j);
    json_object(&j, "b");
    json_object(&j, "c");
    json_u64(&j, "n", 18446744073709551615ull);
    assert_string_equal(json_end(&j),
                        "{\"a\":{\"x\":false},\"b\":{\"c\":{\"n\":18446744073709551615}}}");
}

/*
 * An object nothing went into is taken out, its key and comma too; one with
 * keys stays, and so does an outer one emptied by that (it stays valid JSON).
 */
static void test_close_or_drop(void **state)
{
    (void)state;
    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_u64(&j, "a", 1);
    json_object(&j, "empty");
    json_close_or_drop(&j);
    json_object(&j, "b");
    json_u64(&j, "n", 2);
    json_close_or_drop(&j);
    json_object(&j, "c");
    json_object(&j, "d");
    json_close_or_drop(&j);
    json_close_or_drop(&j);
    assert_string_equal(json_end(&j), "{\"a\":1,\"b\":{\"n\":2},\"c\":{}}");
    json_begin(&j, buf, sizeof(buf));
    json_object(&j, "first");
    json_close_or_drop(&j);
    json_u64(&j, "x", 3);
    assert_string_equal(json_end(&j), "{\"x\":3}");
}

static void test_escaping(void **state)
{
    (void)state;
    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "s", "q\"b\\n\nt\t\x01\x7f\xc3");
    assert_string_equal(json_end(&j),
                        "{\"s\":\"q\\\"b\\\\n\\u000at\\u0009\\u0001\\u007f\\u00c3\"}");
}

static void test_strn_stops_at_length_or_nul(void **state)
{
    (void)state;
    char buf[64];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_strn(&j, "w", "bogus=1 rest", 7);
    json_strn(&j, "z", "ab\0cd", 5);
    assert_string_equal(json_end(&j), "{\"w\":\"bogus=1\",\"z\":\"ab\"}");
}

/* An object built earlier joins another's members, with commas where they belong. */
static void test_members_of_an_earlier_object(void **state)
{
    (void)state;
    char early[64], buf[128];
    struct json e, j;
    json_begin(&e, early, sizeof(early));
    json_object(&e, "pic");
    json_u64(&e, "raised", 3);
    json_close(&e);
    json_u64(&e, "n", 1);
    const char *object = json_end(&e);
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "scope", "devices");
    json_members(&j, object);
    json_u64(&j, "after", 2);
    assert_string_equal(json_end(&j),
                        "{\"scope\":\"devices\",\"pic\":{\"raised\":3},\"n\":1,\"after\":2}");
    json_begin(&j, buf, sizeof(buf));
    json_members(&j, "{}");
    json_members(&j, object);
    assert_string_equal(json_end(&j), "{\"pic\":{\"raised\":3},\"n\":1}");
    json_begin(&j, buf, 24); /* too long: the marker, as any overflow */
    json_members(&j, object);
    assert_string_equal(json_end(&j), "{\"truncated\":true}");
}

static void test_overflow_gives_valid_marker(void **state)
{
    (void)state;
    char buf[24];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "long", "this does not fit in the buffer");
    assert_string_equal(json_end(&j), "{\"truncated\":true}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_object),
        cmocka_unit_test(test_nested_objects_close),
        cmocka_unit_test(test_close_or_drop),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_strn_stops_at_length_or_nul),
        cmocka_unit_test(test_members_of_an_earlier_object),
        cmocka_unit_test(test_overflow_gives_valid_marker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

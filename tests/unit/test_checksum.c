/* SPDX-License-Identifier: GPL-2.0-only */
/* FNV-1a 64: published test vectors, chaining, and sensitivity to one byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "lib/checksum.h"

static uint64_t sum_of(const char *s)
{
    return checksum_update(CHECKSUM_INIT, s, strlen(s));
}

static void test_vectors(void **state)
{
    (void)state;
    assert_int_equal(sum_of(""), 0xcbf29ce484222325ull);
    assert_int_equal(sum_of("a"), 0xaf63dc4c8601ec8cull);
    assert_int_equal(sum_of("foobar"), 0x85944171f73967e8ull);
}

static void test_chaining_equals_one_pass(void **state)
{
    (void)state;
    uint64_t s = checksum_update(CHECKSUM_INIT, "foo", 3);
    assert_int_equal(checksum_update(s, "bar", 3), sum_of("foobar"));
}

static void test_every_byte_counts(void **state)
{
    (void)state;
    unsigned char buf[4096];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 7);
    uint64_t base = checksum_update(CHECKSUM_INIT, buf, sizeof(buf));
    for (size_t i = 0; i < sizeof(buf); i += 97) {
        buf[i] ^= 0x01;
        assert_int_not_equal(checksum_update(CHECKSUM_INIT, buf, sizeof(buf)), base);
        buf[i] ^= 0x01;
    }
    assert_int_equal(checksum_update(CHECKSUM_INIT, buf, sizeof(buf)), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_chaining_equals_one_pass),
        cmocka_unit_test(test_every_byte_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

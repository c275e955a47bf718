/* SPDX-License-Identifier: GPL-2.0-only */
/* The unbacked-memory policy: which accesses are emulated, what they read, what is counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/exit/unbacked.h"

static void test_policy(void **state)
{
    (void)state;
    assert_false(unbacked_emulated(UNBACKED_STOP, false));
    assert_false(unbacked_emulated(UNBACKED_STOP, true));
    assert_true(unbacked_emulated(UNBACKED_IGNORE, false));
    /* Open bus is never executed: a fetch stops the VM whatever the policy. */
    assert_false(unbacked_emulated(UNBACKED_IGNORE, true));
}

static void test_reads_all_ones_of_their_size(void **state)
{
    (void)state;
    struct unbacked_counts c = {0};
    const uint64_t want[9] = {[1] = 0xff, [2] = 0xffff, [4] = 0xffffffffull, [8] = ~0ull};
    for (unsigned size = 1; size <= 8; size *= 2) {
        struct mmio_op op = {.size = size};
        assert_int_equal(unbacked_access(&c, &op), want[size]);
    }
    assert_int_equal(c.reads, 4);
    assert_int_equal(c.writes, 0);
}

static void test_writes_dropped_and_counted(void **state)
{
    (void)state;
    struct unbacked_counts c = {5, 7};
    struct mmio_op op = {.size = 4, .write = true, .has_imm = true, .imm = 0x5a5a5a5a};
    assert_int_equal(unbacked_access(&c, &op), 0);
    op.size = 1;
    unbacked_access(&c, &op);
    assert_int_equal(c.writes, 9);
    assert_int_equal(c.reads, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy),
        cmocka_unit_test(test_reads_all_ones_of_their_size),
        cmocka_unit_test(test_writes_dropped_and_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

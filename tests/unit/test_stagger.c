/* SPDX-License-Identifier: GPL-2.0-only */
/* seed= (sched/stagger.c): bounded, repeatable, different per seed and per vCPU, off at seed 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "sched/stagger.h"

#define MAX_US 2000

static void test_seed_zero_or_max_zero_is_no_stagger(void **state)
{
    (void)state;
    for (unsigned v = 0; v < 64; v++) {
        assert_int_equal(stagger_us(0, 1, v, MAX_US), 0);
        assert_int_equal(stagger_us(7, 1, v, 0), 0);
    }
}

static void test_bounded_and_repeatable(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed < 50; seed++) {
        for (unsigned v = 0; v < 8; v++) {
            uint64_t d = stagger_us(seed, 2, v, MAX_US);
            assert_true(d <= MAX_US);
            assert_int_equal(d, stagger_us(seed, 2, v, MAX_US));
        }
    }
}

/* Another seed moves the vCPUs against each other: the benchmark's interleaving changes. */
static void test_seeds_and_vcpus_differ(void **state)
{
    (void)state;
    unsigned seeds_differing = 0, spread = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        uint64_t a[8], b[8];
        unsigned distinct = 0;
        for (unsigned v = 0; v < 8; v++) {
            a[v] = stagger_us(seed, 0, v, MAX_US);
            b[v] = stagger_us(seed + 1, 0, v, MAX_US);
            distinct += v && a[v] != a[0];
        }
        seeds_differing += memcmp(a, b, sizeof(a)) != 0;
        spread += distinct >= 6;
        /* Another VM of the same boot draws its own delays. */
        assert_true(stagger_us(seed, 0, 0, MAX_US) != stagger_us(seed, 1, 0, MAX_US) ||
                    stagger_us(seed, 0, 1, MAX_US) != stagger_us(seed, 1, 1, MAX_US));
    }
    assert_int_equal(seeds_differing, 20);
    assert_true(spread >= 18);
}

/* Roughly uniform over [0, max]: each quarter gets a fair share of 4000 draws. */
static void test_draws_cover_the_range(void **state)
{
    (void)state;
    unsigned quarter[4] = {0};
    for (uint64_t seed = 1; seed <= 500; seed++)
        for (unsigned v = 0; v < 8; v++)
            quarter[stagger_us(seed, 3, v, MAX_US) * 4 / (MAX_US + 1)]++;
    for (unsigned q = 0; q < 4; q++)
        assert_in_range(quarter[q], 800, 1200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_zero_or_max_zero_is_no_stagger),
        cmocka_unit_test(test_bounded_and_repeatable),
        cmocka_unit_test(test_seeds_and_vcpus_differ),
        cmocka_unit_test(test_draws_cover_the_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

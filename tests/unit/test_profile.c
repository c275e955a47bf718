/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest profiler's table (vmm/console/profile.c): grains, user samples, a full table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/console/profile.h"
#include "vmm/vm.h"

static char printed[64][1100];
static unsigned lines;

void console_event(const char *name, struct json *j)
{
    assert_true(lines < 64);
    snprintf(printed[lines++], sizeof(printed[0]), "@%s %s", name, json_end(j));
}

static struct profile *fresh(void)
{
    lines = 0;
    return calloc(1, sizeof(struct profile));
}

static uint64_t count_of(const struct profile *p, uint64_t rip)
{
    unsigned cursor = 0;
    for (const struct profile_slot *s = profile_next(p, &cursor); s; s = profile_next(p, &cursor))
        if (s->rip == rip)
            return s->count;
    return 0;
}

static void test_samples_count_by_grain(void **state)
{
    (void)state;
    struct profile *p = fresh();
    profile_add(p, 0xffffffff81000003, false);
    profile_add(p, 0xffffffff8100000f, false); /* the same 16 bytes */
    profile_add(p, 0xffffffff81000010, false);
    profile_add(p, 0x401000, true); /* user mode: counted, never placed */
    assert_int_equal(p->samples, 4);
    assert_int_equal(p->user, 1);
    assert_int_equal(p->lost, 0);
    assert_int_equal(count_of(p, 0xffffffff81000000), 2);
    assert_int_equal(count_of(p, 0xffffffff81000010), 1);
    assert_int_equal(count_of(p, 0x401000), 0);
    free(p);
}

static void test_a_full_table_counts_what_it_loses(void **state)
{
    (void)state;
    struct profile *p = fresh();
    for (uint64_t i = 0; i < PROFILE_SLOTS + 10; i++)
        profile_add(p, 0xffffffff81000000 + i * PROFILE_GRAIN, false);
    assert_int_equal(p->samples, PROFILE_SLOTS + 10);
    assert_int_equal(p->lost, 10);
    /* A grain already placed still counts. */
    profile_add(p, 0xffffffff81000000, false);
    assert_int_equal(count_of(p, 0xffffffff81000000), 2);
    unsigned cursor = 0, used = 0;
    while (profile_next(p, &cursor))
        used++;
    assert_int_equal(used, PROFILE_SLOTS);
    free(p);
}

static void test_print_lists_every_slot(void **state)
{
    (void)state;
    struct profile *p = fresh();
    for (uint64_t i = 0; i < 70; i++)
        for (uint64_t n = 0; n <= i % 3; n++)
            profile_add(p, 0xffffffff81000000 + i * 0x40, false);
    struct vm vm;
    memset(&vm, 0, sizeof(vm));
    strcpy(vm.cfg.name, "lx");
    profile_print(&vm, p, 1000);
    assert_string_equal(printed[0], "@profile {\"vm\":\"lx\",\"period_us\":1000,\"grain\":16,"
                                    "\"samples\":139,\"user\":0,\"lost\":0}");
    /* 70 RIPs, 32 to a line, every count where it belongs. */
    assert_int_equal(lines, 4);
    uint64_t total = 0;
    for (unsigned l = 1; l < lines; l++) {
        assert_true(strncmp(printed[l], "@profile_rips {\"vm\":\"lx\",\"rips\":{", 33) == 0);
        assert_true(strlen(printed[l]) < 1024);
        for (char *c = strchr(printed[l], ':'); c; c = strchr(c + 1, ':'))
            if (c[-1] == '"' && c[1] != '"' && c[1] != '{')
                total += strtoull(c + 1, NULL, 10);
    }
    assert_int_equal(total, 139);
    unsigned found = 0; /* the second RIP, sampled twice */
    for (unsigned l = 1; l < lines; l++)
        for (const char *c = strstr(printed[l], "\"ffffffff81000040\":2"); c; c = NULL)
            found += c[20] == ',' || c[20] == '}';
    assert_int_equal(found, 1);
    free(p);
}

static void test_no_profile_prints_nothing(void **state)
{
    (void)state;
    lines = 0;
    struct vm vm;
    memset(&vm, 0, sizeof(vm));
    profile_print(&vm, NULL, 1000);
    assert_int_equal(lines, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_count_by_grain),
        cmocka_unit_test(test_a_full_table_counts_what_it_loses),
        cmocka_unit_test(test_print_lists_every_slot),
        cmocka_unit_test(test_no_profile_prints_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

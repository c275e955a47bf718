/* SPDX-License-Identifier: GPL-2.0-only */
/* Per-CPU stacks and their guard pages, on host memory standing in for pages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/mm.h"
#include "arch/x86/percpu.h"
#include "arch/x86/trap.h"

#define MAX_UNMAPPED 8

static uint64_t unmapped[MAX_UNMAPPED];
static unsigned unmapped_count;
static void *allocations[16];
static unsigned allocation_count;

void *page_alloc_zeroed(uint64_t npages)
{
    void *p = aligned_alloc(PAGE_SIZE, npages * PAGE_SIZE);
    memset(p, 0, npages * PAGE_SIZE);
    allocations[allocation_count++] = p;
    return p;
}

static bool unmap_fails;

int mm_unmap_page(void *page)
{
    if (unmap_fails)
        return -1;
    assert_true(unmapped_count < MAX_UNMAPPED);
    unmapped[unmapped_count++] = (uint64_t)page;
    return 0;
}

void idt_load(void) {}

static int teardown(void **state)
{
    (void)state;
    while (allocation_count)
        free(allocations[--allocation_count]);
    unmapped_count = 0;
    unmap_fails = false;
    return 0;
}

static void assert_guarded(const struct percpu *p, uint64_t stack_base, const char *name)
{
    uint64_t guard = stack_base - PAGE_SIZE, hit = 0;
    bool unmapped_it = false;
    for (unsigned i = 0; i < unmapped_count; i++)
        unmapped_it |= unmapped[i] == guard;
    assert_true(unmapped_it);
    assert_string_equal(percpu_guard_hit(p, guard, &hit), name);
    assert_int_equal(hit, guard);
    assert_string_equal(percpu_guard_hit(p, stack_base - 8, &hit), name);
    assert_int_equal(hit, guard);
    /* The stack itself is no guard. */
    assert_null(percpu_guard_hit(p, stack_base, &hit));
    assert_true(percpu_on_stack(p, stack_base, 8));
    assert_false(percpu_on_stack(p, stack_base - 8, 8));
}

static void test_every_stack_has_an_unmapped_guard(void **state)
{
    (void)state;
    const char *why = 0;
    struct percpu *p = percpu_create(1, 7, NULL, &why);
    assert_non_null(p);
    assert_int_equal(unmapped_count, 1 + IST_COUNT);
    assert_int_equal(p->stack_top - p->stack_base, KERNEL_STACK_SIZE);
    assert_guarded(p, p->stack_base, "kernel");
    assert_guarded(p, p->ist_base[IST_NMI - 1], "nmi");
    assert_guarded(p, p->ist_base[IST_DOUBLE_FAULT - 1], "double_fault");
    assert_guarded(p, p->ist_base[IST_MACHINE_CHECK - 1], "machine_check");
    assert_int_equal(p->tss.ist[IST_NMI - 1], p->ist_base[IST_NMI - 1] + IST_STACK_SIZE);
    uint64_t hit;
    assert_null(percpu_guard_hit(p, (uint64_t)p, &hit));
    assert_null(percpu_guard_hit(p, p->stack_top, &hit));
}

static void test_a_given_stack_loses_the_page_below(void **state)
{
    (void)state;
    char *pages = page_alloc_zeroed(1 + KERNEL_STACK_SIZE / PAGE_SIZE);
    const char *why = 0;
    struct percpu *p = percpu_create(0, 0, pages + PAGE_SIZE, &why);
    assert_non_null(p);
    assert_int_equal(p->stack_base, (uint64_t)pages + PAGE_SIZE);
    assert_int_equal(unmapped[0], (uint64_t)pages);
    assert_guarded(p, p->stack_base, "kernel");
}

/* A guard that cannot be unmapped says so, not "out of memory". */
static void test_a_guard_that_stays_mapped_is_named(void **state)
{
    (void)state;
    const char *why = 0;
    unmap_fails = true;
    assert_null(percpu_create(1, 7, NULL, &why));
    assert_string_equal(why, "a stack's guard page could not be unmapped");
    char *pages = page_alloc_zeroed(1 + KERNEL_STACK_SIZE / PAGE_SIZE);
    why = 0;
    assert_null(percpu_create(0, 0, pages + PAGE_SIZE, &why));
    assert_string_equal(why, "a stack's guard page could not be unmapped");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_every_stack_has_an_unmapped_guard, teardown),
        cmocka_unit_test_teardown(test_a_given_stack_loses_the_page_below, teardown),
        cmocka_unit_test_teardown(test_a_guard_that_stays_mapped_is_named, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

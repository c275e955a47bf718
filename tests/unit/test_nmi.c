/* SPDX-License-Identifier: GPL-2.0-only */
/* NMIs waiting for a vCPU: how many the hardware can hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/vcpu/nmi.h"

static void test_two_back_to_back_both_wait(void **state)
{
    (void)state;
    struct nmi_state n = {0};
    assert_false(nmi_waiting(&n));
    nmi_send(&n);
    nmi_send(&n);
    assert_true(nmi_waiting(&n));
    nmi_process(&n, false);
    assert_int_equal(n.pending, 2); /* one to inject, one latched behind it */
    nmi_injected(&n);
    /* The latched one stays while the first is in service. */
    nmi_process(&n, true);
    assert_int_equal(n.pending, 1);
    nmi_injected(&n);
    assert_false(nmi_waiting(&n));
}

static void test_more_collapse(void **state)
{
    (void)state;
    struct nmi_state n = {0};
    for (int i = 0; i < 5; i++)
        nmi_send(&n);
    nmi_process(&n, false);
    assert_int_equal(n.pending, 2);
    assert_int_equal(n.queued, 0);
}

static void test_one_latched_while_in_service(void **state)
{
    (void)state;
    struct nmi_state n = {0};
    nmi_send(&n);
    nmi_send(&n);
    nmi_process(&n, true);
    assert_int_equal(n.pending, 1);
    /* Sent later while still in service: nothing more can be latched. */
    nmi_send(&n);
    nmi_process(&n, true);
    assert_int_equal(n.pending, 1);
    /* Once the handler is done, a new one can join the latched one. */
    nmi_send(&n);
    nmi_process(&n, false);
    assert_int_equal(n.pending, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_back_to_back_both_wait),
        cmocka_unit_test(test_more_collapse),
        cmocka_unit_test(test_one_latched_while_in_service),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

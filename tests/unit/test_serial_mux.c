/* SPDX-License-Identifier: GPL-2.0-only */
/* The COM1 input mux: keys by default, Ctrl-A <n> to a VM, Ctrl-A c back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/console/serial_mux.h"

static struct serial_mux_result feed(struct serial_mux *m, char c)
{
    return serial_mux_feed(m, c);
}

static void test_keys_by_default(void **state)
{
    (void)state;
    struct serial_mux m;
    serial_mux_init(&m);
    struct serial_mux_result r = feed(&m, 's');
    assert_int_equal(r.event, MUX_KEY);
    assert_int_equal(r.c, 's');
}

static void test_select_a_vm_and_back(void **state)
{
    (void)state;
    struct serial_mux m;
    serial_mux_init(&m);
    assert_int_equal(feed(&m, 0x01).event, MUX_PENDING);
    struct serial_mux_result r = feed(&m, '3');
    assert_int_equal(r.event, MUX_SELECT_VM);
    assert_int_equal(r.vm, 3);
    r = feed(&m, 'q');
    assert_int_equal(r.event, MUX_GUEST); /* a guest's q, not the console's */
    assert_int_equal(r.vm, 3);
    assert_int_equal(r.c, 'q');
    assert_int_equal(feed(&m, 0x01).event, MUX_PENDING);
    assert_int_equal(feed(&m, 'c').event, MUX_SELECT_KEYS);
    r = feed(&m, 'q');
    assert_int_equal(r.event, MUX_KEY);
}

static void test_escaped_escape_is_passed_on(void **state)
{
    (void)state;
    struct serial_mux m;
    serial_mux_init(&m);
    feed(&m, 0x01);
    feed(&m, '0');
    feed(&m, 0x01);
    struct serial_mux_result r = feed(&m, 0x01);
    assert_int_equal(r.event, MUX_GUEST);
    assert_int_equal(r.c, 0x01);
    assert_int_equal(feed(&m, 'x').event, MUX_GUEST); /* the escape is over */
}

static void test_unknown_escape_is_dropped(void **state)
{
    (void)state;
    struct serial_mux m;
    serial_mux_init(&m);
    feed(&m, 0x01);
    struct serial_mux_result r = feed(&m, 'z');
    assert_int_equal(r.event, MUX_DROPPED);
    assert_int_equal(feed(&m, 'z').event, MUX_KEY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_by_default),
        cmocka_unit_test(test_select_a_vm_and_back),
        cmocka_unit_test(test_escaped_escape_is_passed_on),
        cmocka_unit_test(test_unknown_escape_is_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

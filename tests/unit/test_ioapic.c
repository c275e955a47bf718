/* SPDX-License-Identifier: GPL-2.0-only */
/* The I/O APIC: registers, redirection, edge and level triggering, remote IRR and EOI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/dev/vioapic.h"

static void select_write(struct ioapic *io, uint32_t reg, uint32_t value, struct ioapic_msg *m,
                         bool *fired)
{
    assert_false(ioapic_write(io, IOAPIC_REGSEL, reg, m));
    *fired = ioapic_write(io, IOAPIC_WINDOW, value, m);
}

static uint32_t select_read(struct ioapic *io, uint32_t reg)
{
    struct ioapic_msg m;
    ioapic_write(io, IOAPIC_REGSEL, reg, &m);
    return ioapic_read(io, IOAPIC_WINDOW);
}

static void test_identification_and_reset(void **state)
{
    (void)state;
    struct ioapic io;
    ioapic_reset(&io);
    assert_int_equal(select_read(&io, 1), 0x170020); /* 24 pins, version 0x20 */
    bool fired;
    struct ioapic_msg m;
    select_write(&io, 0, 0x0f000000 | 0xff, &m, &fired);
    assert_int_equal(select_read(&io, 0), 0x0f000000);
    for (unsigned pin = 0; pin < IOAPIC_PINS; pin++)
        assert_int_equal(select_read(&io, 0x10 + 2 * pin), IOAPIC_MASKED);
    assert_int_equal(ioapic_read(&io, IOAPIC_REGSEL), 0x10 + 2 * 23);
    assert_int_equal(select_read(&io, 0x40), 0); /* past the table */
}

static void test_edge_pin_sends_on_rising_edges_only(void **state)
{
    (void)state;
    struct ioapic io;
    struct ioapic_msg m;
    bool fired;
    ioapic_reset(&io);
    assert_false(ioapic_set_line(&io, 4, true, &m)); /* masked */
    assert_false(ioapic_set_line(&io, 4, false, &m));
    select_write(&io, 0x18, 0x30 | IOAPIC_LOGICAL | (1u << 8), &m, &fired);
    select_write(&io, 0x19, 0x03000000, &m, &fired);
    assert_false(fired);
    assert_true(ioapic_set_line(&io, 4, true, &m));
    assert_int_equal(m.vector, 0x30);
    assert_int_equal(m.mode, 1);
    assert_true(m.logical);
    assert_false(m.level);
    assert_int_equal(m.dest, 3);
    assert_false(ioapic_set_line(&io, 4, true, &m)); /* still high: no new edge */
    assert_false(ioapic_set_line(&io, 4, false, &m));
    assert_true(ioapic_set_line(&io, 4, true, &m));
    /* An edge pin never shows remote IRR, and EOIs do nothing to it. */
    assert_false(select_read(&io, 0x18) & IOAPIC_REMOTE_IRR);
    struct ioapic_msg sent[IOAPIC_PINS];
    assert_int_equal(ioapic_eoi(&io, 0x30, sent), 0);
}

static void test_level_pin_waits_for_eoi(void **state)
{
    (void)state;
    struct ioapic io;
    struct ioapic_msg m;
    bool fired;
    ioapic_reset(&io);
    select_write(&io, 0x10 + 2 * 9, 0x41 | IOAPIC_LEVEL, &m, &fired);
    assert_false(fired);
    assert_true(ioapic_set_line(&io, 9, true, &m));
    assert_int_equal(m.vector, 0x41);
    assert_true(m.level);
    assert_true(select_read(&io, 0x10 + 2 * 9) & IOAPIC_REMOTE_IRR);
    assert_false(ioapic_set_line(&io, 9, true, &m)); /* remote IRR holds it */
    /* An EOI of another vector does nothing; of this one, the line still high: again. */
    struct ioapic_msg sent[IOAPIC_PINS];
    assert_int_equal(ioapic_eoi(&io, 0x42, sent), 0);
    assert_int_equal(ioapic_eoi(&io, 0x41, sent), 1);
    assert_int_equal(sent[0].vector, 0x41);
    assert_true(select_read(&io, 0x10 + 2 * 9) & IOAPIC_REMOTE_IRR);
    /* Line low, then EOI: remote IRR clears and nothing is sent. */
    assert_false(ioapic_set_line(&io, 9, false, &m));
    assert_int_equal(ioapic_eoi(&io, 0x41, sent), 0);
    assert_false(select_read(&io, 0x10 + 2 * 9) & IOAPIC_REMOTE_IRR);
    /* The guest cannot write remote IRR or delivery status. */
    select_write(&io, 0x10 + 2 * 9, 0x41 | IOAPIC_LEVEL | IOAPIC_REMOTE_IRR | IOAPIC_PENDING, &m,
                 &fired);
    assert_false(select_read(&io, 0x10 + 2 * 9) & (IOAPIC_REMOTE_IRR | IOAPIC_PENDING));
}

/* Pins sharing a vector: one EOI clears every remote IRR and each high line sends once. */
static void test_eoi_reaches_every_pin_of_its_vector(void **state)
{
    (void)state;
    struct ioapic io;
    struct ioapic_msg m, sent[IOAPIC_PINS];
    bool fired;
    ioapic_reset(&io);
    const unsigned pins[] = {3, 10, 17};
    for (unsigned i = 0; i < 3; i++) {
        select_write(&io, 0x10 + 2 * pins[i], 0x61 | IOAPIC_LEVEL, &m, &fired);
        select_write(&io, 0x11 + 2 * pins[i], (uint32_t)i << 24, &m, &fired);
        assert_true(ioapic_set_line(&io, pins[i], true, &m));
    }
    assert_false(ioapic_set_line(&io, 10, false, &m)); /* pin 10's device is done */
    assert_int_equal(ioapic_eoi(&io, 0x61, sent), 2);
    assert_int_equal(sent[0].dest, 0); /* pin 3 */
    assert_int_equal(sent[1].dest, 2); /* pin 17 */
    assert_false(select_read(&io, 0x10 + 2 * 10) & IOAPIC_REMOTE_IRR);
    assert_true(select_read(&io, 0x10 + 2 * 3) & IOAPIC_REMOTE_IRR);
    assert_true(select_read(&io, 0x10 + 2 * 17) & IOAPIC_REMOTE_IRR);
    /* Until the next EOI, nothing more goes out. */
    assert_false(ioapic_set_line(&io, 3, true, &m));
}

static void test_unmasking_a_high_level_line_sends(void **state)
{
    (void)state;
    struct ioapic io;
    struct ioapic_msg m;
    bool fired;
    ioapic_reset(&io);
    select_write(&io, 0x10 + 2 * 5, 0x50 | IOAPIC_LEVEL | IOAPIC_MASKED, &m, &fired);
    assert_false(ioapic_set_line(&io, 5, true, &m));
    select_write(&io, 0x10 + 2 * 5, 0x50 | IOAPIC_LEVEL, &m, &fired);
    assert_true(fired);
    assert_int_equal(m.vector, 0x50);
    assert_false(ioapic_set_line(&io, 30, true, &m)); /* no such pin */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identification_and_reset),
        cmocka_unit_test(test_edge_pin_sends_on_rising_edges_only),
        cmocka_unit_test(test_level_pin_waits_for_eoi),
        cmocka_unit_test(test_eoi_reaches_every_pin_of_its_vector),
        cmocka_unit_test(test_unmasking_a_high_level_line_sends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

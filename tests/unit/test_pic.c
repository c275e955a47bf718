/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 8259A pair (vmm/dev/vpic.c): the initialization sequence, masks,
 * priorities and ISR blocking, EOIs of every kind, auto-EOI, edge and
 * level triggering, the cascade, the IRR/ISR reads, poll mode, spurious
 * acknowledges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/dev/vpic.h"

#define EOI          0x20
#define SPECIFIC_EOI 0x60
#define READ_IRR     0x0a
#define READ_ISR     0x0b
#define MASTER_BASE  0x20
#define SLAVE_BASE   0x28

static struct vpic p;

/* A PC's initialization: ICW1 (edge, cascade, ICW4), the bases, the cascade, ICW4. */
static void init(uint8_t icw4)
{
    vpic_write(&p, PIC_MASTER, 0x11);
    vpic_write(&p, PIC_MASTER + 1, MASTER_BASE);
    vpic_write(&p, PIC_MASTER + 1, 1u << PIC_CASCADE_IRQ);
    vpic_write(&p, PIC_MASTER + 1, icw4);
    vpic_write(&p, PIC_SLAVE, 0x11);
    vpic_write(&p, PIC_SLAVE + 1, SLAVE_BASE);
    vpic_write(&p, PIC_SLAVE + 1, PIC_CASCADE_IRQ);
    vpic_write(&p, PIC_SLAVE + 1, icw4);
}

static int setup(void **state)
{
    (void)state;
    vpic_reset(&p);
    init(0x01);
    return 0;
}

static void pulse(unsigned irq)
{
    vpic_set_irq(&p, irq, true);
    vpic_set_irq(&p, irq, false);
}

static uint8_t irr(uint16_t chip)
{
    vpic_write(&p, chip, READ_IRR);
    return vpic_read(&p, chip);
}

static uint8_t isr(uint16_t chip)
{
    vpic_write(&p, chip, READ_ISR);
    return vpic_read(&p, chip);
}

static void test_power_on(void **state)
{
    (void)state;
    vpic_reset(&p);
    assert_false(p.output);
    assert_int_equal(vpic_read(&p, PIC_MASTER + 1), 0);
    assert_int_equal(vpic_read(&p, PIC_ELCR_MASTER), 0);
    /* Initialized with base 0, nothing masked: IRQ 3 comes as vector 3. */
    pulse(3);
    assert_true(p.output);
    assert_int_equal(vpic_ack(&p), 3);
    assert_int_equal(vpic_read(&p, 0x22), 0xff); /* not a PIC port */
}

/* As SeaBIOS leaves them (issue 37): IRQ 0 at vector 8, the slave's at 0x70, only IRQ 0 and 2 open.
 */
static void test_bios_state(void **state)
{
    (void)state;
    vpic_reset(&p);
    vpic_bios_state(&p);
    assert_int_equal(vpic_read(&p, PIC_MASTER + 1), 0xfa);
    assert_int_equal(vpic_read(&p, PIC_SLAVE + 1), 0xff);
    pulse(0);
    assert_true(p.output);
    assert_int_equal(vpic_ack(&p), 0x08);
    vpic_write(&p, PIC_MASTER, EOI);
    pulse(1); /* masked: waits in the IRR */
    assert_false(p.output);
    assert_int_equal(irr(PIC_MASTER), 0x02);
    vpic_write(&p, PIC_SLAVE + 1, 0xfe);
    pulse(8);
    assert_int_equal(vpic_ack(&p), 0x70);
}

/* The data port is ICW2, ICW3, ICW4 in turn, then the IMR; the bases give the vectors. */
static void test_initialization_sequence(void **state)
{
    (void)state;
    vpic_write(&p, PIC_MASTER + 1, 0xfb);
    assert_int_equal(vpic_read(&p, PIC_MASTER + 1), 0xfb);
    vpic_write(&p, PIC_MASTER, 0x11);
    assert_int_equal(vpic_read(&p, PIC_MASTER + 1), 0); /* ICW1 cleared the IMR */
    vpic_write(&p, PIC_MASTER + 1, 0x08 | 0x05);        /* ICW2: bits 2:0 ignored */
    vpic_write(&p, PIC_MASTER + 1, 0x04);               /* ICW3 */
    assert_int_equal(vpic_read(&p, PIC_MASTER + 1), 0);
    vpic_write(&p, PIC_MASTER + 1, 0x01); /* ICW4 */
    vpic_write(&p, PIC_MASTER + 1, 0xfe); /* OCW1 */
    assert_int_equal(vpic_read(&p, PIC_MASTER + 1), 0xfe);
    pulse(0);
    assert_int_equal(vpic_ack(&p), 0x08);
    /* Single mode without ICW4: ICW2 ends it; no ICW4 means no auto-EOI. */
    vpic_write(&p, PIC_SLAVE, 0x12);
    vpic_write(&p, PIC_SLAVE + 1, 0x70);
    vpic_write(&p, PIC_SLAVE + 1, 0xaa);
    assert_int_equal(vpic_read(&p, PIC_SLAVE + 1), 0xaa);
    assert_false(p.chip[1].auto_eoi);
}

static void test_mask_keeps_request_in_irr(void **state)
{
    (void)state;
    vpic_write(&p, PIC_MASTER + 1, 0x01);
    pulse(0);
    assert_false(p.output);
    assert_int_equal(irr(PIC_MASTER), 0x01);
    assert_int_equal(isr(PIC_MASTER), 0);
    vpic_write(&p, PIC_MASTER + 1, 0x00);
    assert_true(p.output);
    assert_int_equal(vpic_ack(&p), MASTER_BASE);
    assert_int_equal(irr(PIC_MASTER), 0);
    assert_int_equal(isr(PIC_MASTER), 0x01);
    assert_false(p.output);
    assert_int_equal(p.stats.raised, 1);
    assert_int_equal(p.stats.acked, 1);
}

/* A lower priority waits for the higher one in service; a higher one interrupts it. */
static void test_priority_and_isr_blocking(void **state)
{
    (void)state;
    pulse(3);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 3);
    pulse(5);
    assert_false(p.output); /* 5 is below 3, which is in service */
    pulse(1);
    assert_true(p.output);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 1);
    assert_int_equal(isr(PIC_MASTER), 0x0a);
    /* A non-specific EOI ends the highest in service: 1, then 3; then 5 comes. */
    vpic_write(&p, PIC_MASTER, EOI);
    assert_int_equal(isr(PIC_MASTER), 0x08);
    assert_false(p.output);
    vpic_write(&p, PIC_MASTER, EOI);
    assert_true(p.output);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 5);
    /* Two at once: the higher first. */
    vpic_write(&p, PIC_MASTER, EOI);
    pulse(6);
    pulse(4);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 4);
    vpic_write(&p, PIC_MASTER, EOI);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 6);
}

static void test_specific_eoi(void **state)
{
    (void)state;
    pulse(4);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 4);
    pulse(1);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 1);
    vpic_write(&p, PIC_MASTER, SPECIFIC_EOI | 4); /* the lower one, not the highest */
    assert_int_equal(isr(PIC_MASTER), 0x02);
    vpic_write(&p, PIC_MASTER, SPECIFIC_EOI | 1);
    assert_int_equal(isr(PIC_MASTER), 0);
}

/* Rotation: the IRQ just served becomes the lowest priority. */
static void test_rotation(void **state)
{
    (void)state;
    pulse(1);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 1);
    vpic_write(&p, PIC_MASTER, 0xa0); /* rotate on non-specific EOI */
    pulse(0);
    pulse(3);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 3); /* 2..7 come before 0 and 1 now */
    vpic_write(&p, PIC_MASTER, 0xe0 | 3);            /* rotate on specific EOI of 3 */
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 0);
    vpic_write(&p, PIC_MASTER, EOI);
    vpic_write(&p, PIC_MASTER, 0xc0 | 7); /* set priority: 7 lowest, 0 highest again */
    pulse(7);
    pulse(2 + 4);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 6);
}

static void test_auto_eoi(void **state)
{
    (void)state;
    init(0x03);
    pulse(3);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 3);
    assert_int_equal(isr(PIC_MASTER), 0); /* never in service */
    pulse(5);
    assert_true(p.output); /* nothing holds 5 back */
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 5);
    /* Rotate in auto-EOI mode: each IRQ taken becomes the lowest priority. */
    vpic_write(&p, PIC_MASTER, 0x80);
    pulse(1);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 1);
    pulse(0);
    pulse(3);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 3);
    /* ICW1 without ICW4 turns auto-EOI off. */
    vpic_write(&p, PIC_MASTER, 0x10);
    vpic_write(&p, PIC_MASTER + 1, MASTER_BASE);
    vpic_write(&p, PIC_MASTER + 1, 0x04);
    pulse(0);
    assert_int_equal(vpic_ack(&p), MASTER_BASE);
    assert_int_equal(isr(PIC_MASTER), 0x01);
}

/* An edge is one request however long the line stays high; a level requests while high. */
static void test_edge_and_level(void **state)
{
    (void)state;
    vpic_set_irq(&p, 5, true);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 5);
    vpic_write(&p, PIC_MASTER, EOI);
    assert_false(p.output); /* still high, no new edge */
    vpic_set_irq(&p, 5, true);
    assert_false(p.output);
    vpic_set_irq(&p, 5, false);
    assert_int_equal(irr(PIC_MASTER), 0);
    /* Level: IRQ 5 asked for in the ELCR. IRQs 0-2 cannot be. */
    vpic_write(&p, PIC_ELCR_MASTER, 0xff);
    assert_int_equal(vpic_read(&p, PIC_ELCR_MASTER), 0xf8);
    vpic_set_irq(&p, 5, true);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 5);
    assert_int_equal(irr(PIC_MASTER), 0x20); /* still requested */
    assert_false(p.output);                  /* but in service */
    vpic_write(&p, PIC_MASTER, EOI);
    assert_true(p.output); /* the line is still high: again */
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 5);
    vpic_set_irq(&p, 5, false);
    vpic_write(&p, PIC_MASTER, EOI);
    assert_false(p.output);
    assert_int_equal(irr(PIC_MASTER), 0);
    /* A level line that drops before its acknowledge leaves a spurious IRQ 7. */
    vpic_set_irq(&p, 6, true);
    assert_true(p.output);
    vpic_set_irq(&p, 6, false);
    assert_false(p.output);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 7);
    assert_int_equal(p.stats.spurious, 1);
    assert_int_equal(isr(PIC_MASTER), 0);
    /* The slave's mask: 8 and 13 stay edge. */
    vpic_write(&p, PIC_ELCR_SLAVE, 0xff);
    assert_int_equal(vpic_read(&p, PIC_ELCR_SLAVE), 0xde);
}

/* Slave IRQs come through the master's IRQ 2 with the slave's vectors; each chip takes its EOI. */
static void test_cascade(void **state)
{
    (void)state;
    pulse(10);
    assert_true(p.output);
    assert_int_equal(irr(PIC_MASTER), 0x04);
    assert_int_equal(vpic_ack(&p), SLAVE_BASE + 2);
    assert_int_equal(isr(PIC_MASTER), 0x04);
    assert_int_equal(isr(PIC_SLAVE), 0x04);
    pulse(9);
    assert_false(p.output); /* the master's IRQ 2 is in service */
    pulse(1);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 1); /* above the cascade */
    vpic_write(&p, PIC_MASTER, EOI);
    vpic_write(&p, PIC_SLAVE, EOI);
    vpic_write(&p, PIC_MASTER, EOI);
    assert_true(p.output);
    assert_int_equal(vpic_ack(&p), SLAVE_BASE + 1);
    vpic_write(&p, PIC_SLAVE, EOI);
    vpic_write(&p, PIC_MASTER, EOI);
    /* The slave's mask; the master's mask of IRQ 2 holds every slave IRQ. */
    vpic_write(&p, PIC_MASTER + 1, 0x04);
    pulse(15);
    assert_false(p.output);
    assert_int_equal(irr(PIC_SLAVE), 0x80);
    vpic_write(&p, PIC_MASTER + 1, 0x00);
    assert_int_equal(vpic_ack(&p), SLAVE_BASE + 7);
    vpic_write(&p, PIC_SLAVE, EOI);
    vpic_write(&p, PIC_MASTER, EOI);
    /* A slave request gone before the acknowledge: the slave's spurious IRQ 7 (IRQ 15). */
    vpic_write(&p, PIC_ELCR_SLAVE, 0x02);
    vpic_set_irq(&p, 9, true);
    vpic_set_irq(&p, 9, false);
    assert_true(p.output); /* the master latched its edge */
    assert_int_equal(vpic_ack(&p), SLAVE_BASE + 7);
    assert_int_equal(isr(PIC_SLAVE), 0);
    assert_int_equal(p.stats.spurious, 1);
}

/* A request with nothing behind it at the acknowledge: vector base + 7, nothing in service. */
static void test_spurious(void **state)
{
    (void)state;
    assert_false(p.output);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 7);
    assert_int_equal(isr(PIC_MASTER), 0);
    assert_int_equal(p.stats.spurious, 1);
    assert_int_equal(p.stats.acked, 0);
}

static void test_poll(void **state)
{
    (void)state;
    vpic_write(&p, PIC_MASTER, 0x0c);
    assert_int_equal(vpic_read(&p, PIC_MASTER), 0); /* nothing */
    pulse(4);
    vpic_write(&p, PIC_MASTER, 0x0c);
    assert_int_equal(vpic_read(&p, PIC_MASTER), 0x84);
    assert_int_equal(isr(PIC_MASTER), 0x10);
    assert_false(p.output);
    /* The next read of the command port is the selected register again. */
    assert_int_equal(vpic_read(&p, PIC_MASTER), 0x10);
}

/* Special mask mode: a masked IRQ in service no longer holds lower ones back. */
static void test_special_mask(void **state)
{
    (void)state;
    pulse(2 + 1);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 3);
    pulse(6);
    assert_false(p.output);
    vpic_write(&p, PIC_MASTER + 1, 0x08);
    vpic_write(&p, PIC_MASTER, 0x68); /* set special mask */
    assert_true(p.output);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 6);
    vpic_write(&p, PIC_MASTER, 0x48); /* reset special mask */
    assert_int_equal(isr(PIC_MASTER), 0x48);
}

/* ICW1 resets the chip: edge requests and what was in service are gone. */
static void test_icw1_resets(void **state)
{
    (void)state;
    vpic_write(&p, PIC_MASTER + 1, 0x10);
    pulse(4);
    pulse(5);
    assert_int_equal(vpic_ack(&p), MASTER_BASE + 5);
    assert_int_equal(isr(PIC_MASTER), 0x20); /* the command port reads the ISR now */
    init(0x01);
    /* ICW1 selected the IRR again, and it is empty, as the ISR is. */
    assert_int_equal(vpic_read(&p, PIC_MASTER), 0);
    assert_int_equal(isr(PIC_MASTER), 0);
    assert_false(p.output);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_on),
        cmocka_unit_test_setup(test_initialization_sequence, setup),
        cmocka_unit_test(test_bios_state),
        cmocka_unit_test_setup(test_mask_keeps_request_in_irr, setup),
        cmocka_unit_test_setup(test_priority_and_isr_blocking, setup),
        cmocka_unit_test_setup(test_specific_eoi, setup),
        cmocka_unit_test_setup(test_rotation, setup),
        cmocka_unit_test_setup(test_auto_eoi, setup),
        cmocka_unit_test_setup(test_edge_and_level, setup),
        cmocka_unit_test_setup(test_cascade, setup),
        cmocka_unit_test_setup(test_spurious, setup),
        cmocka_unit_test_setup(test_poll, setup),
        cmocka_unit_test_setup(test_special_mask, setup),
        cmocka_unit_test_setup(test_icw1_resets, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/vpic.h"

#include "lib/string.h"
#include "stats/stats.h"

#define ICW1        0x10 /* command port: bit 4 starts initialization */
#define ICW1_ICW4   0x01
#define ICW1_SINGLE 0x02
#define OCW3        0x08 /* command port, bit 4 clear: bit 3 tells OCW3 from OCW2 */
#define OCW3_POLL   0x04
#define OCW3_RR     0x02 /* bit 0 selects the register */
#define OCW3_ESMM   0x40 /* bit 5 sets or clears special mask mode */
#define ICW4_AEOI   0x02
#define NO_IRQ      8

enum ocw2 {
    OCW2_ROTATE_AEOI_CLEAR = 0,
    OCW2_EOI = 1,
    OCW2_SPECIFIC_EOI = 3,
    OCW2_ROTATE_AEOI_SET = 4,
    OCW2_ROTATE_EOI = 5,
    OCW2_SET_PRIORITY = 6,
    OCW2_ROTATE_SPECIFIC_EOI = 7,
};

/* The highest-priority IRQ of mask as a priority (0 highest, NO_IRQ for none). */
static unsigned priority(const struct vpic_chip *c, uint8_t mask)
{
    for (unsigned p = 0; p < 8; p++)
        if (mask & (1u << ((p + c->lowest) & 7)))
            return p;
    return NO_IRQ;
}

static unsigned irq_of(const struct vpic_chip *c, unsigned prio)
{
    return (prio + c->lowest) & 7;
}

/* The IRQ this chip asks INT for, or -1. */
static int pending(const struct vpic_chip *c)
{
    unsigned want = priority(c, c->irr & ~c->imr);
    if (want == NO_IRQ)
        return -1;
    /* In special mask mode a masked IRQ in service holds nothing back. */
    uint8_t in_service = c->special_mask ? c->isr & ~c->imr : c->isr;
    return want < priority(c, in_service) ? (int)irq_of(c, want) : -1;
}

/* A line changed (or was driven again); true if a request was latched. */
static bool set_line(struct vpic_chip *c, unsigned irq, bool level)
{
    uint8_t bit = (uint8_t)(1u << irq), was = c->irr;
    if (c->elcr & bit) {
        if (level)
            c->irr |= bit;
        else
            c->irr &= (uint8_t)~bit;
    } else if (level && !(c->lines & bit)) {
        c->irr |= bit;
    }
    if (level)
        c->lines |= bit;
    else
        c->lines &= (uint8_t)~bit;
    return (c->irr & bit) && !(was & bit);
}

/*
 * The slave's INT on the master's IRQ 2, then the master's INT. A slave
 * request is an edge on IRQ 2 each time, as in KVM's pic_update_irq: a
 * slave with a second request behind an auto-EOI one is asked again.
 */
static void update(struct vpic *p)
{
    struct vpic_chip *master = &p->chip[0];
    if (pending(&p->chip[1]) >= 0) {
        set_line(master, PIC_CASCADE_IRQ, true);
        set_line(master, PIC_CASCADE_IRQ, false);
    }
    p->output = pending(master) >= 0;
}

static void chip_ack(struct vpic_chip *c, unsigned irq)
{
    uint8_t bit = (uint8_t)(1u << irq);
    /* A level-triggered request stays while its line is high. */
    if (!(c->elcr & bit))
        c->irr &= (uint8_t)~bit;
    if (c->auto_eoi) {
        if (c->rotate_on_auto_eoi)
            c->lowest = (uint8_t)((irq + 1) & 7);
    } else {
        c->isr |= bit;
    }
}

void vpic_reset(struct vpic *p)
{
    memset(p, 0, sizeof(*p));
    p->chip[0].elcr_mask = 0xf8;
    p->chip[1].elcr_mask = 0xde;
}

void vpic_bios_state(struct vpic *p)
{
    static const uint8_t icw[2][4] = {{0x11, 0x08, 0x04, 0x01}, {0x11, 0x70, 0x02, 0x01}};
    static const uint8_t imr[2] = {0xfa, 0xff};
    for (unsigned c = 0; c < 2; c++) {
        uint16_t port = c ? PIC_SLAVE : PIC_MASTER;
        vpic_write(p, port, icw[c][0]);
        for (unsigned i = 1; i < 4; i++)
            vpic_write(p, port + 1, icw[c][i]);
        vpic_write(p, port + 1, imr[c]);
    }
}

void vpic_set_irq(struct vpic *p, unsigned irq, bool level)
{
    if (irq >= PIC_IRQS)
        return;
    if (set_line(&p->chip[irq >> 3], irq & 7, level))
        p->stats.raised++;
    update(p);
}

uint8_t vpic_ack(struct vpic *p)
{
    struct vpic_chip *master = &p->chip[0], *slave = &p->chip[1];
    int irq = pending(master);
    uint8_t vector;
    if (irq < 0) {
        p->stats.spurious++;
        vector = master->vector_base + 7;
    } else if (irq == PIC_CASCADE_IRQ) {
        chip_ack(master, PIC_CASCADE_IRQ);
        int irq2 = pending(slave);
        if (irq2 < 0) {
            p->stats.spurious++;
            irq2 = 7;
        } else {
            chip_ack(slave, (unsigned)irq2);
            p->stats.acked++;
        }
        vector = (uint8_t)(slave->vector_base + irq2);
    } else {
        chip_ack(master, (unsigned)irq);
        p->stats.acked++;
        vector = (uint8_t)(master->vector_base + irq);
    }
    update(p);
    return vector;
}

static void icw1(struct vpic_chip *c, uint8_t value)
{
    c->icw4 = value & ICW1_ICW4;
    c->single = value & ICW1_SINGLE;
    /* The edge sense is reset: an edge-triggered line must rise again to request. */
    c->irr &= c->elcr;
    c->isr = c->imr = 0;
    c->lowest = 0;
    c->special_mask = c->read_isr = c->poll = false;
    if (!c->icw4)
        c->auto_eoi = false;
    c->rotate_on_auto_eoi = false;
    c->init_step = 1;
}

static void ocw2(struct vpic_chip *c, uint8_t value)
{
    unsigned irq;
    switch ((enum ocw2)(value >> 5)) {
    case OCW2_ROTATE_AEOI_CLEAR:
    case OCW2_ROTATE_AEOI_SET:
        c->rotate_on_auto_eoi = value >> 7;
        break;
    case OCW2_EOI:
    case OCW2_ROTATE_EOI: {
        unsigned prio = priority(c, c->isr);
        if (prio == NO_IRQ)
            break;
        irq = irq_of(c, prio);
        c->isr &= (uint8_t) ~(1u << irq);
        if (value >> 5 == OCW2_ROTATE_EOI)
            c->lowest = (uint8_t)((irq + 1) & 7);
        break;
    }
    case OCW2_SPECIFIC_EOI:
    case OCW2_ROTATE_SPECIFIC_EOI:
        irq = value & 7;
        c->isr &= (uint8_t) ~(1u << irq);
        if (value >> 5 == OCW2_ROTATE_SPECIFIC_EOI)
            c->lowest = (uint8_t)((irq + 1) & 7);
        break;
    case OCW2_SET_PRIORITY:
        c->lowest = (uint8_t)((value + 1) & 7);
        break;
    default: /* 2: no operation */
        break;
    }
}

static void write_command(struct vpic_chip *c, uint8_t value)
{
    if (value & ICW1) {
        icw1(c, value);
    } else if (value & OCW3) {
        if (value & OCW3_POLL)
            c->poll = true;
        if (value & OCW3_RR)
            c->read_isr = value & 1;
        if (value & OCW3_ESMM)
            c->special_mask = (value >> 5) & 1;
    } else {
        ocw2(c, value);
    }
}

static void write_data(struct vpic_chip *c, uint8_t value)
{
    switch (c->init_step) {
    case 0: /* OCW1 */
        c->imr = value;
        break;
    case 1: /* ICW2 */
        c->vector_base = value & 0xf8;
        c->init_step = !c->single ? 2 : c->icw4 ? 3 : 0;
        break;
    case 2: /* ICW3: the cascade is fixed */
        c->init_step = c->icw4 ? 3 : 0;
        break;
    default: /* ICW4 */
        c->auto_eoi = value & ICW4_AEOI;
        c->init_step = 0;
        break;
    }
}

/* The poll command's read: an acknowledge of this chip's highest request, without INTA. */
static uint8_t poll(struct vpic_chip *c)
{
    c->poll = false;
    int irq = pending(c);
    if (irq < 0)
        return 0;
    chip_ack(c, (unsigned)irq);
    return (uint8_t)(0x80 | irq);
}

uint8_t vpic_read(struct vpic *p, uint16_t port)
{
    uint8_t value;
    if (port == PIC_ELCR_MASTER || port == PIC_ELCR_SLAVE)
        return p->chip[port - PIC_ELCR_MASTER].elcr;
    if ((port & ~1u) != PIC_MASTER && (port & ~1u) != PIC_SLAVE)
        return 0xff;
    struct vpic_chip *c = &p->chip[port >= PIC_SLAVE];
    if (port & 1)
        return c->imr;
    if (!c->poll)
        return c->read_isr ? c->isr : c->irr;
    value = poll(c);
    update(p);
    return value;
}

void vpic_write(struct vpic *p, uint16_t port, uint8_t value)
{
    if (port == PIC_ELCR_MASTER || port == PIC_ELCR_SLAVE) {
        struct vpic_chip *c = &p->chip[port - PIC_ELCR_MASTER];
        c->elcr = value & c->elcr_mask;
        /* A level-triggered IRQ requests while its line is high, from now on. */
        c->irr = (uint8_t)((c->irr & ~c->elcr) | (c->lines & c->elcr));
    } else if ((port & ~1u) == PIC_MASTER || (port & ~1u) == PIC_SLAVE) {
        struct vpic_chip *c = &p->chip[port >= PIC_SLAVE];
        if (port & 1)
            write_data(c, value);
        else
            write_command(c, value);
    } else {
        return;
    }
    update(p);
}

/* No keys until the PIC has counted something: most guests never use it, and every record's
 * bytes cost time on an emulated serial line. */
static bool counted(const void *base)
{
    const struct vpic *p = base;
    return p->stats.raised || p->stats.acked || p->stats.spurious;
}

#define ROW(key, doc)                                                                              \
    STATS_ROW(key, COUNTER, NONE, S_DEVICES, struct vpic, stats.key, doc, .present = counted)
static const struct stats_desc rows[] = {
    ROW(raised, "`pic`: requests latched in IRR by a line's rise"),
    ROW(acked, "`pic`: acknowledges that gave an IRQ's vector"),
    ROW(spurious, "`pic`: acknowledges that found nothing to give (IRQ 7 or 15)"),
};
const struct stats_table vpic_stats_table = STATS_TABLE(rows, 0);

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/vpit.h"

#include "lib/string.h"
#include "stats/stats.h"

#define CW_CHANNEL_SHIFT 6
#define CW_READ_BACK     3 /* the channel field of a read-back command */
#define CW_ACCESS_SHIFT  4
#define CW_MODE_SHIFT    1
#define CW_BCD           0x01
#define RB_NO_COUNT      0x20 /* read-back: bit clear latches the count */
#define RB_NO_STATUS     0x10 /* read-back: bit clear latches the status */
#define STATUS_OUT       0x80
#define STATUS_NULL      0x40 /* null count: no count loaded since the control word */
#define REFRESH_TICKS    16   /* port 0x61 bit 4 toggles about every 15 us */

/*
 * TSC cycles and PIT ticks, split so that neither product overflows at any
 * uptime (tsc_hz and PIT_HZ stay well below 2^33): floor one way, ceiling
 * the other, so that a deadline converted back is never a tick early.
 */
static uint64_t ticks_of(const struct vpit *p, uint64_t cycles)
{
    return cycles / p->tsc_hz * PIT_HZ + cycles % p->tsc_hz * PIT_HZ / p->tsc_hz;
}

static uint64_t cycles_of(const struct vpit *p, uint64_t ticks)
{
    return ticks / PIT_HZ * p->tsc_hz + (ticks % PIT_HZ * p->tsc_hz + PIT_HZ - 1) / PIT_HZ;
}

/* Modes 0 and 4 hold their count while the gate is low; 1 and 5 count once triggered. */
static bool counting(const struct vpit_channel *c)
{
    return c->gate || c->mode == 1 || c->mode == 5;
}

static bool periodic(const struct vpit_channel *c)
{
    return c->mode == 2 || c->mode == 3;
}

/* Ticks counted since the count was loaded. */
static uint64_t elapsed(const struct vpit *p, const struct vpit_channel *c, uint64_t now)
{
    if (!counting(c) || now <= c->start)
        return c->base;
    return c->base + ticks_of(p, now - c->start);
}

static uint16_t count_at(const struct vpit_channel *c, uint64_t d)
{
    if (!c->loaded)
        return (uint16_t)c->count;
    switch (c->mode) {
    case 2:
        return (uint16_t)(c->count - d % c->count);
    case 3:
        return (uint16_t)(c->count - (2 * d) % c->count);
    default: /* 0, 1, 4, 5: down through 0 and on from 0xffff */
        return (uint16_t)(c->count - d);
    }
}

static bool out_at(const struct vpit_channel *c, uint64_t d)
{
    if (!c->loaded)
        return c->mode != 0; /* the control word sets OUT low in mode 0, high in the others */
    if (periodic(c) && !c->gate)
        return true;
    switch (c->mode) {
    case 0:
    case 1:
        return d >= c->count;
    case 2:
        return d % c->count != c->count - 1;
    case 3:
        return d % c->count < (c->count + 1) / 2;
    default: /* 4, 5 */
        return d != c->count;
    }
}

uint16_t vpit_count(const struct vpit *p, unsigned channel, uint64_t now)
{
    const struct vpit_channel *c = &p->ch[channel];
    return count_at(c, elapsed(p, c, now));
}

bool vpit_out(const struct vpit *p, unsigned channel, uint64_t now)
{
    const struct vpit_channel *c = &p->ch[channel];
    return out_at(c, elapsed(p, c, now));
}

/* The tick of the first rising edge of OUT at or after tick d, 0 for none. */
static uint64_t edge_from(const struct vpit_channel *c, uint64_t d)
{
    if (periodic(c)) {
        uint64_t k = (d + c->count - 1) / c->count;
        return (k ? k : 1) * c->count;
    }
    uint64_t e = c->mode == 4 || c->mode == 5 ? c->count + 1ull : c->count;
    return e >= d ? e : 0;
}

/*
 * Channel 0's next edge after now: a periodic one no sooner than the
 * minimum period (the first too: the guest asked for the period), a
 * one-shot one only if it is still to come.
 */
static void arm_irq(struct vpit *p, uint64_t now, bool after_edge)
{
    struct vpit_channel *c = &p->ch[0];
    p->irq_edge = p->irq_time = 0;
    if (!c->loaded || !counting(c))
        return;
    uint64_t from = elapsed(p, c, now);
    if (periodic(c))
        from = elapsed(p, c, now + p->tsc_hz * PIT_MIN_PERIOD_US / 1000000);
    else if (after_edge)
        return;
    else
        from++; /* an edge at the tick counted now has come already */
    uint64_t e = edge_from(c, from);
    if (!e)
        return;
    p->irq_edge = e;
    p->irq_time = c->start + cycles_of(p, e - c->base);
    if (!p->irq_time)
        p->irq_time = 1;
}

bool vpit_expire(struct vpit *p, uint64_t now)
{
    if (!p->irq_time || now < p->irq_time)
        return false;
    struct vpit_channel *c = &p->ch[0];
    uint64_t was = p->irq_edge;
    arm_irq(p, now, true);
    if (p->irq_edge)
        p->stats.coalesced += (p->irq_edge - was) / c->count - 1;
    p->stats.irqs++;
    return true;
}

void vpit_reset(struct vpit *p, uint64_t tsc_hz)
{
    memset(p, 0, sizeof(*p));
    p->tsc_hz = tsc_hz ? tsc_hz : 1;
    for (unsigned i = 0; i < PIT_CHANNELS; i++) {
        p->ch[i].gate = i != 2;
        p->ch[i].access = PIT_WORD;
    }
}

static uint8_t status_of(const struct vpit *p, const struct vpit_channel *c, uint64_t now)
{
    return (uint8_t)((out_at(c, elapsed(p, c, now)) ? STATUS_OUT : 0) |
                     (c->loaded ? 0 : STATUS_NULL) | c->access << CW_ACCESS_SHIFT |
                     c->mode << CW_MODE_SHIFT | (c->bcd ? CW_BCD : 0));
}

/* The counter latch command, or read-back's count: a count already latched stays. */
static void latch_count(const struct vpit *p, struct vpit_channel *c, uint64_t now)
{
    if (c->latch_left)
        return;
    c->latch = count_at(c, elapsed(p, c, now));
    c->latch_left = c->access == PIT_WORD ? 2 : 1;
    c->latch_hi = c->access == PIT_MSB;
}

static void read_back(struct vpit *p, uint8_t value, uint64_t now)
{
    for (unsigned i = 0; i < PIT_CHANNELS; i++) {
        struct vpit_channel *c = &p->ch[i];
        if (!(value & (2u << i)))
            continue;
        if (!(value & RB_NO_COUNT))
            latch_count(p, c, now);
        if (!(value & RB_NO_STATUS) && !c->status_latched) {
            c->status = status_of(p, c, now);
            c->status_latched = true;
        }
    }
}

static void control_word(struct vpit *p, uint8_t value, uint64_t now)
{
    unsigned channel = value >> CW_CHANNEL_SHIFT;
    if (channel == CW_READ_BACK) {
        read_back(p, value, now);
        return;
    }
    struct vpit_channel *c = &p->ch[channel];
    unsigned access = (value >> CW_ACCESS_SHIFT) & 3;
    if (access == PIT_LATCH) {
        latch_count(p, c, now);
        return;
    }
    c->access = (uint8_t)access;
    c->mode = (value >> CW_MODE_SHIFT) & 7;
    if (c->mode > 5)
        c->mode -= 4;
    c->bcd = value & CW_BCD;
    c->loaded = false;
    c->write_hi = c->read_hi = false;
    c->latch_left = 0;
    c->status_latched = false;
    if (channel == 0)
        arm_irq(p, now, false);
}

static void load(struct vpit *p, unsigned channel, uint32_t count, uint64_t now)
{
    struct vpit_channel *c = &p->ch[channel];
    c->count = count ? count : 0x10000;
    c->loaded = true;
    c->start = now;
    c->base = 0;
    if (channel == 0)
        arm_irq(p, now, false);
}

static void write_count(struct vpit *p, unsigned channel, uint8_t value, uint64_t now)
{
    struct vpit_channel *c = &p->ch[channel];
    switch (c->access) {
    case PIT_LSB:
        load(p, channel, value, now);
        break;
    case PIT_MSB:
        load(p, channel, (uint32_t)value << 8, now);
        break;
    default:
        if (c->write_hi) {
            c->write_hi = false;
            load(p, channel, c->write_lo | (uint32_t)value << 8, now);
            break;
        }
        c->write_lo = value;
        c->write_hi = true;
        /* Mode 0 stops counting at the first byte: OUT stays low until the new count ends. */
        if (c->mode == 0 && c->loaded) {
            c->loaded = false;
            if (channel == 0)
                arm_irq(p, now, false);
        }
        break;
    }
}

static uint8_t read_count(struct vpit *p, unsigned channel, uint64_t now)
{
    struct vpit_channel *c = &p->ch[channel];
    if (c->status_latched) {
        c->status_latched = false;
        return c->status;
    }
    if (c->latch_left) {
        uint8_t b = (uint8_t)(c->latch_hi ? c->latch >> 8 : c->latch);
        c->latch_hi = !c->latch_hi;
        c->latch_left--;
        return b;
    }
    uint16_t count = count_at(c, elapsed(p, c, now));
    bool hi = c->access == PIT_MSB;
    if (c->access == PIT_WORD) {
        hi = c->read_hi;
        c->read_hi = !c->read_hi;
    }
    return (uint8_t)(hi ? count >> 8 : count);
}

/* Channel 2's gate (port 0x61 bit 0). */
static void set_gate(struct vpit *p, bool gate, uint64_t now)
{
    struct vpit_channel *c = &p->ch[2];
    if (gate == c->gate)
        return;
    if (!gate) {
        c->base = elapsed(p, c, now); /* held where it is (modes 0, 4; and 2, 3 until restarted) */
    } else if (c->mode == 0 || c->mode == 4) {
        c->start = now; /* it goes on from where it was held */
    } else {
        c->base = 0; /* modes 1, 2, 3, 5: a rising gate starts the count again */
        c->start = now;
    }
    c->gate = gate;
}

uint8_t vpit_read(struct vpit *p, uint16_t port, uint64_t now)
{
    if (port == PIT_PORT_B) {
        bool refresh = (ticks_of(p, now) / REFRESH_TICKS) & 1;
        return (uint8_t)((p->ch[2].gate ? PORT_B_GATE2 : 0) | (p->speaker ? PORT_B_SPEAKER : 0) |
                         p->port_b | (refresh ? PORT_B_REFRESH : 0) |
                         (vpit_out(p, 2, now) ? PORT_B_OUT2 : 0));
    }
    if (port >= PIT_PORT_CHANNEL0 && port < PIT_PORT_CHANNEL0 + PIT_CHANNELS)
        return read_count(p, port - PIT_PORT_CHANNEL0, now);
    return port == PIT_PORT_MODE ? 0 : 0xff; /* the control word cannot be read: KVM gives 0 */
}

void vpit_write(struct vpit *p, uint16_t port, uint8_t value, uint64_t now)
{
    if (port == PIT_PORT_B) {
        p->speaker = value & PORT_B_SPEAKER;
        p->port_b = value & PORT_B_KEPT;
        set_gate(p, value & PORT_B_GATE2, now);
    } else if (port == PIT_PORT_MODE) {
        control_word(p, value, now);
    } else if (port >= PIT_PORT_CHANNEL0 && port < PIT_PORT_CHANNEL0 + PIT_CHANNELS) {
        write_count(p, port - PIT_PORT_CHANNEL0, value, now);
    }
}

void vpit_bios_state(struct vpit *p, uint64_t now)
{
    vpit_write(p, PIT_PORT_MODE, PIT_WORD << CW_ACCESS_SHIFT | 2 << CW_MODE_SHIFT, now);
    vpit_write(p, PIT_PORT_CHANNEL0, 0, now);
    vpit_write(p, PIT_PORT_CHANNEL0, 0, now);
}

/* As the PIC's (vpic.c): no keys until IRQ 0 has been raised. */
static bool raised(const void *base)
{
    return ((const struct vpit *)base)->stats.irqs != 0;
}

#define ROW(key, doc)                                                                              \
    STATS_ROW(key, COUNTER, NONE, S_DEVICES, struct vpit, stats.key, doc, .present = raised)
static const struct stats_desc rows[] = {
    ROW(irqs, "`pit`: rising edges of OUT0 sent to IRQ 0"),
    ROW(coalesced, "`pit`: periodic edges passed over (late, or within the minimum period)"),
};
const struct stats_table vpit_stats_table = STATS_TABLE(rows, 0);

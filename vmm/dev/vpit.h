/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM's 8254 PIT: three counters clocked at 1193182 Hz (ports 0x40-0x42),
 * the control word port (0x43), and port 0x61's PIT bits (bit 0 channel 2's
 * gate, bit 1 the speaker's data, bit 4 the refresh toggle, bit 5 OUT2).
 * Register semantics only, no locks, no host timers: the caller
 * (vmm/dev/pit.c) arms a host timer at vpit_irq_deadline() and, when
 * vpit_expire() says channel 0's OUT rose, pulses IRQ 0 of the PIC.
 *
 * Time: every function that needs it takes `now`, a TSC value, and the
 * counters run at PIT_HZ / tsc_hz of it (vpit_reset), so a count read
 * follows the TSC exactly: the counter is elapsed ticks, never a counted
 * down variable. Counting starts when the count is loaded (the write of its
 * last byte); a control word stops the counter until the next count.
 *
 * Modes (SDM of the 8254, as KVM's i8254.c has them): 0 (interrupt on
 * terminal count: OUT low, high at count ticks), 1 (one-shot, started at
 * the load as KVM does, and again by a rising gate), 2 (rate generator:
 * OUT low for the last tick of each period), 3 (square wave: OUT high for
 * the first half, rounded up), 4 and 5 (strobes: OUT low for the tick at the
 * terminal count); 6 and 7 are 2 and 3. A count of 0 is 65536. A low gate
 * holds the count in modes 0 and 4, and in modes 2 and 3 also sets OUT
 * high; a rising gate restarts modes 1, 2, 3 and 5. Only channel 2's gate
 * moves (port 0x61); channels 0 and 1 are always gated on. BCD counting is
 * taken (the bit reads back) but counts in binary. Access modes lobyte,
 * hibyte and lobyte-then-hibyte, the counter latch command and the
 * read-back command (count and status) are as the data sheet has them.
 *
 * IRQ 0 follows the rising edges of channel 0's OUT: once in modes 0, 1, 4
 * and 5, every period in modes 2 and 3. Periodic interrupts come at most
 * every PIT_MIN_PERIOD_US (KVM's min_timer_period_us: a guest must not make
 * the host's timer fire at 1 MHz); edges passed over in between coalesce
 * into the next, as the local APIC timer's do, and are counted.
 */
#ifndef POLLUX_VMM_DEV_VPIT_H
#define POLLUX_VMM_DEV_VPIT_H

#include <stdbool.h>
#include <stdint.h>

#include "stats/stats.h"

#define PIT_HZ            1193182u
#define PIT_PORT_CHANNEL0 0x40
#define PIT_PORT_MODE     0x43
#define PIT_PORT_B        0x61 /* the PC's system control port B: PIT bits only */
#define PIT_CHANNELS      3
#define PIT_MIN_PERIOD_US 200

/* Port 0x61 bits. */
#define PORT_B_GATE2   0x01
#define PORT_B_SPEAKER 0x02
#define PORT_B_KEPT    0x0c /* parity and I/O check enables: stored, nothing behind them */
#define PORT_B_REFRESH 0x10
#define PORT_B_OUT2    0x20

/* Access modes (control word bits 5:4). */
enum pit_access { PIT_LATCH = 0, PIT_LSB = 1, PIT_MSB = 2, PIT_WORD = 3 };

struct vpit_channel {
    uint32_t count; /* the count loaded: 1 to 65536 */
    uint8_t mode;   /* 0-5 */
    uint8_t access; /* enum pit_access */
    bool bcd, gate;
    bool loaded;        /* a count was written since the control word: the counter runs */
    bool write_hi;      /* PIT_WORD: the next write is the high byte */
    uint8_t write_lo;   /* ... and the low byte already written */
    bool read_hi;       /* PIT_WORD: the next read is the high byte */
    uint16_t latch;     /* a latched count ... */
    uint8_t latch_left; /* ... and how many of its bytes are still to be read (0: none latched) */
    bool latch_hi;      /* the next latched byte is the high one */
    uint8_t status;     /* a latched status byte ... */
    bool status_latched;
    uint64_t start; /* TSC at which counting (re)started */
    uint64_t base;  /* ticks counted before start: a gate pause in modes 0 and 4 */
};

struct vpit {
    struct vpit_channel ch[PIT_CHANNELS];
    uint64_t tsc_hz;
    bool speaker;      /* port 0x61 bit 1 */
    uint8_t port_b;    /* port 0x61's PORT_B_KEPT bits */
    uint64_t irq_edge; /* channel 0's next OUT rising edge, in its ticks ... */
    uint64_t irq_time; /* ... and as a TSC value; 0: none */
    struct {
        uint64_t irqs, coalesced; /* vpit_stats_table */
    } stats;
};

extern const struct stats_table vpit_stats_table; /* the rows of its statistics */

/* Power-on: no channel counting, channels 0 and 1 gated on; the TSC runs at tsc_hz. */
void vpit_reset(struct vpit *p, uint64_t tsc_hz);

/*
 * Channel 0 as SeaBIOS leaves it (src/hw/timer.c pit_setup): mode 2, binary,
 * low then high byte, count 0 (65536: 18.2 Hz), counting from now.
 */
void vpit_bios_state(struct vpit *p, uint64_t now);

/* A byte read or write of ports 0x40-0x43 or 0x61 (another port reads 0xff, writes nothing). */
uint8_t vpit_read(struct vpit *p, uint16_t port, uint64_t now);
void vpit_write(struct vpit *p, uint16_t port, uint8_t value, uint64_t now);

/* The TSC at which channel 0's OUT rises next (IRQ 0), 0 for none. */
static inline uint64_t vpit_irq_deadline(const struct vpit *p)
{
    return p->irq_time;
}

/*
 * At or after vpit_irq_deadline: true if that edge has come (IRQ 0 is to be
 * pulsed), and the deadline moves to the next edge a periodic mode has.
 */
bool vpit_expire(struct vpit *p, uint64_t now);

/* The counter's value and OUT at now, with no side effect (what a latch would take). */
uint16_t vpit_count(const struct vpit *p, unsigned channel, uint64_t now);
bool vpit_out(const struct vpit *p, unsigned channel, uint64_t now);

#endif

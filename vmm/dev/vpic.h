/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM's two 8259A PICs as a PC cascades them: the master at 0x20/0x21,
 * the slave at 0xa0/0xa1 on the master's IRQ 2, and their edge/level
 * control registers (ELCR) at 0x4d0/0x4d1 (IRQs 0, 1, 2, 8 and 13 are always
 * edge-triggered, as in KVM's i8259.c). Register semantics only, no locks,
 * no vCPUs: the caller (vmm/dev/pic.c) drives the IRQ lines, watches the
 * master's INT output (vpic_output) and takes the vector with
 * vpic_ack, the CPU's interrupt acknowledge.
 *
 * Programming: ICW1 (command port, bit 4) resets a chip (IMR, ISR, edge
 * requests, special mask and the read select cleared, priority back to
 * IRQ 0 first) and starts the sequence ICW2 (vector base, bits 7:3), ICW3
 * (unless ICW1 said single), ICW4 (if ICW1 asked for it: bit 1 auto-EOI;
 * without it auto-EOI is off) on the data port; after it the data port is
 * the IMR (OCW1). OCW2: non-specific EOI, specific EOI, their rotating
 * forms, rotate in auto-EOI mode, set priority. OCW3: the command port's
 * reads give the IRR or the ISR, a poll command (the next read of the
 * command port acknowledges the highest request and gives 0x80 | its IRQ,
 * or 0), special mask mode. Special fully nested mode, the buffered modes
 * and ICW1's level-triggered mode are taken and ignored, as KVM does.
 *
 * Requests: an edge-triggered IRQ latches in IRR when its line rises and
 * stays latched until acknowledged; a level-triggered one is in IRR while
 * its line is high. A request reaches INT when it is unmasked and of a
 * higher priority than every IRQ in service (special mask mode: every
 * unmasked IRQ in service). The acknowledge moves it from IRR to ISR
 * (auto-EOI: it leaves ISR at once), the slave's for IRQ 2; with nothing
 * left to give it is spurious, IRQ 7 of that chip, and nothing changes.
 */
#ifndef POLLUX_VMM_DEV_VPIC_H
#define POLLUX_VMM_DEV_VPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "stats/stats.h"

#define PIC_MASTER      0x20 /* command; data at + 1 */
#define PIC_SLAVE       0xa0
#define PIC_ELCR_MASTER 0x4d0
#define PIC_ELCR_SLAVE  0x4d1
#define PIC_IRQS        16
#define PIC_CASCADE_IRQ 2

struct vpic_chip {
    uint8_t irr, isr, imr, elcr, elcr_mask;
    uint8_t lines;       /* the input lines' levels: edges are found against them */
    uint8_t vector_base; /* ICW2 bits 7:3 */
    uint8_t init_step;   /* 0: initialized; 1-3: ICW2, ICW3 or ICW4 comes next */
    uint8_t lowest;      /* the IRQ with the lowest priority is lowest + 7 (rotation) */
    bool single, icw4;   /* ICW1: no ICW3; an ICW4 follows */
    bool auto_eoi, rotate_on_auto_eoi;
    bool read_isr, poll, special_mask;
};

struct vpic {
    struct vpic_chip chip[2]; /* master, slave */
    bool output;              /* the master's INT */
    struct {
        uint64_t raised, acked, spurious; /* vpic_stats_table */
    } stats;
};

extern const struct stats_table vpic_stats_table; /* the rows of its statistics */

/* Power-on, as KVM's: both chips initialized, vector base 0, nothing masked, all edge. */
void vpic_reset(struct vpic *p);

/*
 * The 8259s as SeaBIOS hands them to a boot loader (src/hw/pic.c pic_setup,
 * src/clock.c clock_setup): both initialized (ICW1 0x11, edge, cascade,
 * 8086 mode), vectors 0x08 and 0x70, and every IRQ masked but the cascade
 * (IRQ 2) and the PIT's IRQ 0. SeaBIOS unmasks IRQ 8 as well for its RTC
 * and IRQ 1 for a PS/2 keyboard: a VM here has neither.
 */
void vpic_bios_state(struct vpic *p);

/* Drive IRQ line irq (0-15) high or low. */
void vpic_set_irq(struct vpic *p, unsigned irq, bool level);

/* Byte accesses of 0x20, 0x21, 0xa0, 0xa1, 0x4d0 and 0x4d1 (another port reads 0xff). */
uint8_t vpic_read(struct vpic *p, uint16_t port);
void vpic_write(struct vpic *p, uint16_t port, uint8_t value);

/* The interrupt acknowledge: the vector the CPU takes (IRQ 7's base + 7 when spurious). */
uint8_t vpic_ack(struct vpic *p);

#endif

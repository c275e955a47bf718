/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM's I/O APIC (82093AA model, version 0x20: 24 pins, no EOI register),
 * at IOAPIC_BASE: IOREGSEL at offset 0x00 selects, IOWIN at 0x10 reads and
 * writes ID (0), version (1), arbitration (2) and the redirection table
 * (0x10 + 2 * pin, low then high dword). Register semantics only, no locks,
 * no vCPUs: the caller (vmm/dev/ioapic.c) delivers the messages it returns.
 *
 * Pins: an edge-triggered pin sends its vector on each rising edge of its
 * line while unmasked. A level-triggered pin sends while its line is high
 * and remote IRR is clear, then sets remote IRR; the local APIC's EOI of
 * that vector (broadcast to the I/O APIC) clears remote IRR, and a line
 * still high sends again. A masked pin sends nothing and loses no level:
 * unmasking a high level-triggered line sends it then.
 */
#ifndef POLLUX_VMM_DEV_VIOAPIC_H
#define POLLUX_VMM_DEV_VIOAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define IOAPIC_BASE    0xfec00000ull /* guest-physical, one page */
#define IOAPIC_PINS    24
#define IOAPIC_VERSION 0x20
#define IOAPIC_REGSEL  0x00
#define IOAPIC_WINDOW  0x10

/* Redirection entry bits (low dword) */
#define IOAPIC_VECTOR     0xffu
#define IOAPIC_DELIVERY   (7u << 8)
#define IOAPIC_LOGICAL    (1u << 11)
#define IOAPIC_PENDING    (1u << 12) /* delivery status: read-only */
#define IOAPIC_ACTIVE_LOW (1u << 13)
#define IOAPIC_REMOTE_IRR (1u << 14) /* read-only */
#define IOAPIC_LEVEL      (1u << 15)
#define IOAPIC_MASKED     (1u << 16)

/* An interrupt message for the local APICs. */
struct ioapic_msg {
    uint8_t vector;
    uint8_t mode; /* delivery mode, as the ICR's */
    bool logical;
    bool level;
    uint8_t dest; /* physical APIC ID or logical mask */
};

struct ioapic {
    uint32_t id; /* bits 27:24 of register 0 */
    uint32_t regsel;
    uint64_t redir[IOAPIC_PINS];
    uint32_t lines; /* input line levels, after polarity: bit set = asserted */
};

void ioapic_reset(struct ioapic *io);

uint32_t ioapic_read(struct ioapic *io, uint32_t offset);

/* A guest write; returns true with *msg filled if it lets a level-triggered pin send. */
bool ioapic_write(struct ioapic *io, uint32_t offset, uint32_t value, struct ioapic_msg *msg);

/* Drive a pin's input line; true with *msg filled if an interrupt is to be sent. */
bool ioapic_set_line(struct ioapic *io, unsigned pin, bool asserted, struct ioapic_msg *msg);

/*
 * The local APIC's EOI broadcast for vector: clear remote IRR of every level
 * pin with that vector, each of them once. Returns how many must send again
 * (their lines still high), their messages in msgs.
 */
unsigned ioapic_eoi(struct ioapic *io, uint8_t vector, struct ioapic_msg msgs[IOAPIC_PINS]);

#endif

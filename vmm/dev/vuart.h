/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's COM1: a 16550A. Registers: RBR/THR, IER, IIR/FCR (FIFO bits
 * 7:6 set while the FIFOs are on), LCR, MCR (loopback included: MSR then
 * follows MCR and THR bytes come back on RBR), LSR, MSR, SCR, the divisor
 * latch. The transmitter is infinitely fast (THR is empty again at once);
 * received bytes wait in a FIFO of VUART_RX_MAX (overrun: LSR bit 1).
 * Interrupts, by IIR priority: receiver line status (overrun, IER bit 2),
 * received data (IER bit 0), THR empty (IER bit 1; cleared by reading IIR
 * when it is the one reported, or by writing THR), modem status (IER bit 3,
 * loopback deltas). vuart_irq() is the INTR output gated by MCR OUT2, as on
 * a PC; the caller drives an I/O APIC pin with it.
 *
 * Output is collected per line (LF, CR LF and a lone CR end one) and printed
 * as "[<vm name>] <line>", with non-printable bytes escaped as \xNN, so a
 * guest can never write a hypervisor @event nor split another VM's line.
 * A byte whose line finds the console's buffer without room for it is not
 * taken (vuart_write, vuart_puts): the caller leaves the guest's instruction
 * unretired and its vCPU waits off its CPU (docs/robustness.md), rather
 * than hold the CPU until the serial line has room.
 */
#ifndef POLLUX_VMM_DEV_VUART_H
#define POLLUX_VMM_DEV_VUART_H

#include <stdbool.h>
#include <stdint.h>

#include "stats/stats.h"
#include "vmm/vmconfig.h"

#define VUART_BASE  0x3f8
#define VUART_PORTS 8
#define VUART_IRQ   4 /* its I/O APIC pin (the DSDT's Interrupt) */
/* Bytes of a printed line, escapes included: a longer one continues on the next. */
#define VUART_LINE_MAX 1024
#define VUART_RX_MAX   64
/* The most one byte out makes the console take: a whole line, "[<vm name>] " and CR LF. */
#define VUART_PRINT_MAX (VUART_LINE_MAX + VM_NAME_MAX + 5)

struct vuart {
    const char *owner; /* VM name for the prefix */
    uint8_t ier, lcr, mcr, scr, dll, dlm, lsr_errors, msr_delta, fcr;
    bool thre_pending; /* a THR-empty interrupt not yet acknowledged */
    bool last_cr;      /* the previous output byte was CR: a LF after it ends no new line */
    bool interactive;  /* a person types at the VM: output goes out raw, as it comes */
    bool mid_line;     /* interactive: a line is started on the console (its prefix printed) */
    char line[VUART_LINE_MAX]; /* the line so far, escaped as it will be printed */
    unsigned len;
    uint8_t rx[VUART_RX_MAX];
    unsigned rx_head, rx_count;
    uint64_t full_waits; /* writes the console had no room for: the guest wrote them again */
};

void vuart_init(struct vuart *u, const char *owner);
/*
 * A register read. side_effect says it changed the UART (took a received
 * byte, cleared line or modem status, acknowledged THR empty); a read
 * without one leaves every field as it was, so the interrupt output too.
 */
struct vuart_read {
    uint8_t value;
    bool side_effect;
};
struct vuart_read vuart_read(struct vuart *u, uint16_t offset);
/* A register write; false: a THR byte the console has no room for, not taken (u unchanged). */
bool vuart_write(struct vuart *u, uint16_t offset, uint8_t value);
/*
 * Bytes as if written to THR (the HC_PUTS hypercall): how many were taken
 * before one found the console without room (len: all).
 */
uint64_t vuart_puts(struct vuart *u, const char *s, uint64_t len);
/* Print what is buffered (at VM stop). */
void vuart_flush(struct vuart *u);
/*
 * While the VM holds the console's input (Ctrl-A n): its bytes go out as
 * they come and unescaped (a prompt, the shell's escape sequences), each
 * line still prefixed. Off: whole, escaped lines again.
 */
void vuart_set_interactive(struct vuart *u, bool on);
/* Queue a byte for the guest to receive (console input). */
void vuart_input(struct vuart *u, char c);
/* The interrupt output: an interrupt is pending and OUT2 lets it out. */
bool vuart_irq(const struct vuart *u);

/* Its statistics' rows (the com1 device's). */
extern const struct stats_table vuart_stats_table;

#endif

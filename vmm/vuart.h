/*
 * The guest's COM1: a 16550 subset (THR, LSR always ready, the divisor
 * latch, IER/FCR/LCR/MCR/SCR accepted, a receive FIFO read by polling
 * LSR.DR and RBR, no interrupts). Output is
 * collected per line and printed as "[<vm name>] <line>", with non-printable
 * bytes escaped as \xNN, so a guest can never write a hypervisor @event nor
 * split another VM's line.
 */
#ifndef POLLUX_VMM_VUART_H
#define POLLUX_VMM_VUART_H

#include <stdbool.h>
#include <stdint.h>

#define VUART_BASE     0x3f8
#define VUART_PORTS    8
#define VUART_LINE_MAX 200 /* a longer line is printed in pieces */
#define VUART_RX_MAX   16  /* received bytes the guest has not read; more are dropped */

struct vuart {
    const char *owner; /* VM name for the prefix */
    uint8_t ier, lcr, mcr, scr, dll, dlm;
    char line[VUART_LINE_MAX];
    unsigned len;
    /* Received bytes: one writer (vuart_input), one reader (the guest's RBR reads). */
    uint8_t rx[VUART_RX_MAX];
    uint32_t rx_head, rx_tail; /* bytes ever read, ever queued */
};

void vuart_init(struct vuart *u, const char *owner);
uint32_t vuart_read(struct vuart *u, uint16_t offset);
void vuart_write(struct vuart *u, uint16_t offset, uint8_t value);
/* Append bytes as if written to THR (the HC_PUTS hypercall). */
void vuart_puts(struct vuart *u, const char *s, uint64_t len);
/* Queue a byte for the guest to read from RBR (LSR.DR says there is one). */
void vuart_input(struct vuart *u, char c);
/* Print what is buffered (at VM stop). */
void vuart_flush(struct vuart *u);

#endif

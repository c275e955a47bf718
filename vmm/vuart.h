/*
 * The guest's COM1: a 16550 subset (THR, LSR always ready, the divisor
 * latch, IER/FCR/LCR/MCR/SCR accepted, no input, no interrupts). Output is
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

struct vuart {
    const char *owner; /* VM name for the prefix */
    uint8_t ier, lcr, mcr, scr, dll, dlm;
    char line[VUART_LINE_MAX];
    unsigned len;
};

void vuart_init(struct vuart *u, const char *owner);
uint32_t vuart_read(struct vuart *u, uint16_t offset);
void vuart_write(struct vuart *u, uint16_t offset, uint8_t value);
/* Append bytes as if written to THR (the HC_PUTS hypercall). */
void vuart_puts(struct vuart *u, const char *s, uint64_t len);
/* Print what is buffered (at VM stop). */
void vuart_flush(struct vuart *u);

#endif

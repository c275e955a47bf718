/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * 16550 UART on COM1, polled. The console serialises output and the key
 * console reads input on one CPU; these do not lock.
 */
#ifndef POLLUX_DRIVERS_UART_H
#define POLLUX_DRIVERS_UART_H

#include <stdbool.h>

void uart_init(void);
void uart_putc(char c);

#define UART_FIFO_BYTES 16

/* The transmit FIFO is empty: uart_tx_burst may write up to UART_FIFO_BYTES at once. */
bool uart_tx_ready(void);
void uart_tx_burst(const char *s, unsigned n);
/* Every byte written has left the transmitter: a power-off now loses none. */
bool uart_tx_done(void);
/* A received byte, or -1 if none is waiting. */
int uart_getc(void);

#endif

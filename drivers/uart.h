/*
 * 16550 UART on COM1, polled. The console serialises output and the key
 * console reads input on one CPU; these do not lock.
 */
#ifndef POLLUX_DRIVERS_UART_H
#define POLLUX_DRIVERS_UART_H

void uart_init(void);
void uart_putc(char c);
/* A received byte, or -1 if none is waiting. */
int uart_getc(void);

#endif

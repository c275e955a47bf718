/* 16550 UART on COM1, polled. The console serialises access; these do not lock. */
#ifndef POLLUX_DRIVERS_UART_H
#define POLLUX_DRIVERS_UART_H

void uart_init(void);
void uart_putc(char c);

#endif

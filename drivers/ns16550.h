/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 16550 UART: its registers, as offsets from its base port, and their
 * bits. The host's COM1 driver (drivers/uart.c) and the UART each VM gets
 * (vmm/dev/vuart.c) speak the same chip.
 */
#ifndef POLLUX_DRIVERS_NS16550_H
#define POLLUX_DRIVERS_NS16550_H

#define UART_THR 0 /* transmit (write) and receive (read) buffer; DLL with LCR.DLAB */
#define UART_DLL 0
#define UART_IER 1 /* DLM with LCR.DLAB */
#define UART_DLM 1
#define UART_IIR 2 /* read; FCR on write */
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_MSR 6 /* modem status */
#define UART_SCR 7

#define LCR_8N1  0x03
#define LCR_DLAB 0x80

#define IER_RDA  0x01
#define IER_THRE 0x02
#define IER_RLS  0x04
#define IER_MS   0x08

#define IIR_NONE  0x01
#define IIR_MS    0x00
#define IIR_THRE  0x02
#define IIR_RDA   0x04
#define IIR_RLS   0x06
#define IIR_FIFOS 0xc0

#define FCR_ENABLE   0x01
#define FCR_CLEAR_RX 0x02

#define MCR_DTR      0x01
#define MCR_RTS      0x02
#define MCR_OUT1     0x04
#define MCR_OUT2     0x08
#define MCR_LOOPBACK 0x10

#define LSR_DR      0x01
#define LSR_OVERRUN 0x02
#define LSR_THRE    0x20
#define LSR_TEMT    0x40

#define UART_MSR_CTS_DSR_DCD 0xb0 /* a terminal is attached and ready */
#define UART_MSR_DELTAS      0x0f

#endif

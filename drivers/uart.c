/* SPDX-License-Identifier: GPL-2.0-only */
#include "drivers/uart.h"

#include "arch/x86/cpu.h"
#include "drivers/ns16550.h"

#define COM1 0x3f8

/*
 * A missing UART never reports THRE: uart_init looks for one (its scratch
 * register holds a value), and output to none is dropped. A present one is
 * waited for: when the emulator's host side is slow (a full pipe), THRE
 * stays clear for long, and writing anyway overruns its FIFO.
 */
static bool present;

void uart_init(void)
{
    outb(COM1 + UART_SCR, 0x5a);
    present = inb(COM1 + UART_SCR) == 0x5a;
    outb(COM1 + UART_IER, 0);
    outb(COM1 + UART_LCR, LCR_DLAB);
    outb(COM1 + UART_DLL, 1); /* 115200 baud */
    outb(COM1 + UART_DLM, 0);
    outb(COM1 + UART_LCR, LCR_8N1);
    outb(COM1 + UART_FCR, 0x07); /* enable and clear FIFOs */
    outb(COM1 + UART_MCR, 0x03); /* DTR, RTS */
}

void uart_putc(char c)
{
    if (!present)
        return;
    while (!(inb(COM1 + UART_LSR) & LSR_THRE))
        cpu_relax();
    outb(COM1 + UART_THR, (uint8_t)c);
}

int uart_getc(void)
{
    if (!(inb(COM1 + UART_LSR) & LSR_DR))
        return -1;
    return inb(COM1 + UART_THR); /* RBR on read */
}

bool uart_tx_ready(void)
{
    return !present || (inb(COM1 + UART_LSR) & LSR_THRE);
}

void uart_tx_burst(const char *s, unsigned n)
{
    if (!present)
        return;
    for (unsigned i = 0; i < n; i++)
        outb(COM1 + UART_THR, (uint8_t)s[i]);
}

bool uart_tx_done(void)
{
    return !present || (inb(COM1 + UART_LSR) & LSR_TEMT);
}

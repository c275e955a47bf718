#include "drivers/uart.h"

#include "arch/x86/cpu.h"

#define COM1     0x3f8
#define UART_THR 0
#define UART_IER 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_DLL 0
#define UART_DLM 1

#define LCR_8N1  0x03
#define LCR_DLAB 0x80
#define LSR_THRE 0x20

/* Bound the wait so a missing UART cannot hang the hypervisor. */
#define UART_SPIN_LIMIT 100000

void uart_init(void)
{
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
    for (unsigned i = 0; i < UART_SPIN_LIMIT; i++)
        if (inb(COM1 + UART_LSR) & LSR_THRE)
            break;
    outb(COM1 + UART_THR, (uint8_t)c);
}

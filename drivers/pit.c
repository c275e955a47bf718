/* SPDX-License-Identifier: GPL-2.0-only */
#include "drivers/pit.h"

#include "arch/x86/cpu.h"

#define PIT_CH2     0x42
#define PIT_CMD     0x43
#define PORT_B      0x61
#define PORTB_GATE2 0x01
#define PORTB_SPKR  0x02
#define PORTB_OUT2  0x20

void pit_oneshot_start(uint16_t ticks)
{
    /* Gate low while programming, speaker off. */
    outb(PORT_B, inb(PORT_B) & ~(PORTB_GATE2 | PORTB_SPKR));
    outb(PIT_CMD, 0xb0); /* channel 2, lobyte/hibyte, mode 0 (interrupt on terminal count) */
    outb(PIT_CH2, ticks & 0xff);
    outb(PIT_CH2, ticks >> 8);
    outb(PORT_B, inb(PORT_B) | PORTB_GATE2); /* rising gate starts the count */
}

bool pit_oneshot_done(void)
{
    return inb(PORT_B) & PORTB_OUT2;
}

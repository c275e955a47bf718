/* SPDX-License-Identifier: GPL-2.0-only */
#include "drivers/pic.h"

#include "arch/x86/cpu.h"

#define PIC1_CMD  0x20
#define PIC1_DATA 0x21
#define PIC2_CMD  0xa0
#define PIC2_DATA 0xa1

#define PIC_VECTOR_BASE 0x20 /* IRQ 0-15 -> vectors 0x20-0x2f, should one slip through */

void pic_disable(void)
{
    outb(PIC1_CMD, 0x11); /* ICW1: init, ICW4 follows */
    outb(PIC2_CMD, 0x11);
    outb(PIC1_DATA, PIC_VECTOR_BASE);
    outb(PIC2_DATA, PIC_VECTOR_BASE + 8);
    outb(PIC1_DATA, 0x04); /* ICW3: slave on IRQ 2 */
    outb(PIC2_DATA, 0x02);
    outb(PIC1_DATA, 0x01); /* ICW4: 8086 mode */
    outb(PIC2_DATA, 0x01);
    outb(PIC1_DATA, 0xff);
    outb(PIC2_DATA, 0xff);
}

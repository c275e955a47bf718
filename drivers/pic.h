/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The legacy 8259 PICs. pollux uses the local APIC only, but the BIOS leaves
 * the PICs delivering the PIT's IRQ 0 at vector 8, which would look like a
 * double fault once interrupts are enabled: remap them above the exception
 * vectors and mask every line.
 */
#ifndef POLLUX_DRIVERS_PIC_H
#define POLLUX_DRIVERS_PIC_H

void pic_disable(void);

#endif

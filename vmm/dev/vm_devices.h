/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM's platform devices that interrupt: the 16550 on COM1 (pin
 * VUART_IRQ, as the DSDT says; vmm/dev/com1.c), the I/O APIC itself at
 * IOAPIC_BASE (vmm/dev/ioapic.c), and with legacy_pic=on the 8259s
 * (vmm/dev/pic.c), whose IRQ 0 is the 8254's channel 0 (vmm/dev/pit.c) and
 * IRQ 4 the 16550 too, as on a PC. One lock per VM (vm->devices_lock)
 * serialises them; messages go to the local APICs, and the PIC's INT to
 * vCPU 0, after it is dropped. Where a vCPU's lock is held too it is taken
 * first: vCPU 0's entry acknowledges the PIC under its own (vm_devices_intack).
 */
#ifndef POLLUX_VMM_DEV_VM_DEVICES_H
#define POLLUX_VMM_DEV_VM_DEVICES_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/dev/builtin.h"
#include "vmm/dev/vioapic.h"
#include "vmm/vm.h"

/* The I/O APIC's registers, in the table's storage; NULL with ioapic=off. */
static inline struct ioapic *vm_ioapic(struct vm *vm)
{
    struct dev_entry *d = vm_devices_entry(&vm->devices, BUILTIN_IOAPIC);
    return d ? d->state : 0;
}

/*
 * Under vm->devices_lock, after an access that may have changed the UART:
 * its output drives its pin. Drops the lock (flags from spin_lock_irqsave),
 * then sends what the pin's change sends.
 */
void vm_uart_changed(struct vm *vm, uint64_t flags);

/*
 * A COM1 register read (offset 0-7) from a vCPU. Inline: the common port
 * exit (LSR, polled before each byte out) changes nothing and needs only
 * the lock and the register.
 */
static inline uint32_t vm_uart_read(struct vm *vm, uint16_t offset)
{
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    struct vuart_read r = vuart_read(&vm->uart, offset);
    /* A read without side effect left the UART, so its pin, as it was. */
    if (r.side_effect)
        vm_uart_changed(vm, flags);
    else
        spin_unlock_irqrestore(&vm->devices_lock, flags);
    return r.value;
}

/* A COM1 register write from a vCPU; false: not taken, the console is full (vuart_write). */
bool vm_uart_write(struct vm *vm, uint16_t offset, uint8_t value);

/* HC_PUTS's bytes into COM1's output: how many were taken (vuart_puts). */
uint64_t vm_uart_puts(struct vm *vm, const char *s, uint64_t len);

/* A byte of console input for the guest's COM1 (any CPU). */
void vm_uart_input(struct vm *vm, char c);

/* The VM holds the console's input, or no longer: its COM1 output raw or whole (vuart.h). */
void vm_uart_set_interactive(struct vm *vm, bool on);

/* A message of the I/O APIC's to the local APICs it addresses (no lock held). */
void vm_ioapic_send(struct vm *vm, const struct ioapic_msg *m);

/* A local APIC's EOI of a level-triggered vector. */
void vm_devices_eoi(struct vm *vm, uint8_t vector);

/*
 * Under vm->devices_lock: drive IRQ line irq of the PIC (legacy_pic=on).
 * True if its INT rose: then vm_pic_kick, once the lock is dropped.
 */
bool vm_pic_set_irq(struct vm *vm, unsigned irq, bool level);

/* Under vm->devices_lock, after the PIC changed: true if its INT rose (vm_pic_kick, unlocked). */
bool vm_pic_changed(struct vm *vm);

/* The PIC's INT rose: vCPU 0 is told (no lock held). */
void vm_pic_kick(struct vm *vm);

#endif

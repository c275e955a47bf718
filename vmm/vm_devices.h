/*
 * The VM's platform devices that interrupt through its I/O APIC: the 16550
 * on COM1 (pin VUART_IRQ, as the DSDT says) and the I/O APIC itself at
 * IOAPIC_BASE. One lock per VM (vm->devices_lock) serialises them; messages
 * go to the local APICs after it is dropped.
 */
#ifndef POLLUX_VMM_VM_DEVICES_H
#define POLLUX_VMM_VM_DEVICES_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/vm.h"

void vm_devices_init(struct vm *vm);

/* COM1 port access (offset 0-7) from a vCPU. */
uint32_t vm_uart_read(struct vm *vm, uint16_t offset);
void vm_uart_write(struct vm *vm, uint16_t offset, uint8_t value);

/* A byte of console input for the guest's COM1 (any CPU). */
void vm_uart_input(struct vm *vm, char c);

/* A nested page fault inside the I/O APIC page: decode and emulate the access. */
void vm_ioapic_mmio(struct vcpu *v, const struct exit_record *e);

/* A local APIC's EOI of a level-triggered vector. */
void vm_devices_eoi(struct vm *vm, uint8_t vector);

#endif

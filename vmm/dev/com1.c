/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * COM1 (0x3f8-0x3ff): the 16550 of vmm/dev/vuart.c as a device, byte accesses
 * only, under the VM's devices lock; its interrupt output drives I/O APIC
 * pin VUART_IRQ (vmm/dev/ioapic.c) and, with legacy_pic=on, the PIC's IRQ 4. The exit fast path
 * reads its registers directly (vmm/exit/io.h's io_read, vm_uart_read): the line-status register,
 * polled before each byte out, is the commonest port exit.
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/vm_devices.h"

__attribute__((noinline)) void vm_uart_changed(struct vm *vm, uint64_t flags)
{
    struct ioapic_msg m;
    struct ioapic *io = vm_ioapic(vm);
    bool irq = vuart_irq(&vm->uart);
    bool fire = io && ioapic_set_line(io, VUART_IRQ, irq, &m);
    /* On a PC ISA IRQ 4 reaches the 8259 too. */
    bool kick = vm->cfg.legacy_pic && vm_pic_set_irq(vm, VUART_IRQ, irq);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    if (fire)
        vm_ioapic_send(vm, &m);
    if (kick)
        vm_pic_kick(vm);
}

bool vm_uart_write(struct vm *vm, uint16_t offset, uint8_t value)
{
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    bool taken = vuart_write(&vm->uart, offset, value);
    vm_uart_changed(vm, flags);
    return taken;
}

uint64_t vm_uart_puts(struct vm *vm, const char *s, uint64_t len)
{
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    uint64_t taken = vuart_puts(&vm->uart, s, len);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    return taken;
}

void vm_uart_input(struct vm *vm, char c)
{
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    vuart_input(&vm->uart, c);
    vm_uart_changed(vm, flags);
}

void vm_uart_set_interactive(struct vm *vm, bool on)
{
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    vuart_set_interactive(&vm->uart, on);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
}

static enum dev_result port_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->size != 1)
        return DEV_NOT_MINE;
    a->value = vm_uart_read(d->vm, (uint16_t)a->offset);
    return DEV_DONE;
}

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->size != 1)
        return DEV_NOT_MINE;
    return vm_uart_write(d->vm, (uint16_t)a->offset, (uint8_t)a->value) ? DEV_DONE : DEV_AGAIN;
}

static void reset(struct dev_entry *d)
{
    vuart_init(d->state, d->vm->cfg.name);
}

static void *state(struct vm *vm, struct vcpu *v)
{
    (void)v;
    return &vm->uart;
}

static const struct dev_range ports[] = {{VUART_BASE, VUART_BASE + VUART_PORTS - 1}};

const struct device com1_device = {
    .name = "com1",
    .ports = {ports, 1, port_read, port_write},
    .state = state,
    .reset = reset,
    .stats = &vuart_stats_table,
};

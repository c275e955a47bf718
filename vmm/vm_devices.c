#include "vmm/vm_devices.h"

#include "vmm/guest_access.h"
#include "vmm/mmio.h"
#include "vmm/vcpu.h"
#include "vmm/vlapic_dev.h"

#define IOAPIC_MMIO_SIZE 0x20 /* IOREGSEL and IOWIN; the rest of the page reads 0 */

static void send(struct vm *vm, const struct ioapic_msg *m)
{
    struct vlapic_ipi ipi = {.vector = m->vector,
                             .mode = (enum apic_delivery)m->mode,
                             .shorthand = APIC_DEST_NONE,
                             .logical = m->logical,
                             .level = true,
                             .trigger_level = m->level,
                             .dest = m->dest};
    vlapic_dev_interrupt(vm, &ipi);
}

__attribute__((noinline)) void vm_uart_changed(struct vm *vm, uint64_t flags)
{
    struct ioapic_msg m;
    bool fire = ioapic_set_line(&vm->ioapic, VUART_IRQ, vuart_irq(&vm->uart), &m);
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    if (fire)
        send(vm, &m);
}

void vm_devices_init(struct vm *vm)
{
    ioapic_reset(&vm->ioapic);
}

void vm_uart_write(struct vm *vm, uint16_t offset, uint8_t value)
{
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    vuart_write(&vm->uart, offset, value);
    vm_uart_changed(vm, flags);
}

void vm_uart_input(struct vm *vm, char c)
{
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    vuart_input(&vm->uart, c);
    vm_uart_changed(vm, flags);
}

void vm_ioapic_mmio(struct vcpu *v, const struct exit_record *e)
{
    struct mmio_op op;
    if (!mmio_fetch(v, e, "the I/O APIC", &op))
        return;
    struct vm *vm = v->vm;
    uint32_t offset = (uint32_t)(e->npf.gpa - IOAPIC_BASE);
    struct ioapic_msg m;
    bool fire = false;
    uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
    /* Registers take aligned 32-bit accesses; others are dropped (reads give all ones). */
    bool reg = op.size == 4 && !(offset & 3) && offset < IOAPIC_MMIO_SIZE;
    if (op.write) {
        if (reg)
            fire = ioapic_write(&vm->ioapic, offset, (uint32_t)mmio_store_data(v, &op), &m);
    } else {
        mmio_load_done(v, &op, reg ? ioapic_read(&vm->ioapic, offset) : ~0ull);
    }
    spin_unlock_irqrestore(&vm->devices_lock, flags);
    vcpu_advance(v, op.len);
    if (fire)
        send(vm, &m);
}

void vm_devices_eoi(struct vm *vm, uint8_t vector)
{
    struct ioapic_msg m;
    for (;;) {
        uint64_t flags = spin_lock_irqsave(&vm->devices_lock);
        bool fire = ioapic_eoi(&vm->ioapic, vector, &m);
        spin_unlock_irqrestore(&vm->devices_lock, flags);
        if (!fire)
            return;
        send(vm, &m);
    }
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's I/O ports. Every port exits; the VM's device table
 * (vmm/dev/device.h, the devices in vmm/dev/) says what it means: COM1
 * (0x3f8-0x3ff) is the virtual UART, 0xf4 is isa-debug-exit (any width:
 * the VM stops with the value as its code), writing "Shutdown" to 0x8900
 * stops the VM with code 0 (Bochs' convention), 0x510/0x511 is fw_cfg, and
 * the legacy PICs (0x20/0x21, 0xa0/0xa1) accept their programming and masks
 * but deliver nothing; PC VMs add the PCI ports and the power controls. Any
 * port no device claims, or an access its device does not take, reads as
 * all ones and ignores writes, counted per VM.
 */
#ifndef POLLUX_VMM_EXIT_IO_H
#define POLLUX_VMM_EXIT_IO_H

#include <stdint.h>

#include "drivers/console.h"
#include "vmm/vm.h"
#include "vmm/dev/vm_devices.h"

/* A port read that is not COM1's (out of line): through the device table. */
uint32_t io_read_other(struct vcpu *v, uint16_t port, unsigned size);

/*
 * A port read: COM1 first, inline, past the table (the commonest port exit,
 * the LSR polled before each byte out, then costs no call but the
 * register's own: the com1 device's read, vmm/dev/com1.c, without the lookup).
 */
static inline uint32_t io_read(struct vcpu *v, uint16_t port, unsigned size)
{
    if (port >= VUART_BASE && port < VUART_BASE + VUART_PORTS && size == 1)
        return vm_uart_read(v->vm, (uint16_t)(port - VUART_BASE));
    return io_read_other(v, port, size);
}

/*
 * A port write, through the device table. False: its device cannot take it
 * now (COM1, the console full): the OUT is not retired and the vCPU waits.
 */
bool io_write(struct vcpu *v, uint16_t port, unsigned size, uint32_t value);

/*
 * An exit the fast path leaves to the full path, which may make the vCPU
 * wait: a COM1 write while the console lacks room for a whole line.
 */
static inline bool io_may_wait(const struct exit_record *e)
{
    return !e->io.in && e->io.port == VUART_BASE && console_room() < VUART_PRINT_MAX;
}

#endif

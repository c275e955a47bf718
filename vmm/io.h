/*
 * The guest's I/O ports. Every port exits; this decides what it means:
 * COM1 (0x3f8-0x3ff) is the virtual UART, 0xf4 is isa-debug-exit (any
 * width: the VM stops with the value as its code), writing "Shutdown" to
 * 0x8900 stops the VM with code 0 (Bochs' convention), 0x510/0x511 is
 * fw_cfg, and the legacy PICs (0x20/0x21, 0xa0/0xa1) accept their
 * programming and masks but deliver nothing. Any other port reads as all
 * ones and ignores writes, counted per VM.
 */
#ifndef POLLUX_VMM_IO_H
#define POLLUX_VMM_IO_H

#include <stdint.h>

#include "vmm/vm.h"

#define DEBUG_EXIT_PORT 0xf4
#define SHUTDOWN_PORT   0x8900

uint32_t io_read(struct vm *vm, uint16_t port, unsigned size);
void io_write(struct vm *vm, uint16_t port, unsigned size, uint32_t value);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The key console on host COM1 (docs/console.md): `s` statistics tables,
 * `v` VMs and vCPUs, `t` the next trace setting, `q` stop every VM and shut
 * down, `h` the keys; Ctrl-A <n> and Ctrl-A c move the input to VM n and
 * back (vmm/console/serial_mux.h). The UART is polled from a timer on the boot CPU.
 */
#ifndef POLLUX_VMM_CONSOLE_CONSOLE_KEYS_H
#define POLLUX_VMM_CONSOLE_CONSOLE_KEYS_H

#include <stdbool.h>

extern bool console_keys; /* console_keys=: poll COM1 for keys */

/* Start polling, on the boot CPU, once the VMs run. */
void console_keys_start(void);

#endif

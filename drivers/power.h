/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Ending the run. system_shutdown prints @shutdown {"status":S} as the last
 * console line and powers off; the status tells tools how the run went.
 */
#ifndef POLLUX_DRIVERS_POWER_H
#define POLLUX_DRIVERS_POWER_H

#include <stdint.h>

#include "drivers/acpi.h"

enum shutdown_status {
    SHUTDOWN_OK = 0,         /* everything ran and exited cleanly */
    SHUTDOWN_FAILED = 1,     /* a bad option, a rejected module or a failed VM */
    SHUTDOWN_BOOT_ERROR = 2, /* the boot information was unusable */
    SHUTDOWN_PANIC = 3,      /* the hypervisor hit a fatal error */
};

/* Remember how to power off through ACPI (from the FADT and \_S5_). */
void power_set_acpi(const struct acpi_info *acpi);

__attribute__((noreturn)) void system_shutdown(int status);

/*
 * Power off without printing: isa-debug-exit (QEMU, the process exits with
 * (status << 1) | 1), the Bochs shutdown port, ACPI S5, then halt.
 */
__attribute__((noreturn)) void system_poweroff(int status);

#endif

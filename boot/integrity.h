/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hypervisor's own image: its text and read-only data are checksummed
 * at boot and again at shutdown, and @integrity says whether they are
 * unchanged. Both are mapped read-only, so a change means something wrote
 * physical memory behind the page tables: a guest access mapped where it
 * must not be, or a stray write by a device.
 */
#ifndef POLLUX_BOOT_INTEGRITY_H
#define POLLUX_BOOT_INTEGRITY_H

#include <stdbool.h>

/* At boot, before any guest runs. */
void integrity_record(void);

/* At shutdown: checksum again and print @integrity; true if nothing changed. */
bool integrity_report(void);

#endif

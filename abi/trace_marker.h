/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The trace marker (docs/timeline.md), shared by pollux and its guests: a
 * byte written to TRACE_MARKER_PORT opens (1) or closes (0) the VM's trace
 * capture window; other values are ignored. From a Linux shell, as root, where the
 * kernel has /dev/port (the bundled Debian kernel does not: guest-tests/linux/outb.c):
 *   printf '\001' | dd of=/dev/port bs=1 seek=$((0x560)) count=1
 */
#ifndef POLLUX_ABI_TRACE_MARKER_H
#define POLLUX_ABI_TRACE_MARKER_H

#define TRACE_MARKER_PORT  0x560
#define TRACE_MARKER_START 1
#define TRACE_MARKER_END   0

#endif

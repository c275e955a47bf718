/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A 64-bit FNV-1a hash of a byte range: cheap, no tables, and any single
 * changed byte changes it. For detecting corruption, not for security.
 */
#ifndef POLLUX_LIB_CHECKSUM_H
#define POLLUX_LIB_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#define CHECKSUM_INIT 0xcbf29ce484222325ull

/* Continue a checksum (start from CHECKSUM_INIT) over len bytes. */
uint64_t checksum_update(uint64_t sum, const void *data, size_t len);

#endif

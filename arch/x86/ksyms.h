/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel symbol table for backtraces. The build links the hypervisor twice:
 * the second link adds a table of text symbols generated from the first
 * (tools/gensyms.py), placed after all code so no address moves.
 */
#ifndef POLLUX_ARCH_X86_KSYMS_H
#define POLLUX_ARCH_X86_KSYMS_H

#include <stdint.h>

/* Name of the function containing addr and the offset into it, or NULL. */
const char *ksyms_lookup(uint64_t addr, uint64_t *offset);

#endif

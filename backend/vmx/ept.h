/* SPDX-License-Identifier: GPL-2.0-only */
/* Intel EPT entries for the generic page-table builder (arch/x86/pagetable.h). */
#ifndef POLLUX_BACKEND_VMX_EPT_H
#define POLLUX_BACKEND_VMX_EPT_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/pagetable.h"

/*
 * R = bit 0, W = bit 1, X = bit 2; leaves carry the memory type in bits 5:3
 * (write-back, or uncacheable for PT_UC) and bit 7 at the 2M/1G levels.
 * Tables grant RWX: the leaf decides. EPT has no user/supervisor bit, so
 * PT_USER is ignored; a writable mapping is always readable (write-only is
 * an EPT misconfiguration).
 */
extern const struct pt_format pt_format_ept;

/* The EPT pointer for a 4-level table at root: write-back walks, A/D flags if asked. */
uint64_t ept_pointer(uint64_t root, bool accessed_dirty);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/* pollux's side of the hypercall ABI (abi/hypercall.h, docs/hypercalls.md). */
#ifndef POLLUX_VMM_EXIT_HYPERCALL_H
#define POLLUX_VMM_EXIT_HYPERCALL_H

#include "abi/hypercall.h"

struct vcpu;
/* Handle the call in v's registers from CPL cpl, return the value for RAX. */
unsigned long vmm_hypercall(struct vcpu *v, unsigned cpl);

#endif

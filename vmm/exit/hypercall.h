/* SPDX-License-Identifier: GPL-2.0-only */
/* pollux's side of the hypercall ABI (abi/hypercall.h, docs/hypercalls.md). */
#ifndef POLLUX_VMM_EXIT_HYPERCALL_H
#define POLLUX_VMM_EXIT_HYPERCALL_H

#include <stdbool.h>

#include "abi/hypercall.h"

struct vcpu;
/*
 * Handle the call in v's registers from CPL cpl, return the value for RAX.
 * *again: the call is not over (HC_PUTS's rest waits for the console's
 * room; the registers name the rest): its instruction stays unretired, to
 * run again once the vCPU has waited (vcpu_wait_console).
 */
unsigned long vmm_hypercall(struct vcpu *v, unsigned cpl, bool *again);

#endif

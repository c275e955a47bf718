/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Catching the faults a guest provokes on purpose: the #UD and #GP handlers
 * note the vector and resume at fault_recover_eip, which the instruction's
 * asm sets just before it runs. For one CPU at a time (the globals are shared).
 */
#ifndef POLLUX_GUEST_FAULT_H
#define POLLUX_GUEST_FAULT_H

#include "guest-tests/runtime/cpu.h"

#define NO_FAULT 0xffu

extern volatile uint32_t fault_vector, fault_recover_eip;
/* The EFLAGS image the last caught fault pushed. */
extern volatile uint32_t fault_eflags;

/* Install the #UD and #GP handlers (after smp_start or cpu_init, which load the IDT). */
void fault_catch_install(void);

/* The vector the access raised, or NO_FAULT. */
unsigned try_rdmsr(uint32_t msr, uint64_t *value);
unsigned try_wrmsr(uint32_t msr, uint64_t value);

/* "#UD", "#GP", "no fault" or "?", for messages. */
const char *fault_name(unsigned vector);

#endif

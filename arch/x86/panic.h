/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fatal errors. Every path prints what is known (registers for a trap or a
 * lockup, a message for software), a frame-pointer backtrace with symbol
 * names, the line @panic {"kind":K,"cpu":N,"vector":V,"rip":"0x..."} (kind
 * exception, software with vector -1, lockup, or stack_overflow when a #PF or
 * #DF hit a stack's guard page (arch/x86/percpu.h)), stops the other CPUs with
 * an NMI, and powers off with status SHUTDOWN_PANIC. Only the first CPU to
 * panic reports; the others halt.
 */
#ifndef POLLUX_ARCH_X86_PANIC_H
#define POLLUX_ARCH_X86_PANIC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/trap.h"

__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
__attribute__((noreturn)) void panic_trap(struct trap_frame *f);
bool panic_in_progress(void);

/*
 * The lockup watchdog (sched/watchdog.h) found `cpu` silent for stale_ms:
 * send it an NMI, whose handler (panic_lockup_nmi) dumps that CPU's
 * registers and backtrace and panics with kind lockup.
 */
void panic_lockup_request(unsigned cpu, unsigned detected_by, uint64_t stale_ms);
/* From the NMI handler: false if this NMI is not the watchdog's for this CPU; else no return. */
bool panic_lockup_nmi(struct trap_frame *f);
const char *exception_name(unsigned vector);

#endif

/*
 * Fatal errors. Both paths print what is known (registers for a trap, a
 * message for software), a frame-pointer backtrace with symbol names, the
 * line @panic {"cpu":N,"vector":V,"rip":"0x..."} (vector -1 for a software
 * panic), stop the other CPUs with an NMI, and power off with status
 * SHUTDOWN_PANIC. Only the first CPU to panic reports; the others halt.
 */
#ifndef POLLUX_ARCH_X86_PANIC_H
#define POLLUX_ARCH_X86_PANIC_H

#include <stdbool.h>

#include "arch/x86/trap.h"

__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
__attribute__((noreturn)) void panic_trap(struct trap_frame *f);
bool panic_in_progress(void);
const char *exception_name(unsigned vector);

#endif

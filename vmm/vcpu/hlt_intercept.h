/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which intercept makes a guest's HLT exit: AMD's Idle HLT intercept where
 * the CPU has it (CPUID 8000_000A EDX[30]) and `idle_hlt=auto`, else the
 * plain HLT intercept. Idle HLT exits only when no virtual interrupt or NMI
 * is pending, so a guest's `sti; hlt` with an interrupt already offered
 * (V_IRQ) takes it without an exit; both exits are handled alike.
 */
#ifndef POLLUX_VMM_VCPU_HLT_INTERCEPT_H
#define POLLUX_VMM_VCPU_HLT_INTERCEPT_H

#include <stdbool.h>

#include "arch/x86/virt.h"

enum idle_hlt_option { IDLE_HLT_AUTO, IDLE_HLT_OFF };

/* The option's names for the command line, NULL-terminated. */
extern const char *const idle_hlt_option_names[];

/* `idle_hlt=` from the command line (default auto). */
extern unsigned idle_hlt_option;

enum hlt_intercept hlt_intercept_choose(bool cpu_has_idle_hlt, enum idle_hlt_option opt);

/* "idle_hlt" or "hlt": the console's, @boot's and @stats' name of the mode. */
const char *hlt_intercept_name(enum hlt_intercept mode);

/* The mode chosen at boot (PLAIN before hlt_intercept_setup). */
enum hlt_intercept hlt_intercept_mode(void);

/* At boot, after the backend is chosen: choose, tell the backend, say which on the console. */
void hlt_intercept_setup(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The counting build's switch (arch/x86/exit_count.h), on its own: the
 * inline exit_count that cpu.h's RDMSR and WRMSR call needs only this flag,
 * so the lowest headers (cpu.h, spinlock.h, the console above them) depend
 * on nothing that can panic.
 */
#include "arch/x86/exit_count.h"

#ifdef POLLUX_EXIT_COUNTS
bool exit_counts_on;
#endif

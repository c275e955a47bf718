/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The counting build's counters, as the lowest code counts them: the entry
 * stubs' macros and the inline exit_count that cpu.h's RDMSR and WRMSR call
 * (the rest, and why, in arch/x86/exit_counts.h). Nothing here reaches
 * above the CPU: the console, which cpu.h serves, never depends on code
 * that can panic.
 */
#ifndef POLLUX_ARCH_X86_EXIT_COUNT_H
#define POLLUX_ARCH_X86_EXIT_COUNT_H

#include "abi/hypercall.h" /* the counters' kinds: EXIT_COUNT_* */

/* struct percpu.exit_counts, right after its self pointer. */
#define EXIT_COUNTS_GS_OFFSET 8
/* struct exit_counts.vmcb: the VMCB the CPU last entered (SVM). */
#define EXIT_COUNTS_VMCB_GS_OFFSET (EXIT_COUNTS_GS_OFFSET + 8 * EXIT_COUNT_KINDS)

#ifdef __ASSEMBLY__

/* Only while GS holds the host's base: not between an SVM guest's VMLOAD and the host's. */
#ifdef POLLUX_EXIT_COUNTS
#define EXIT_COUNT(kind)          incq % gs : (EXIT_COUNTS_GS_OFFSET + 8 * (kind))
#define EXIT_COUNTS_NOTE_VMCB(pa) mov pa, % gs : EXIT_COUNTS_VMCB_GS_OFFSET
#else
#define EXIT_COUNT(kind)
#define EXIT_COUNTS_NOTE_VMCB(pa)
#endif

#else

#include <stdbool.h>
#include <stdint.h>

#ifdef POLLUX_EXIT_COUNTS
extern bool exit_counts_on; /* arch/x86/exit_count.c */

/* No memory clobber: the count must not change how the code around it is compiled. */
static inline void exit_count(unsigned kind)
{
    if (__atomic_load_n(&exit_counts_on, __ATOMIC_RELAXED))
        __asm__ volatile("incq %%gs:%c0(,%1,8)" ::"i"(EXIT_COUNTS_GS_OFFSET), "r"((uint64_t)kind)
                         : "cc");
}
#else
static inline void exit_count(unsigned kind)
{
    (void)kind;
}
#endif

#endif /* __ASSEMBLY__ */

#endif

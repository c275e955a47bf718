/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The architectural exception vectors (Intel SDM vol. 3A 6.3.1, AMD APM
 * vol. 2 8.2). Host interrupt vectors pollux picks itself are in
 * arch/x86/trap.h.
 */
#ifndef POLLUX_ARCH_X86_VECTORS_H
#define POLLUX_ARCH_X86_VECTORS_H

#include <stdbool.h>

#define VECTOR_DE  0 /* divide error */
#define VECTOR_DB  1 /* debug */
#define VECTOR_NMI 2
#define VECTOR_BP  3  /* breakpoint */
#define VECTOR_OF  4  /* overflow */
#define VECTOR_BR  5  /* BOUND range */
#define VECTOR_UD  6  /* invalid opcode */
#define VECTOR_NM  7  /* device not available */
#define VECTOR_DF  8  /* double fault */
#define VECTOR_TS  10 /* invalid TSS */
#define VECTOR_NP  11 /* segment not present */
#define VECTOR_SS  12 /* stack fault */
#define VECTOR_GP  13 /* general protection */
#define VECTOR_PF  14 /* page fault */
#define VECTOR_MF  16 /* x87 floating point */
#define VECTOR_AC  17 /* alignment check */
#define VECTOR_MC  18 /* machine check */
#define VECTOR_XM  19 /* SIMD floating point */

/*
 * The exception's class is fault (SDM table 6-1): the RFLAGS image it pushes
 * has RF set, so that an instruction breakpoint does not fire again when the
 * handler returns to the instruction (SDM 17.3.1.1; KVM's exception_type).
 * #DB counts as a trap: pollux injects it for single steps only.
 */
static inline bool exception_is_fault(unsigned vector)
{
    return vector < 32 && vector != VECTOR_DB && vector != VECTOR_NMI && vector != VECTOR_BP &&
           vector != VECTOR_OF && vector != VECTOR_DF && vector != VECTOR_MC;
}

#endif

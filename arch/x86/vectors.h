/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The architectural exception vectors (Intel SDM vol. 3A 6.3.1, AMD APM
 * vol. 2 8.2). Host interrupt vectors pollux picks itself are in
 * arch/x86/trap.h.
 */
#ifndef POLLUX_ARCH_X86_VECTORS_H
#define POLLUX_ARCH_X86_VECTORS_H

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

#endif

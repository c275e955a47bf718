/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Moving guest GPRs between the CPU and struct guest_regs (arch/x86/virt.h)
 * in the VM entry/exit stubs of both backends. The offsets are checked
 * against the C structure in arch/x86/virt.c.
 */
#ifndef POLLUX_ARCH_X86_GUEST_REGS_H
#define POLLUX_ARCH_X86_GUEST_REGS_H

#ifndef __ASSEMBLY__
#include <stdint.h>
#endif

#define GUEST_RAX 0
#define GUEST_RBX 8
#define GUEST_RCX 16
#define GUEST_RDX 24
#define GUEST_RSI 32
#define GUEST_RDI 40
#define GUEST_RBP 48
#define GUEST_R8  56
#define GUEST_R9  64
#define GUEST_R10 72
#define GUEST_R11 80
#define GUEST_R12 88
#define GUEST_R13 96
#define GUEST_R14 104
#define GUEST_R15 112

#ifndef __ASSEMBLY__
struct guest_regs;
/*
 * The slot of a general-purpose register by its x86 encoding number (0 RAX,
 * 1 RCX, 2 RDX, 3 RBX, 4 RSP, 5 RBP, 6 RSI, 7 RDI, 8-15 R8-R15), as found
 * in ModRM bytes and VMX exit qualifications.
 */
uint64_t *guest_gpr(struct guest_regs *r, unsigned n);
#else
/* clang-format off */
/* Load all GPRs but RAX, RSP and RDI from the structure RDI points to. */
.macro LOAD_GUEST_GPRS
    mov GUEST_RBX(%rdi), %rbx
    mov GUEST_RCX(%rdi), %rcx
    mov GUEST_RDX(%rdi), %rdx
    mov GUEST_RSI(%rdi), %rsi
    mov GUEST_RBP(%rdi), %rbp
    mov GUEST_R8(%rdi), %r8
    mov GUEST_R9(%rdi), %r9
    mov GUEST_R10(%rdi), %r10
    mov GUEST_R11(%rdi), %r11
    mov GUEST_R12(%rdi), %r12
    mov GUEST_R13(%rdi), %r13
    mov GUEST_R14(%rdi), %r14
    mov GUEST_R15(%rdi), %r15
.endm

/* Store all GPRs but RAX, RSP and RDI to the structure RDI points to. */
.macro SAVE_GUEST_GPRS
    mov %rbx, GUEST_RBX(%rdi)
    mov %rcx, GUEST_RCX(%rdi)
    mov %rdx, GUEST_RDX(%rdi)
    mov %rsi, GUEST_RSI(%rdi)
    mov %rbp, GUEST_RBP(%rdi)
    mov %r8, GUEST_R8(%rdi)
    mov %r9, GUEST_R9(%rdi)
    mov %r10, GUEST_R10(%rdi)
    mov %r11, GUEST_R11(%rdi)
    mov %r12, GUEST_R12(%rdi)
    mov %r13, GUEST_R13(%rdi)
    mov %r14, GUEST_R14(%rdi)
    mov %r15, GUEST_R15(%rdi)
.endm
/* clang-format on */
#endif

#endif

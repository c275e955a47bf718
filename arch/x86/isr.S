/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One entry stub per vector. Vectors where the CPU pushes no error code push
 * a zero, so every frame has the same layout (struct trap_frame).
 */
    .text

    .balign 16
    .globl isr_stubs
isr_stubs:
    .set vec, 0
    .rept 256
    .balign 16
    .if (vec == 8) || (vec >= 10 && vec <= 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
    .else
    pushq $0
    .endif
    pushq $vec
    jmp trap_common
    .set vec, vec + 1
    .endr

trap_common:
    cld
    push %rax
    push %rbx
    push %rcx
    push %rdx
    push %rsi
    push %rdi
    push %rbp
    push %r8
    push %r9
    push %r10
    push %r11
    push %r12
    push %r13
    push %r14
    push %r15
    mov %rsp, %rdi
    /* Make the interrupted frame look like a caller, so backtraces walk through it. */
    mov 15 * 8 + 16(%rsp), %rax
    push %rax
    push %rbp
    mov %rsp, %rbp
    call trap_dispatch
    add $16, %rsp
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %r11
    pop %r10
    pop %r9
    pop %r8
    pop %rbp
    pop %rdi
    pop %rsi
    pop %rdx
    pop %rcx
    pop %rbx
    pop %rax
    add $16, %rsp
    iretq

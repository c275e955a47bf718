/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * AP trampoline: copied to a free page below 1 MiB; the startup IPI enters it
 * in real mode at CS = page >> 4, IP = 0. It finds its own base from CS, so
 * the code is position independent and only the parameter block at the end
 * (struct trampoline_params, arch/x86/trampoline.h) is written by the BSP.
 * Path: real mode -> 32-bit protected mode -> long mode on the early
 * identity map -> jump to params.entry(params.arg) on params.stack.
 */
#include "arch/x86/regs.h"

#define OFF(sym) ((sym) - trampoline_start)

    .section .rodata
    .balign 16
    .globl trampoline_start, trampoline_end, trampoline_params
trampoline_start:
    .code16
    cli
    cld
    mov %cs, %ax
    mov %ax, %ds
    xor %ebx, %ebx
    mov %ax, %bx
    shl $4, %ebx

    lea OFF(tr_gdt)(%ebx), %eax
    mov %eax, OFF(tr_gdtr) + 2
    lea OFF(tr_pm32)(%ebx), %eax
    mov %eax, OFF(tr_far32)
    lea OFF(tr_lm64)(%ebx), %eax
    mov %eax, OFF(tr_far64)

    lgdtl OFF(tr_gdtr)
    /* INIT leaves CD and NW set: clear them, or this CPU runs with its caches off. */
    mov %cr0, %eax
    and $0x9fffffff, %eax
    or $1, %eax /* PE */
    mov %eax, %cr0
    ljmpl *OFF(tr_far32)

    .code32
tr_pm32:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    mov %cr4, %eax
    or $0x20, %eax /* PAE */
    mov %eax, %cr4
    mov OFF(trampoline_params)(%ebx), %eax /* cr3 */
    mov %eax, %cr3
    mov $MSR_EFER, %ecx
    rdmsr
    or OFF(trampoline_params) + 8(%ebx), %eax /* efer bits */
    wrmsr
    mov %cr0, %eax
    or $0x80010000, %eax /* PG | WP */
    mov %eax, %cr0
    ljmpl *OFF(tr_far64)(%ebx)

    .code64
tr_lm64:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    xor %eax, %eax
    mov %ax, %fs
    mov %ax, %gs
    mov OFF(trampoline_params) + 16(%rbx), %rsp
    mov OFF(trampoline_params) + 32(%rbx), %rdi
    xor %ebp, %ebp
    jmp *OFF(trampoline_params) + 24(%rbx)

    .balign 8
tr_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff /* 0x08: 32-bit code */
    .quad 0x00cf92000000ffff /* 0x10: data */
    .quad 0x00af9a000000ffff /* 0x18: 64-bit code */
tr_gdtr:
    .short 31
    .long 0
tr_far32:
    .long 0
    .short 0x08
tr_far64:
    .long 0
    .short 0x18

    .balign 8
trampoline_params:
    .skip 40
trampoline_end:

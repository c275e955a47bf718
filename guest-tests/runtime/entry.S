/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Multiboot1 header and entry for the bundled guests. The loader enters
 * _start in 32-bit protected mode, flat segments, paging off, with EAX = the
 * multiboot magic and EBX = the information block.
 */
#define MB_HEADER_MAGIC 0x1BADB002
/* No flags: the ELF headers give the load addresses, and pollux refuses flag
 * bits it does not know. */
#define MB_HEADER_FLAGS 0
#define STACK_SIZE      16384

    .section .multiboot, "a"
    .balign 4
    .long MB_HEADER_MAGIC
    .long MB_HEADER_FLAGS
    .long -(MB_HEADER_MAGIC + MB_HEADER_FLAGS)

    .section .text.entry, "ax"
    .code32
    .globl _start
_start:
    cld
    mov %eax, %esi
    mov %ebx, %ebp

    /* ELF loaders zero .bss, but multiboot does not promise it. */
    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    xor %eax, %eax
    rep stosb

    mov $stack_top, %esp
    push %ebp
    push %esi
    call runtime_start
    /* runtime_start does not return; stop here should it ever do so. */
1:  cli
    hlt
    jmp 1b

    .section .bss
    .balign 16
stack:
    .skip STACK_SIZE
stack_top:

    .section .note.GNU-stack, "", @progbits

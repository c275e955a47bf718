/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where an AP starts after STARTUP: real mode at CS = page >> 4, IP = 0.
 * smp_start copies ap_trampoline..ap_trampoline_end to AP_TRAMPOLINE_PAGE.
 * The copy runs at any page: its own data is addressed relative to CS
 * (DS = CS), and everything else by absolute link-time addresses, which
 * the flat segments make valid once in protected mode.
 */
#include "guest-tests/runtime/cpu.h"

#define CR0_PE 0x01
#define CR0_ET 0x10

    .section .text, "ax"
    .code16
    .globl ap_trampoline, ap_trampoline_end
ap_trampoline:
    cli
    mov %cs, %ax
    mov %ax, %ds
    /* lgdtl: a 16-bit LGDT would keep only 24 bits of the base. */
    lgdtl ap_gdtr - ap_trampoline
    /* A whole new CR0, not an OR into it: INIT leaves CD and NW set, and
     * a guest running with caches disabled is slow for no reason. */
    movl $(CR0_PE | CR0_ET), %eax
    movl %eax, %cr0
    ljmpl $GDT_CODE, $ap_entry32

    .balign 4
ap_gdtr:
    .word GDT_ENTRIES * 8 - 1
    .long cpu_gdt
ap_trampoline_end:

    .code32
ap_entry32:
    mov $GDT_DATA, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %fs
    mov %ax, %gs
    mov %ax, %ss
    /* The slot is the arrival number: 1 for the first AP (the BSP is 0). */
    mov $1, %eax
    lock xadd %eax, ap_arrivals
    inc %eax
    cmp $MAX_CPUS, %eax
    jae park
    /* Slot s uses ap_stacks[s - 1], whose top is ap_stacks + s * AP_STACK_SIZE. */
    mov %eax, %esp
    shl $AP_STACK_SHIFT, %esp
    add $ap_stacks, %esp
    /* 16-byte aligned at the call, as the i386 ABI expects. */
    sub $12, %esp
    push %eax
    call ap_start
    /* ap_start does not return; an AP with no slot stops here too. */
park:
    cli
    hlt
    jmp park

    .section .note.GNU-stack, "", @progbits

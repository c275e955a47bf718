/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Multiboot headers and the 32-bit entry: set up a stack, identity-map the
 * first 4 GiB with 2 MiB pages, enter long mode and call kernel_main(magic,
 * info). GRUB (multiboot2) and QEMU -kernel (multiboot1, on an elf32 copy of
 * this image) both enter here in 32-bit protected mode with paging off; the
 * image is linked at its physical address, so _start is valid for both.
 */
#include "arch/x86/regs.h"
#include "boot/multiboot.h"

#define COM1 0x3f8

    .section .multiboot, "a"
    .balign 4
mb1_header:
    .long MB1_HEADER_MAGIC
    .long MB1_HEADER_FLAGS
    .long 0x100000000 - (MB1_HEADER_MAGIC + MB1_HEADER_FLAGS)

    .balign 8
mb2_header:
    .long MB2_HEADER_MAGIC
    .long 0 /* i386 */
    .long mb2_header_end - mb2_header
    .long 0x100000000 - (MB2_HEADER_MAGIC + (mb2_header_end - mb2_header))
    .balign 8
    .short 3, 0 /* entry address */
    .long 12
    .long _start
    .balign 8
    .short 6, 0 /* page-align modules */
    .long 8
    .balign 8
    .short 0, 0 /* end */
    .long 8
mb2_header_end:

    .section .text.entry, "ax"
    .code32
    .globl _start
_start:
    cli
    cld
    mov %eax, %ebp
    mov %ebx, %esi

    /* Loaders zero .bss per the ELF headers, but multiboot does not promise it. */
    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    xor %eax, %eax
    rep stosb

    mov $boot_stack_top, %esp
    mov %ebp, boot_magic
    mov %esi, boot_info_phys

    mov $0x80000000, %eax
    cpuid
    cmp $0x80000001, %eax
    jb no_long_mode
    mov $0x80000001, %eax
    cpuid
    bt $29, %edx
    jnc no_long_mode
    xor %edi, %edi
    bt $20, %edx
    jnc 1f
    mov $EFER_NXE, %edi
1:
    mov %edi, boot_efer_nxe

    /* PML4[0] -> PDPT, PDPT[0..3] -> four page directories of 2 MiB pages. */
    mov $early_pdpt, %eax
    or $3, %eax
    mov %eax, early_pml4
    mov $early_pd, %eax
    or $3, %eax
    xor %ecx, %ecx
2:  mov %eax, early_pdpt(,%ecx,8)
    add $4096, %eax
    inc %ecx
    cmp $4, %ecx
    jne 2b
    mov $0x83, %eax /* present, writable, 2 MiB */
    xor %ecx, %ecx
3:  mov %eax, early_pd(,%ecx,8)
    add $0x200000, %eax
    inc %ecx
    cmp $2048, %ecx
    jne 3b

    mov %cr4, %eax
    or $CR4_PAE, %eax
    mov %eax, %cr4
    mov $early_pml4, %eax
    mov %eax, %cr3
    mov $MSR_EFER, %ecx
    rdmsr
    or $EFER_LME, %eax
    or %edi, %eax
    wrmsr
    mov %cr0, %eax
    or $(CR0_PG | CR0_WP | CR0_PE), %eax
    mov %eax, %cr0

    lgdt early_gdt_ptr
    ljmp $0x08, $long_mode_entry

no_long_mode:
    mov $no_long_mode_msg, %esi
4:  lodsb
    test %al, %al
    jz 6f
    mov %al, %bl
    mov $(COM1 + 5), %dx
5:  inb %dx, %al
    test $0x20, %al
    jz 5b
    mov $COM1, %dx
    mov %bl, %al
    outb %al, %dx
    jmp 4b
6:  mov $0xf4, %dx /* QEMU isa-debug-exit */
    mov $0x7f, %al
    outb %al, %dx
7:  hlt
    jmp 7b

    .code64
long_mode_entry:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    xor %eax, %eax
    mov %ax, %fs
    mov %ax, %gs
    mov $boot_stack_top, %rsp
    xor %ebp, %ebp
    mov boot_magic, %edi
    mov boot_info_phys, %esi
    call kernel_main
8:  cli
    hlt
    jmp 8b

    .section .rodata
no_long_mode_msg:
    .asciz "pollux: this CPU has no long mode (x86-64); cannot boot\r\n"

    .balign 8
early_gdt:
    .quad 0
    .quad 0x00af9a000000ffff /* 0x08: 64-bit code */
    .quad 0x00cf92000000ffff /* 0x10: data */
early_gdt_ptr:
    .short early_gdt_ptr - early_gdt - 1
    .long early_gdt

    .data
    .globl boot_magic, boot_info_phys, boot_efer_nxe
boot_magic:     .long 0
boot_info_phys: .long 0
boot_efer_nxe:  .long 0

    .bss
    .balign 4096
    .globl early_pml4
early_pml4: .skip 4096
early_pdpt: .skip 4096
early_pd:   .skip 4 * 4096
    /* The boot stack's guard page, unmapped by percpu_create (arch/x86/percpu.h). */
boot_stack_guard: .skip 4096
    .globl boot_stack, boot_stack_top
boot_stack: .skip 16384
boot_stack_top:

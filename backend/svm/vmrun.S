/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * void svm_vmrun(struct guest_regs *regs, uint64_t vmcb_pa, uint64_t host_vmcb_pa)
 *
 * Called with GIF=0 (CLGI) and IF=1, so a host interrupt arriving while the
 * guest runs causes #VMEXIT(INTR) and is taken after the caller's STGI.
 * VMRUN switches only part of the state: VMSAVE/VMLOAD switch FS, GS, TR,
 * LDTR, KernelGSBase, the SYSCALL MSRs and SYSENTER, which hold the host's
 * per-CPU pointer and IST stacks. RAX, RSP, RIP and RFLAGS are in the VMCB;
 * the other guest GPRs are loaded from and saved to *regs here.
 */
#include "arch/x86/exit_count.h"
#include "arch/x86/guest_regs.h"

    .text
    .globl svm_vmrun
svm_vmrun:
    push %rbp
    mov %rsp, %rbp
    push %rbx
    push %r12
    push %r13
    push %r14
    push %r15
    push %rdi /* regs */
    push %rdx /* host VMCB */
    push %rsi /* guest VMCB */

    EXIT_COUNTS_NOTE_VMCB(%rsi)
    EXIT_COUNT(EXIT_COUNT_VMSAVE)
    mov %rdx, %rax
    vmsave %rax

    LOAD_GUEST_GPRS
    mov GUEST_RDI(%rdi), %rdi

    /* The guest's VMLOAD and VMSAVE, counted while GS is still the host's. */
    EXIT_COUNT(EXIT_COUNT_VMLOAD)
    EXIT_COUNT(EXIT_COUNT_VMSAVE)
    mov (%rsp), %rax
    vmload %rax
    vmrun %rax
    vmsave %rax

    push %rdi
    mov 24(%rsp), %rdi /* regs */
    SAVE_GUEST_GPRS
    pop %rax
    mov %rax, GUEST_RDI(%rdi)

    add $8, %rsp      /* guest VMCB */
    pop %rax          /* host VMCB */
    vmload %rax
    EXIT_COUNT(EXIT_COUNT_VMLOAD)
    add $8, %rsp      /* regs */
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    ret

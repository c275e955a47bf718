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
#define R_RBX 8
#define R_RCX 16
#define R_RDX 24
#define R_RSI 32
#define R_RDI 40
#define R_RBP 48
#define R_R8  56
#define R_R9  64
#define R_R10 72
#define R_R11 80
#define R_R12 88
#define R_R13 96
#define R_R14 104
#define R_R15 112

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

    mov %rdx, %rax
    vmsave %rax

    mov R_RBX(%rdi), %rbx
    mov R_RCX(%rdi), %rcx
    mov R_RDX(%rdi), %rdx
    mov R_RSI(%rdi), %rsi
    mov R_RBP(%rdi), %rbp
    mov R_R8(%rdi), %r8
    mov R_R9(%rdi), %r9
    mov R_R10(%rdi), %r10
    mov R_R11(%rdi), %r11
    mov R_R12(%rdi), %r12
    mov R_R13(%rdi), %r13
    mov R_R14(%rdi), %r14
    mov R_R15(%rdi), %r15
    mov R_RDI(%rdi), %rdi

    mov (%rsp), %rax
    vmload %rax
    vmrun %rax
    vmsave %rax

    push %rdi
    mov 24(%rsp), %rdi /* regs */
    mov %rbx, R_RBX(%rdi)
    mov %rcx, R_RCX(%rdi)
    mov %rdx, R_RDX(%rdi)
    mov %rsi, R_RSI(%rdi)
    mov %rbp, R_RBP(%rdi)
    mov %r8, R_R8(%rdi)
    mov %r9, R_R9(%rdi)
    mov %r10, R_R10(%rdi)
    mov %r11, R_R11(%rdi)
    mov %r12, R_R12(%rdi)
    mov %r13, R_R13(%rdi)
    mov %r14, R_R14(%rdi)
    mov %r15, R_R15(%rdi)
    pop %rax
    mov %rax, R_RDI(%rdi)

    add $8, %rsp      /* guest VMCB */
    pop %rax          /* host VMCB */
    vmload %rax
    add $8, %rsp      /* regs */
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    ret

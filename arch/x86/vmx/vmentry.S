/*
 * int vmx_enter(struct guest_regs *regs, uint64_t launched)
 *
 * Called with interrupts disabled; the exit returns with them disabled.
 * Enters the guest of the current VMCS with VMLAUNCH (launched == 0) or
 * VMRESUME, all guest GPRs but RSP loaded from *regs (RSP, RIP and RFLAGS
 * are VMCS fields). HOST_RSP is written here, as it depends on the caller's
 * stack, and HOST_RIP points at vmx_exit_stub, which saves the guest GPRs
 * to *regs and returns 0 to vmx_enter's caller as if vmx_enter had
 * returned. When the instruction itself fails, it falls through and returns
 * VMX_FAIL_INVALID (CF: no current VMCS) or VMX_FAIL_VALID (ZF: the reason
 * is in the VM-instruction error field).
 */
#define R_RAX 0
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

#define VMCS_HOST_RSP    0x6c14
#define VMX_FAIL_INVALID 1
#define VMX_FAIL_VALID   2

    .text
    .globl vmx_enter
vmx_enter:
    push %rbp
    mov %rsp, %rbp
    push %rbx
    push %r12
    push %r13
    push %r14
    push %r15
    push %rdi /* regs: at (%rsp) when the guest exits */

    mov $VMCS_HOST_RSP, %eax
    vmwrite %rsp, %rax
    jbe 2f

    /* MOVs leave the flags alone: ZF still says which instruction to use. */
    test %rsi, %rsi
    mov R_RAX(%rdi), %rax
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
    jnz 1f
    vmlaunch
    jmp 2f
1:  vmresume

    /* Still here: the entry failed before loading any guest state. */
2:  mov $VMX_FAIL_INVALID, %eax
    jc 3f
    mov $VMX_FAIL_VALID, %eax
3:  add $8, %rsp /* regs */
    jmp 4f

    .globl vmx_exit_stub
vmx_exit_stub:
    push %rdi
    mov 8(%rsp), %rdi /* regs */
    mov %rax, R_RAX(%rdi)
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
    add $8, %rsp /* regs */
    xor %eax, %eax

4:  pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    ret

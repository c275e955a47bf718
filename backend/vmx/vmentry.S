/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * int vmx_enter(struct guest_regs *regs, uint64_t launched, uint64_t *host_rsp)
 *
 * Called with interrupts disabled; the exit returns with them disabled.
 * Enters the guest of the current VMCS with VMLAUNCH (launched == 0) or
 * VMRESUME, all guest GPRs but RSP loaded from *regs (RSP, RIP and RFLAGS
 * are VMCS fields). HOST_RSP is written here, as it depends on the caller's
 * stack, and only when it differs from *host_rsp, the value this VMCS
 * holds (nothing else writes the field); HOST_RIP points at vmx_exit_stub, which saves the guest GPRs
 * to *regs and returns 0 to vmx_enter's caller as if vmx_enter had
 * returned. When the instruction itself fails, it falls through and returns
 * VMX_FAIL_INVALID (CF: no current VMCS) or VMX_FAIL_VALID (ZF: the reason
 * is in the VM-instruction error field).
 */
#include "arch/x86/exit_count.h"
#include "arch/x86/guest_regs.h"

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

    cmp %rsp, (%rdx)
    je 5f
    EXIT_COUNT(EXIT_COUNT_VMWRITE)
    mov $VMCS_HOST_RSP, %eax
    vmwrite %rsp, %rax
    jbe 2f
    mov %rsp, (%rdx)

5:

    /* MOVs leave the flags alone: ZF still says which instruction to use. */
    test %rsi, %rsi
    mov GUEST_RAX(%rdi), %rax
    LOAD_GUEST_GPRS
    mov GUEST_RDI(%rdi), %rdi
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
    mov %rax, GUEST_RAX(%rdi)
    SAVE_GUEST_GPRS
    pop %rax
    mov %rax, GUEST_RDI(%rdi)
    add $8, %rsp /* regs */
    xor %eax, %eax

4:  pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    ret

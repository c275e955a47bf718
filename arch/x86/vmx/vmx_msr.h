/*
 * The guest MSRs the backend keeps: those VM entry and exit switch through
 * VMCS guest-state fields (EFER, PAT, FS/GS base, SYSENTER), and those of
 * SYSCALL and SWAPGS, which pollux switches itself. Every other MSR is
 * vmm/'s (MSR_NOT_MINE); the MSR bitmap makes every access exit.
 */
#ifndef POLLUX_ARCH_X86_VMX_VMX_MSR_H
#define POLLUX_ARCH_X86_VMX_VMX_MSR_H

#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmx/vmx_backend.h"

/*
 * The MSRs that SYSCALL and SWAPGS use, which VMX does not switch. The host
 * never uses them, so they are swapped only for guests that may (those that
 * wrote one or entered long mode): guest values in before entry, host
 * values back after the exit.
 */
extern const uint32_t vmx_syscall_msrs[VMX_SYSCALL_MSRS];

static inline void vmx_syscall_msrs_load(const uint64_t *values)
{
    for (unsigned i = 0; i < VMX_SYSCALL_MSRS; i++)
        wrmsr(vmx_syscall_msrs[i], values[i]);
}

enum msr_result vmx_msr_read(struct vcpu *v, uint32_t index, uint64_t *value);
enum msr_result vmx_msr_write(struct vcpu *v, uint32_t index, uint64_t value);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest MSRs the backend keeps: those VM entry and exit switch through
 * VMCS guest-state fields (EFER, PAT, FS/GS base, SYSENTER), and those of
 * SYSCALL and SWAPGS, which pollux switches itself. Every other MSR is
 * vmm/'s (MSR_NOT_MINE); the MSR bitmap makes every access exit.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_MSR_H
#define POLLUX_BACKEND_VMX_VMX_MSR_H

#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/virt.h"
#include "backend/vmx/vmx_backend.h"

/*
 * The MSRs that SYSCALL and SWAPGS use, which VMX does not switch. The host
 * never uses them (no SYSCALL, no SWAPGS), so they are switched only for
 * guests that may (those that wrote one or entered long mode), and only
 * when the vCPU takes and leaves its CPU (vcpu_load, vcpu_put), not at every
 * exit: while it is on the CPU, the CPU holds the guest's values, and the
 * host's are back once it leaves.
 */
extern const uint32_t vmx_syscall_msrs[VMX_SYSCALL_MSRS];

/* The guest's values into the CPU, if it is live and on the CPU (vcpu_load, or gone live). */
void vmx_syscall_msrs_enter(struct vmx_vcpu *s);
/* The guest's KERNEL_GS_BASE read back and the host's values loaded, if the CPU held the guest's.
 */
void vmx_syscall_msrs_leave(struct vmx_vcpu *s);
/* The guest may use them from now on (it wrote one, or entered long mode). */
void vmx_syscall_msrs_go_live(struct vmx_vcpu *s);

enum msr_result vmx_msr_read(struct virt_vcpu *v, uint32_t index, uint64_t *value);
enum msr_result vmx_msr_write(struct virt_vcpu *v, uint32_t index, uint64_t value);

#endif

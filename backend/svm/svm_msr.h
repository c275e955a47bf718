/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest MSRs the backend keeps: those VMRUN and #VMEXIT (or VMLOAD and
 * VMSAVE) switch through VMCB fields: EFER, PAT, FS/GS base, KERNEL_GS_BASE,
 * SYSCALL and SYSENTER. Every other MSR is vmm/'s (MSR_NOT_MINE); the MSR
 * permission map makes every access exit.
 */
#ifndef POLLUX_BACKEND_SVM_SVM_MSR_H
#define POLLUX_BACKEND_SVM_SVM_MSR_H

#include <stdint.h>

#include "arch/x86/virt.h"

struct virt_vcpu;

enum msr_result svm_msr_read(struct virt_vcpu *v, uint32_t index, uint64_t *value);
enum msr_result svm_msr_write(struct virt_vcpu *v, uint32_t index, uint64_t value);

#endif

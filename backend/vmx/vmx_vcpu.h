/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Creating, resetting and destroying VMs (their EPT) and vCPUs (a VMCS and
 * a VPID each): the virt_ops of the same names. A reset writes the whole
 * VMCS from a reset state (vmx_controls.h) and leaves it clear, so that the
 * vCPU may run on any CPU next.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_VCPU_H
#define POLLUX_BACKEND_VMX_VMX_VCPU_H

#include <stdint.h>

struct virt_vm;
struct virt_vcpu;

int vmx_vm_init(struct virt_vm *vm);
int vmx_vm_map(struct virt_vm *vm, uint64_t gpa, uint64_t hpa, uint64_t len, unsigned perms);
void vmx_vm_destroy(struct virt_vm *vm);
int vmx_vcpu_create(struct virt_vcpu *v);
void vmx_vcpu_destroy(struct virt_vcpu *v);
void vmx_vcpu_reset_protected(struct virt_vcpu *v, uint32_t entry);
void vmx_vcpu_reset_real(struct virt_vcpu *v, uint8_t sipi_vector);

#endif

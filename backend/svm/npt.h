/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Nested page tables: a VM's guest-physical to host-physical map, in the
 * host's own x86-64 page-table format (arch/x86/pagetable.h), NX where the
 * host has it: the virt_ops vm_init, vm_map and vm_destroy.
 */
#ifndef POLLUX_BACKEND_SVM_NPT_H
#define POLLUX_BACKEND_SVM_NPT_H

#include <stdint.h>

struct virt_vm;

int svm_vm_init(struct virt_vm *vm);
int svm_vm_map(struct virt_vm *vm, uint64_t gpa, uint64_t hpa, uint64_t len, unsigned perms);
void svm_vm_destroy(struct virt_vm *vm);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Creating, resetting and destroying vCPUs (a VMCB each): the virt_ops of
 * the same names. A reset writes the whole VMCB: intercepts, nested paging,
 * the TSC offset and the pause filter, then the architectural state of
 * INIT (real mode at the startup IPI's vector) or of a multiboot entry.
 */
#ifndef POLLUX_BACKEND_SVM_SVM_VCPU_H
#define POLLUX_BACKEND_SVM_SVM_VCPU_H

#include <stdint.h>

#include "backend/svm/svm_backend.h"

struct virt_vcpu;

int svm_vcpu_create(struct virt_vcpu *v);
void svm_vcpu_destroy(struct virt_vcpu *v);
void svm_vcpu_reset_protected(struct virt_vcpu *v, uint32_t entry);
void svm_vcpu_reset_real(struct virt_vcpu *v, uint8_t sipi_vector);

/* set_pause_exiting's request (s->pause_*) into the VMCB: the intercept and the filter. */
void svm_apply_pause(struct svm_vcpu *s);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's control state as it sees it: SVM keeps CR0, CR3, CR4, EFER
 * (with SVME, which pollux hides), the CPL and the segments in the VMCB,
 * and lets the guest change them without an exit.
 */
#ifndef POLLUX_BACKEND_SVM_SVM_STATE_H
#define POLLUX_BACKEND_SVM_SVM_STATE_H

#include "arch/x86/virt.h"

struct virt_vcpu;

void svm_get_mode(struct virt_vcpu *v, struct guest_mode *m);
void svm_get_code_mode(struct virt_vcpu *v, struct guest_code_mode *m);

#endif

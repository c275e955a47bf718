/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The backends' ops tables, for kernel_main to hand one to virt_select (the
 * seam: arch/x86/virt.h), as KVM's vendor modules hand theirs to
 * kvm_x86_vendor_init: nothing below this floor names a backend.
 */
#ifndef POLLUX_BACKEND_BACKEND_H
#define POLLUX_BACKEND_BACKEND_H

#include "arch/x86/virt.h"

extern const struct virt_ops svm_ops;
extern const struct virt_ops vmx_ops;

/* The ops of the backend features_decode chose, NULL for none. */
static inline const struct virt_ops *backend_ops(enum virt_backend b)
{
    return b == VIRT_SVM ? &svm_ops : b == VIRT_VMX ? &vmx_ops : 0;
}

#endif

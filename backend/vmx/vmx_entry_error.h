/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * When VM entry fails: the VMCS is read back whole, the software checks
 * (vmx_check.h) name the rule it breaks, and the exit record says so
 * (EXIT_ENTRY_FAILED, its text in the vCPU's msg), with the fields on the
 * console. Cold: no exit that succeeds comes here.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_ENTRY_ERROR_H
#define POLLUX_BACKEND_VMX_VMX_ENTRY_ERROR_H

#include "arch/x86/virt.h"
#include "backend/vmx/vmx_backend.h"
#include "backend/vmx/vmx_exit.h"

/* VMLAUNCH/VMRESUME itself failed with rc (VMX_FAIL_*). */
void vmx_entry_vmfail(struct vmx_vcpu *s, int rc, struct exit_record *e);

/* The entry failed on the guest state: an exit with reason 33, 34 or 41. */
void vmx_entry_failure(struct vmx_vcpu *s, struct vmx_exit_info *xi, struct exit_record *e);

#endif

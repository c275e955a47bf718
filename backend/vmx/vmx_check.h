/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A software version of the checks VM entry performs (Intel SDM vol. 3C,
 * 26.2 controls and host state, 26.3 guest state), run when the CPU refuses
 * an entry so the console can name the check instead of an error number.
 * Each returns 0 when its checks pass, or -1 with the first failure, in
 * words, in why. Pure: the state comes from a VMCS snapshot.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_CHECK_H
#define POLLUX_BACKEND_VMX_VMX_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/vmx/vmx_controls.h"

/* VM-execution, VM-exit and VM-entry control fields (VM-instruction error 7). */
int vmx_check_controls(const struct vmx_caps *c, const struct vmcs_state *s, char *why, size_t len);
/* Host-state area (VM-instruction error 8), for a 64-bit host. */
int vmx_check_host(const struct vmx_caps *c, const struct vmcs_state *s, char *why, size_t len);
/* Guest-state area (exit reason 33, or 34/41 for the parts checked later). */
int vmx_check_guest(const struct vmx_caps *c, const struct vmcs_state *s, char *why, size_t len);
/* All three, in the order VM entry performs them. */
int vmx_check_entry(const struct vmx_caps *c, const struct vmcs_state *s, char *why, size_t len);

/* Sign-extended from the top bit of the CPU's linear addresses (bit 47, or 56 with LA57). */
bool vmx_canonical(const struct vmx_caps *c, uint64_t addr);
/* Every byte one of the memory types WRMSR accepts for IA32_PAT. */
bool vmx_pat_valid(uint64_t pat);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's scheduling policy: the directed yield's pivot, halt polling's
 * parameters and spin detection's. The hypervisor options set every VM's
 * defaults (vm_policy_hv); a VM's own words (GUESTS, vmm/vmconfig.h) with
 * the same names override them for that VM, so two VMs with different
 * policies can share one boot. One option table serves both
 * (vm_policy_options), so names, ranges and help cannot drift apart.
 */
#ifndef POLLUX_VMM_VM_POLICY_H
#define POLLUX_VMM_VM_POLICY_H

#include <stddef.h>

#include "lib/json.h"
#include "lib/options.h"
#include "sched/halt_poll.h"
#include "sched/spin.h"

struct vm_policy {
    unsigned yield_pivot;              /* yield_pivot=: enum yield_pivot */
    struct halt_poll_params halt_poll; /* halt_poll_ns=, halt_poll_mode=, halt_poll_ns_* */
    struct spin_params spin;           /* ple=, ple_*, pause_filter_*, spin_sw_* */
};

/* The hypervisor options' values: every VM starts from them. */
extern struct vm_policy vm_policy_hv;

#define VM_POLICY_OPTIONS 20

/* The policy's options bound to p's fields, into out; returns how many (VM_POLICY_OPTIONS). */
size_t vm_policy_options(struct vm_policy *p, struct option out[VM_POLICY_OPTIONS]);

/* The effective policy as @vm_start reports it: the members of a "policy" object. */
void vm_policy_json(const struct vm_policy *p, const struct spin_choice *spin, struct json *j);

#endif

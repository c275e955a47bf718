/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's scheduling policy: the directed yield's pivot, halt polling's
 * parameters, spin detection's and the local APIC timer's advance. The
 * hypervisor options set every VM's defaults (vm_policy_hv); a VM's own
 * words (GUESTS, vmm/vmconfig.h) with the same names override them for that
 * VM, so two VMs with different policies can share one boot. One option
 * table serves both (vm_policy_options), so names, ranges and help cannot
 * drift apart.
 */
#ifndef POLLUX_VMM_VM_POLICY_H
#define POLLUX_VMM_VM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/json.h"
#include "lib/options.h"
#include "sched/halt_poll.h"
#include "sched/spin.h"

/* pv=: the words, bit i for vm_policy_pv_words[i]; 0 when pv= was not given. */
enum vm_policy_pv_word {
    PV_WORD_STEAL_TIME,
    PV_WORD_PV_UNHALT,
    PV_WORD_PV_SCHED_YIELD,
    PV_WORD_PV_TLB_FLUSH,
    PV_WORD_PV_SEND_IPI,
    PV_WORD_ALL,
    PV_WORD_NONE,
};

extern const char *const vm_policy_pv_words[];

struct vm_policy {
    unsigned pv;                       /* pv=: the words given (enum vm_policy_pv_word bits) */
    bool pv_enforce;                   /* pv_enforce=: refuse what pv= does not offer */
    unsigned yield_pivot;              /* yield_pivot=: enum yield_pivot */
    struct halt_poll_params halt_poll; /* halt_poll_ns=, halt_poll_mode=, halt_poll_ns_* */
    struct spin_params spin;           /* ple=, ple_*, pause_filter_*, spin_sw_* */
    int64_t timer_advance_ns;          /* KVM's lapic_timer_advance_ns: -1 adaptive, 0 off, N ns */
};

/* The hypervisor options' values: every VM starts from them. */
extern struct vm_policy vm_policy_hv;

#define VM_POLICY_OPTIONS 23

/* The policy's options bound to p's fields, into out; returns how many (VM_POLICY_OPTIONS). */
size_t vm_policy_options(struct vm_policy *p, struct option out[VM_POLICY_OPTIONS]);

/*
 * The KVM_FEATURE_* bits of KVM_PV_SCHED_FEATURES that pv= words give: each
 * word its feature, `all` every one, `none` none; pv_sched_yield and
 * pv_tlb_flush bring steal_time (Linux uses them only with it). No words
 * (pv= not given): every one for a Linux guest (what KVM offers with
 * `-cpu host`), none for the others (what they always had).
 */
uint32_t vm_policy_kvm_features(unsigned pv_words, bool linux);

/* The features' pv= words, comma-separated ("none" for 0), as @vm_start reports them. */
void vm_policy_pv_names(uint32_t features, char *buf, size_t len);

/* The effective policy as @vm_start reports it: the members of a "policy" object. */
void vm_policy_json(const struct vm_policy *p, const struct spin_choice *spin, struct json *j);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's CPUID answers, worked out once when the VM is created, so that a
 * guest's CPUID costs a table index instead of the policy filter.
 *
 * An answer is the filter's result with every per-vCPU input of struct
 * cpuid_view off, plus the bits each of those inputs adds when on: the
 * lookup patches in the asking vCPU's APIC enable, CR4.OSXSAVE, CR4.PKE and
 * id, so nothing needs refreshing when they change. Answers that follow the
 * XSAVE state in force (cpuid_follows_xsave_state), subleaves past 1 of the
 * leaves that have subleaves, leaves outside the two spans and the
 * hypervisor range are not kept: the caller filters those in full.
 */
#ifndef POLLUX_VMM_EXIT_CPUID_CACHE_H
#define POLLUX_VMM_EXIT_CPUID_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/exit/cpuid.h"

#define CPUID_CACHE_SPAN     32 /* leaves 0.. and 0x80000000.. kept */
#define CPUID_CACHE_SUBLEAFS 2  /* subleaves kept of a leaf that has them */

/* What a lookup needs from the asking vCPU (struct cpuid_answer.needs). */
#define CPUID_NEEDS_CR4  (1u << 0)
#define CPUID_NEEDS_APIC (1u << 1)
#define CPUID_NEEDS_ID   (1u << 2)

#define CPUID_CR4_OSXSAVE (1u << 18)
#define CPUID_CR4_PKE     (1u << 22)

enum cpuid_answer_scope {
    CPUID_ANSWER_NONE,        /* not kept: filter in full */
    CPUID_ANSWER_ANY_SUBLEAF, /* the leaf ignores ECX */
    CPUID_ANSWER_THIS_SUBLEAF,
};

struct cpuid_answer {
    uint32_t base[4];    /* EAX..EDX with every per-vCPU input off and vCPU id 0 */
    uint32_t apic_en[4]; /* set while the vCPU's local APIC is enabled */
    uint32_t osxsave[4]; /* set while the vCPU's CR4.OSXSAVE is */
    uint32_t pke[4];     /* set while the vCPU's CR4.PKE is */
    uint32_t id[4];      /* the field holding the vCPU id, at its lowest bit */
    uint8_t scope;       /* enum cpuid_answer_scope */
    uint8_t needs;       /* CPUID_NEEDS_* */
};

struct cpuid_cache {
    struct cpuid_answer basic[CPUID_CACHE_SPAN][CPUID_CACHE_SUBLEAFS];
    struct cpuid_answer extended[CPUID_CACHE_SPAN][CPUID_CACHE_SUBLEAFS];
};

/* The per-vCPU inputs a lookup patches in. */
struct cpuid_vcpu_inputs {
    unsigned vcpu_id;
    uint64_t guest_cr4;
    bool apic_enabled;
};

/* Work out every kept answer for a VM seen through view (its per-vCPU fields are ignored). */
void cpuid_cache_fill(struct cpuid_cache *c, const struct cpuid_view *view, cpuid_read_fn read);

#define CPUID_CACHE_EXTENDED_FIRST 0x80000000u

/* The kept answer for (leaf, subleaf), or NULL: then filter in full. Inline: the exit fast path. */
static inline const struct cpuid_answer *cpuid_cache_find(const struct cpuid_cache *c,
                                                          uint32_t leaf, uint32_t subleaf)
{
    const struct cpuid_answer *slot;
    if (leaf < CPUID_CACHE_SPAN)
        slot = c->basic[leaf];
    else if (leaf - CPUID_CACHE_EXTENDED_FIRST < CPUID_CACHE_SPAN)
        slot = c->extended[leaf - CPUID_CACHE_EXTENDED_FIRST];
    else
        return 0;
    if (slot[0].scope == CPUID_ANSWER_ANY_SUBLEAF)
        return &slot[0];
    if (subleaf < CPUID_CACHE_SUBLEAFS && slot[subleaf].scope == CPUID_ANSWER_THIS_SUBLEAF)
        return &slot[subleaf];
    return 0;
}

/* The per-vCPU bits of a for in (a->needs non-zero). */
struct cpuid_regs cpuid_answer_patched(const struct cpuid_answer *a,
                                       const struct cpuid_vcpu_inputs *in);

/* a for one vCPU: only the inputs a->needs names are read. */
static inline struct cpuid_regs cpuid_answer_for(const struct cpuid_answer *a,
                                                 const struct cpuid_vcpu_inputs *in)
{
    if (!a->needs)
        return (struct cpuid_regs){a->base[0], a->base[1], a->base[2], a->base[3]};
    return cpuid_answer_patched(a, in);
}

#endif

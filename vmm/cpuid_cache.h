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
#ifndef POLLUX_VMM_CPUID_CACHE_H
#define POLLUX_VMM_CPUID_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/cpuid.h"

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

/* The kept answer for (leaf, subleaf), or NULL: then filter in full. */
const struct cpuid_answer *cpuid_cache_find(const struct cpuid_cache *c, uint32_t leaf,
                                            uint32_t subleaf);

/* a for one vCPU: only the inputs a->needs names are read. */
static inline struct cpuid_regs cpuid_answer_for(const struct cpuid_answer *a,
                                                 const struct cpuid_vcpu_inputs *in)
{
    struct cpuid_regs r = {a->base[0], a->base[1], a->base[2], a->base[3]};
    if (!a->needs)
        return r;
    uint32_t add[4] = {0};
    for (int i = 0; i < 4; i++) {
        if (a->needs & CPUID_NEEDS_ID && a->id[i])
            add[i] |= (in->vcpu_id << __builtin_ctz(a->id[i])) & a->id[i];
        if (a->needs & CPUID_NEEDS_APIC && in->apic_enabled)
            add[i] |= a->apic_en[i];
        if (in->guest_cr4 & CPUID_CR4_OSXSAVE)
            add[i] |= a->osxsave[i];
        if (in->guest_cr4 & CPUID_CR4_PKE)
            add[i] |= a->pke[i];
    }
    r.eax |= add[0];
    r.ebx |= add[1];
    r.ecx |= add[2];
    r.edx |= add[3];
    return r;
}

#endif

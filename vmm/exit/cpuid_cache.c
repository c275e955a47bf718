/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/cpuid_cache.h"

#include "lib/string.h"
#include "vmm/exit/cpuid_policy.h"

static struct cpuid_regs filtered(uint32_t leaf, uint32_t subleaf, const struct cpuid_view *view,
                                  struct cpuid_regs host)
{
    cpuid_filter(leaf, subleaf, view, &host);
    return host;
}

/* The bits of on that off lacks: what turning one input on adds. */
static void added_bits(struct cpuid_regs off, struct cpuid_regs on, uint32_t out[4])
{
    out[0] = on.eax & ~off.eax;
    out[1] = on.ebx & ~off.ebx;
    out[2] = on.ecx & ~off.ecx;
    out[3] = on.edx & ~off.edx;
}

static bool any(const uint32_t bits[4])
{
    return bits[0] | bits[1] | bits[2] | bits[3];
}

/*
 * The answer with the per-vCPU inputs off, and the filter run once more per
 * input with only that input on: every such input only adds bits (the
 * `apic.EN` and `cr4.*` sources set theirs, the vCPU id fills a field of
 * its own), so the differences are exactly what the lookup patches in.
 */
static void fill_answer(struct cpuid_answer *a, uint32_t leaf, uint32_t subleaf,
                        const struct cpuid_view *vm_view, cpuid_read_fn read,
                        enum cpuid_answer_scope scope)
{
    struct cpuid_view off = *vm_view;
    off.vcpu_id = 0;
    off.guest_cr4 = 0;
    off.apic_enabled = false;
    struct cpuid_regs host = read(leaf, subleaf);
    struct cpuid_regs base = filtered(leaf, subleaf, &off, host);

    struct cpuid_view on = off;
    on.apic_enabled = true;
    added_bits(base, filtered(leaf, subleaf, &on, host), a->apic_en);
    on = off;
    on.guest_cr4 = CPUID_CR4_OSXSAVE;
    added_bits(base, filtered(leaf, subleaf, &on, host), a->osxsave);
    on = off;
    on.guest_cr4 = CPUID_CR4_PKE;
    added_bits(base, filtered(leaf, subleaf, &on, host), a->pke);
    on = off;
    on.vcpu_id = ~0u;
    added_bits(base, filtered(leaf, subleaf, &on, host), a->id);

    a->base[0] = base.eax;
    a->base[1] = base.ebx;
    a->base[2] = base.ecx;
    a->base[3] = base.edx;
    a->needs = (any(a->apic_en) ? CPUID_NEEDS_APIC : 0) |
               (any(a->osxsave) || any(a->pke) ? CPUID_NEEDS_CR4 : 0) |
               (any(a->id) ? CPUID_NEEDS_ID : 0);
    a->scope = (uint8_t)scope;
}

/* Whether any policy row of leaf names no subleaf: then ECX never matters. */
static bool ignores_subleaf(uint32_t leaf)
{
    bool listed = false;
    for (unsigned i = 0; i < cpuid_policy_count; i++) {
        if (cpuid_policy_table[i].leaf != leaf)
            continue;
        listed = true;
        if (cpuid_policy_table[i].kind == CPUID_SUBLEAF_NONE)
            return true;
    }
    return !listed; /* a leaf the table does not list reads 0 whatever ECX is */
}

static void fill_leaf(struct cpuid_answer slot[CPUID_CACHE_SUBLEAFS], uint32_t leaf,
                      const struct cpuid_view *view, cpuid_read_fn read)
{
    bool beyond =
        leaf >= CPUID_CACHE_EXTENDED_FIRST ? leaf > view->max_ext_leaf : leaf > view->max_leaf;
    if (beyond || ignores_subleaf(leaf)) {
        fill_answer(&slot[0], leaf, 0, view, read, CPUID_ANSWER_ANY_SUBLEAF);
        return;
    }
    for (uint32_t sub = 0; sub < CPUID_CACHE_SUBLEAFS; sub++)
        if (!cpuid_follows_xsave_state(leaf, sub))
            fill_answer(&slot[sub], leaf, sub, view, read, CPUID_ANSWER_THIS_SUBLEAF);
}

void cpuid_cache_fill(struct cpuid_cache *c, const struct cpuid_view *view, cpuid_read_fn read)
{
    memset(c, 0, sizeof(*c));
    for (uint32_t i = 0; i < CPUID_CACHE_SPAN; i++) {
        fill_leaf(c->basic[i], i, view, read);
        fill_leaf(c->extended[i], CPUID_CACHE_EXTENDED_FIRST + i, view, read);
    }
}

struct cpuid_regs cpuid_answer_patched(const struct cpuid_answer *a,
                                       const struct cpuid_vcpu_inputs *in)
{
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
    return (struct cpuid_regs){a->base[0] | add[0], a->base[1] | add[1], a->base[2] | add[2],
                               a->base[3] | add[3]};
}

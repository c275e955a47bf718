/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/cpuid.h"

#include "arch/x86/regs.h"
#include "lib/string.h"
#include "vmm/exit/cpuid_policy.h"
#include "vmm/exit/hypercall.h"
#include "vmm/dev/kvm_pv.h"

#define HYPERVISOR_FIRST 0x40000000u
#define HYPERVISOR_LAST  0x4fffffffu
#define EXTENDED_FIRST   0x80000000u

/* Feature bits the rest of pollux acts on, in the guest's (filtered) view. */
#define L7B_TSC_ADJUST  (1u << 1)
#define L7D_IBRS_IBPB   (1u << 26)
#define L7D_STIBP       (1u << 27)
#define L7D_SSBD        (1u << 31)
#define L7C_PKU         (1u << 3)
#define L7C_LA57        (1u << 16)
#define L7C_RDPID       (1u << 22)
#define L7C_PKS         (1u << 31)
#define LD1A_XSAVES     (1u << 3)
#define E1D_RDTSCP      (1u << 27)
#define E8B_IBPB        (1u << 12)
#define E8B_IBRS        (1u << 14)
#define E8B_STIBP       (1u << 15)
#define E8B_SSBD        (1u << 24)
#define SPEC_CTRL_IBRS  (1u << 0)
#define SPEC_CTRL_STIBP (1u << 1)
#define SPEC_CTRL_SSBD  (1u << 2)
#define AMD_EBX         0x68747541u /* "Auth" */
/* The SDM's MAXPHYADDR of a CPU without leaf 0x80000008 (with PAE, which every VMX or SVM CPU has).
 */
#define MAXPHYADDR_WITHOUT_LEAF 36

struct guest_features guest_features;

static unsigned log2_ceil(unsigned n)
{
    unsigned s = 0;
    while ((1u << s) < n)
        s++;
    return s;
}

static const struct cpuid_leaf_policy *policy_for(uint32_t leaf, uint32_t subleaf)
{
    const struct cpuid_leaf_policy *others = 0;
    for (unsigned i = 0; i < cpuid_policy_count; i++) {
        const struct cpuid_leaf_policy *p = &cpuid_policy_table[i];
        if (p->leaf != leaf)
            continue;
        if (p->kind == CPUID_SUBLEAF_NONE ||
            (p->kind == CPUID_SUBLEAF_EXACT && p->subleaf == subleaf))
            return p;
        if (p->kind == CPUID_SUBLEAF_OTHERS)
            others = p;
    }
    return others;
}

/* The view-dependent sources that are on, one bit per enum cpuid_source: worked out once per CPUID.
 */
static unsigned sources_on(const struct cpuid_view *view)
{
    unsigned on = 0;
    if (view->apic_enabled)
        on |= 1u << CPUID_FROM_APIC_EN;
    if (view->guest_cr4 & CR4_OSXSAVE)
        on |= 1u << CPUID_FROM_CR4_OSXSAVE;
    if (view->guest_cr4 & CR4_PKE)
        on |= 1u << CPUID_FROM_CR4_PKE;
    if (view->exec & CPUID_EXEC_RDTSCP)
        on |= 1u << CPUID_FROM_EXEC_RDTSCP;
    if (view->exec & CPUID_EXEC_INVPCID)
        on |= 1u << CPUID_FROM_EXEC_INVPCID;
    if (view->exec & CPUID_EXEC_XSAVES)
        on |= 1u << CPUID_FROM_EXEC_XSAVES;
    return on;
}

#define EXEC_SOURCES                                                                               \
    ((1u << CPUID_FROM_EXEC_RDTSCP) | (1u << CPUID_FROM_EXEC_INVPCID) |                            \
     (1u << CPUID_FROM_EXEC_XSAVES))

/* One register: the host's bits where the table passes them, 1 where it sets them. */
static uint32_t apply(const uint32_t mask[CPUID_FROM_COUNT], uint32_t host, unsigned on)
{
    uint32_t out = (host & mask[CPUID_FROM_HOST]) | mask[CPUID_FROM_SET];
    for (unsigned left = on; left; left &= left - 1) {
        unsigned s = (unsigned)__builtin_ctz(left);
        /* The state sources set their bits; the exec ones pass the host's. */
        out |= ((EXEC_SOURCES >> s) & 1) ? host & mask[s] : mask[s];
    }
    return out;
}

bool cpuid_follows_xsave_state(uint32_t leaf, uint32_t subleaf)
{
    return leaf == 0xd && subleaf <= 1;
}

/* The fields of `pollux` rows: what pollux computes, only where the table says it does. */
static void computed(uint32_t leaf, uint32_t subleaf, const struct cpuid_view *view,
                     const struct cpuid_regs *host, const struct cpuid_leaf_policy *p,
                     uint32_t out[4])
{
    uint32_t v[4] = {0};
    switch (leaf) {
    case 1:
        v[1] = (view->vcpu_id << 24) | ((view->nvcpus & 0xff) << 16);
        break;
    case 0xb:
    case 0x1f:
        /* One thread per core, one package holding every vCPU. */
        v[3] = view->vcpu_id;
        if (subleaf == 0) {
            v[1] = 1;
            v[2] = 1u << 8;
        } else if (subleaf == 1) {
            v[0] = log2_ceil(view->nvcpus);
            v[1] = view->nvcpus;
            v[2] = (2u << 8) | 1;
        } else {
            v[2] = subleaf & 0xff;
        }
        break;
    case 0xd:
        if (cpuid_follows_xsave_state(leaf, subleaf))
            v[1] = host->ebx;
        if (subleaf == 0) {
            v[0] = (uint32_t)view->xcr0_supported;
            v[2] = view->xsave_size;
            v[3] = (uint32_t)(view->xcr0_supported >> 32);
        } else if (subleaf < 64 && (view->xcr0_supported >> subleaf) & 1) {
            v[0] = host->eax;
            v[1] = host->ebx;
            v[2] = host->ecx;
            v[3] = host->edx;
        }
        break;
    case 0x80000008:
        v[2] = (view->nvcpus - 1) | (log2_ceil(view->nvcpus) << 12);
        break;
    }
    for (int i = 0; i < 4; i++)
        out[i] |= v[i] & p->mask[i][CPUID_FROM_POLLUX];
}

/*
 * The range reserved for hypervisors holds only pollux's and KVM's leaves:
 * never the host's (an L0 hypervisor's own signature).
 */
static void hypervisor_leaf(uint32_t leaf, const struct cpuid_view *view, struct cpuid_regs *r)
{
    if (kvm_pv_cpuid(leaf, view->kvm_features, r))
        return;
    *r = (struct cpuid_regs){0};
    if (leaf == POLLUX_CPUID_BASE) {
        const char *sig = POLLUX_CPUID_SIGNATURE;
        r->eax = POLLUX_CPUID_TIMING;
        memcpy(&r->ebx, sig, 4);
        memcpy(&r->ecx, sig + 4, 4);
        memcpy(&r->edx, sig + 8, 4);
    } else if (leaf == POLLUX_CPUID_TIMING) {
        r->eax = (uint32_t)view->tsc_khz;
        r->ebx = (uint32_t)view->apic_timer_khz;
    }
}

void cpuid_filter(uint32_t leaf, uint32_t subleaf, const struct cpuid_view *view,
                  struct cpuid_regs *r)
{
    if (leaf >= HYPERVISOR_FIRST && leaf <= HYPERVISOR_LAST) {
        hypervisor_leaf(leaf, view, r);
        return;
    }
    bool beyond = leaf >= EXTENDED_FIRST ? leaf > view->max_ext_leaf : leaf > view->max_leaf;
    const struct cpuid_leaf_policy *p = beyond ? 0 : policy_for(leaf, subleaf);
    uint32_t out[4] = {0};
    if (p) {
        const uint32_t host[4] = {r->eax, r->ebx, r->ecx, r->edx};
        unsigned on = sources_on(view);
        for (int i = 0; i < 4; i++)
            out[i] = apply(p->mask[i], host[i], on);
        computed(leaf, subleaf, view, r, p, out);
    }
    *r = (struct cpuid_regs){out[0], out[1], out[2], out[3]};
}

static struct cpuid_regs filtered(const struct cpuid_view *view, cpuid_read_fn read, uint32_t leaf,
                                  uint32_t subleaf)
{
    struct cpuid_regs r = read(leaf, subleaf);
    cpuid_filter(leaf, subleaf, view, &r);
    return r;
}

void cpuid_guest_features(const struct cpuid_view *view, cpuid_read_fn read,
                          struct guest_features *out)
{
    struct cpuid_regs l7 = filtered(view, read, 7, 0), d1 = filtered(view, read, 0xd, 1);
    struct cpuid_regs e1 = filtered(view, read, 0x80000001, 0);
    struct cpuid_regs e8 = filtered(view, read, 0x80000008, 0);
    memset(out, 0, sizeof(*out));
    out->tsc_aux = (e1.edx & E1D_RDTSCP) || (l7.ecx & L7C_RDPID);
    out->tsc_adjust = l7.ebx & L7B_TSC_ADJUST;
    out->xsaves = d1.eax & LD1A_XSAVES;
    out->pks = l7.ecx & L7C_PKS;
    out->pku = l7.ecx & L7C_PKU;
    out->la57 = l7.ecx & L7C_LA57;
    out->maxphyaddr = (e8.eax & 0xff) ? e8.eax & 0xff : MAXPHYADDR_WITHOUT_LEAF;
    if ((l7.edx & L7D_IBRS_IBPB) || (e8.ebx & E8B_IBRS))
        out->spec_ctrl |= SPEC_CTRL_IBRS;
    if ((l7.edx & L7D_STIBP) || (e8.ebx & E8B_STIBP))
        out->spec_ctrl |= SPEC_CTRL_STIBP;
    if ((l7.edx & L7D_SSBD) || (e8.ebx & E8B_SSBD))
        out->spec_ctrl |= SPEC_CTRL_SSBD;
    out->ibpb = (l7.edx & L7D_IBRS_IBPB) || (e8.ebx & E8B_IBPB);
    out->amd = read(0, 0).ebx == AMD_EBX;
}

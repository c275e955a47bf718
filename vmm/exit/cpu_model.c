/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/cpu_model.h"

#include "arch/x86/fpu.h"
#include "arch/x86/tsc.h"
#include "arch/x86/virt.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "vmm/exit/cpuid_policy.h"
#include "vmm/dev/guest_msrs.h"

static struct cpuid_view shared;

static struct cpuid_regs host_cpuid(uint32_t leaf, uint32_t subleaf)
{
    return cpuid(leaf, subleaf);
}

void cpu_model_view(struct cpuid_view *view)
{
    *view = shared;
}

void cpu_model_fill_cache(struct cpuid_cache *c, unsigned nvcpus, uint32_t kvm_features)
{
    struct cpuid_view view = shared;
    view.nvcpus = nvcpus;
    view.kvm_features = kvm_features;
    cpuid_cache_fill(c, &view, host_cpuid);
}

/* The host's values of every leaf the policy names, for tools to check the filter against. */
static void report_host_cpuid(void)
{
    char buf[4096], key[24];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    for (unsigned i = 0; i < cpuid_policy_count; i++) {
        const struct cpuid_leaf_policy *p = &cpuid_policy_table[i];
        uint32_t max = p->leaf >= 0x80000000u ? shared.max_ext_leaf : shared.max_leaf;
        if (p->kind == CPUID_SUBLEAF_OTHERS || p->leaf > max)
            continue;
        if (p->kind == CPUID_SUBLEAF_NONE)
            snprintf(key, sizeof(key), "0x%x", p->leaf);
        else
            snprintf(key, sizeof(key), "0x%x.%u", p->leaf, p->subleaf);
        struct cpuid_regs r = cpuid(p->leaf, p->subleaf);
        json_object(&j, key);
        json_hex(&j, "eax", r.eax);
        json_hex(&j, "ebx", r.ebx);
        json_hex(&j, "ecx", r.ecx);
        json_hex(&j, "edx", r.edx);
        json_close(&j);
    }
    console_event("host_cpuid", &j);
}

void cpu_model_init(void)
{
    shared.max_leaf = cpuid(0, 0).eax;
    shared.max_ext_leaf = cpuid(0x80000000u, 0).eax;
    shared.tsc_khz = tsc_khz;
    shared.apic_timer_khz = tsc_khz; /* the virtual APIC timer counts at the TSC rate */
    shared.xcr0_supported = fpu_host_xcr0();
    shared.xsave_size = fpu_xsave_size();
    shared.exec = (virt_features.guest_rdtscp ? CPUID_EXEC_RDTSCP : 0) |
                  (virt_features.guest_invpcid ? CPUID_EXEC_INVPCID : 0) |
                  (virt_features.guest_xsaves ? CPUID_EXEC_XSAVES : 0);
    shared.nvcpus = 1;
    cpuid_guest_features(&shared, host_cpuid, &guest_features);
    if (guest_features.spec_ctrl)
        host_spec_ctrl = rdmsr(MSR_SPEC_CTRL);
    shared.nvcpus = 0;
    report_host_cpuid();
}

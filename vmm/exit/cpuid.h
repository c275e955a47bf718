/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CPUID a guest sees: the host's, filtered by the policy of
 * docs/cpuid.md (vmm/exit/cpuid_policy.h) and completed with what pollux
 * computes (the vCPU's APIC ID, the VM's topology, the XSAVE components it
 * switches). Leaves 0x40000000-0x4fffffff are the hypervisor's: 0x40000000
 * (signature "pollux") and 0x40000010 (timing) are pollux's own,
 * 0x40000100-0x40000101 are KVM's (vmm/dev/kvm_pv.h), the others read 0.
 */
#ifndef POLLUX_VMM_EXIT_CPUID_H
#define POLLUX_VMM_EXIT_CPUID_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"

/* Instructions the backend lets a guest execute: the `exec.*` policies. */
#define CPUID_EXEC_RDTSCP  (1u << 0) /* RDTSCP and RDPID */
#define CPUID_EXEC_INVPCID (1u << 1)
#define CPUID_EXEC_XSAVES  (1u << 2) /* XSAVES and XRSTORS */

/* What the answer depends on besides the host's values. */
struct cpuid_view {
    unsigned vcpu_id, nvcpus;
    uint64_t guest_cr4;              /* OSXSAVE and OSPKE are reflected from it */
    bool apic_enabled;               /* IA32_APIC_BASE.EN: the APIC feature bit */
    unsigned exec;                   /* CPUID_EXEC_* */
    uint32_t max_leaf, max_ext_leaf; /* the host's: leaves above them read 0 */
    uint64_t tsc_khz, apic_timer_khz;
    uint64_t xcr0_supported; /* XSAVE components a guest may enable */
    uint32_t xsave_size;     /* XSAVE area size for all of them */
    uint32_t kvm_features;   /* the VM's pv= features in 0x40000101 EAX (vmm/dev/kvm_pv.h) */
};

/* Apply the filter to host values r of (leaf, subleaf). */
void cpuid_filter(uint32_t leaf, uint32_t subleaf, const struct cpuid_view *view,
                  struct cpuid_regs *r);

/*
 * The answer holds the host CPU's value for the XSAVE components enabled
 * now: the guest's XCR0 and IA32_XSS are in force while pollux handles its
 * exits, so it is read at the exit, never ahead of time.
 */
bool cpuid_follows_xsave_state(uint32_t leaf, uint32_t subleaf);

/*
 * What the filtered CPUID offers that the rest of pollux acts on (which
 * MSRs exist, the width of canonical addresses), decided once at boot.
 */
struct guest_features {
    bool tsc_aux;        /* RDTSCP or RDPID: IA32_TSC_AUX exists */
    bool tsc_adjust;     /* IA32_TSC_ADJUST exists */
    bool xsaves;         /* IA32_XSS exists */
    bool pks;            /* IA32_PKRS exists */
    bool pku;            /* PKRU is an XSAVE component the guest may enable */
    bool la57;           /* linear addresses are 57 bits wide, 48 otherwise */
    unsigned maxphyaddr; /* physical address bits (0x80000008 EAX[7:0]; 36 without the leaf) */
    uint64_t spec_ctrl;  /* IA32_SPEC_CTRL bits a guest may set; 0: no such MSR */
    bool ibpb;           /* IA32_PRED_CMD exists */
    bool amd;            /* AMD's rules where the vendors differ (IA32_TSC_AUX[63:32]) */
};

typedef struct cpuid_regs (*cpuid_read_fn)(uint32_t leaf, uint32_t subleaf);

/* Decide them from the host's CPUID (read) as filtered for a guest in view's backend. */
void cpuid_guest_features(const struct cpuid_view *view, cpuid_read_fn read,
                          struct guest_features *out);

extern struct guest_features guest_features;

#endif

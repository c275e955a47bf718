/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Virtualization capability detection. Reading the CPU (features_read) is
 * kept apart from deciding (features_decode), so the decision runs in host
 * unit tests on recorded values.
 */
#ifndef POLLUX_ARCH_X86_FEATURES_H
#define POLLUX_ARCH_X86_FEATURES_H

#include <stdbool.h>
#include <stdint.h>

/* What the decision needs, as read from CPUID and the MSRs. */
struct cpu_raw {
    char vendor[13];
    uint32_t max_leaf, max_ext_leaf;
    uint32_t leaf1_ecx, leaf1_edx;
    uint32_t ext1_ecx, ext1_edx;        /* 0x80000001 */
    uint32_t ext8_eax;                  /* 0x80000008: address sizes */
    uint32_t svm_eax, svm_ebx, svm_edx; /* 0x8000000A: revision, ASIDs, features */
    uint64_t vm_cr;                     /* AMD MSR 0xC0010114 */
    uint64_t feature_control;           /* Intel MSR 0x3A */
    uint64_t vmx_basic;                 /* 0x480 */
    uint64_t vmx_pinbased;              /* 0x481, or 0x48D with true controls */
    uint64_t vmx_procbased;             /* 0x482, or 0x48E with true controls */
    uint64_t vmx_procbased2;            /* 0x48B, 0 if secondary controls cannot be enabled */
    uint64_t vmx_ept_vpid_cap;          /* 0x48C, 0 unless EPT or VPID can be enabled */
    uint64_t vmx_misc;                  /* 0x485 */
    /* TSC rate leaves, 0 where the maximum basic leaf is below them */
    uint32_t leaf15_eax, leaf15_ebx, leaf15_ecx; /* TSC/crystal ratio, crystal Hz */
    uint32_t leaf16_eax;                         /* base MHz */
    /*
     * The hypervisor this runs under (L0), read only with CPUID.1:ECX[31]
     * set: its signature leaf (0x40000000, or 0x40000100 where KVM sits
     * behind Hyper-V's leaves, as Linux's kvm_cpuid_base looks), the
     * signature in EBX, ECX, EDX, the leaf's EAX (its last leaf), KVM's
     * feature leaf (base + 1) EAX and the timing leaf 0x40000010 EAX (TSC
     * kHz) where the last leaf reaches it.
     */
    uint32_t hv_base, hv_max_leaf, hv_features, hv_tsc_khz;
    char hv_signature[13];
};

/* Who runs pollux: nothing (bare metal, or an emulator that says nothing), or a hypervisor. */
enum l0_kind { L0_NONE, L0_KVM, L0_TCG, L0_VMWARE, L0_HYPERV, L0_POLLUX, L0_OTHER };

enum virt_backend { VIRT_NONE, VIRT_SVM, VIRT_VMX };

struct virt_features {
    enum virt_backend backend;
    const char *reason; /* why VIRT_NONE, "" otherwise */
    bool x2apic, tsc_deadline, nx;
    unsigned phys_bits; /* MAXPHYADDR (36 where CPUID does not say) */
    /* Instructions a guest may execute (SVM: all; VMX: with their secondary controls). */
    bool guest_rdtscp, guest_invpcid, guest_xsaves;
    /* SVM */
    bool npt, nrips, pause_filter, pause_filter_thresh, idle_hlt, vgif, flush_by_asid, vmcb_clean,
        decode_assists;
    uint32_t svm_asids;
    /* How V_IRQ's priority check behaves, probed at the first CPU's enable; NULL before or off SVM.
     */
    const char *virq;
    /*
     * A V_IRQ pending at VMRUN reaches a guest that can take it at once (real
     * AMD CPUs, QEMU), so every pending vector goes through V_IRQ; Bochs 2.7
     * looks at it only when IF changes, so what the guest can take at entry
     * goes through EVENTINJ there. Probed with virq.
     */
    bool virq_at_entry;
    /* VMX */
    bool ept, vpid, unrestricted_guest, ple, preemption_timer, true_controls, ept_2m, ept_1g,
        ept_ad, ept_wb;
    unsigned preemption_timer_shift; /* the timer counts at TSC >> shift */
    /* L0, from the hypervisor leaves */
    enum l0_kind l0;
    bool l0_steal_time; /* KVM offers MSR_KVM_STEAL_TIME (KVM_FEATURE_STEAL_TIME) */
    /*
     * The pause filter's count and threshold are L0's, not pollux's: KVM's
     * nested SVM puts its own into the real VMCB unless it runs with
     * pause-in-guest (nested_vmcb02_prepare_control), so the window pollux
     * writes is a request.
     */
    bool pause_filter_by_l0;
};

/* The TSC rate a CPUID leaf claims, and whether it agrees with the PIT's measurement. */
struct tsc_claim {
    uint64_t khz;     /* the accepted claim, else the first one made; 0: none made */
    const char *leaf; /* "0x40000010", "0x15", "0x16", or "" */
    bool accepted;    /* within 1% of the measurement: the rate in use */
};

void features_read(struct cpu_raw *raw);
void features_decode(const struct cpu_raw *raw, struct virt_features *out);
const char *virt_backend_name(enum virt_backend b);
/* "none", "kvm", "tcg", "vmware", "hyperv", "pollux" or "other" */
const char *l0_name(enum l0_kind l0);
/*
 * The TSC rate from CPUID, checked against measured_khz (the PIT's): the
 * first of the hypervisor's timing leaf (behind a signature known to define
 * it), leaf 0x15 (crystal times ratio, where the crystal is enumerated) and
 * leaf 0x16 (base MHz) that agrees within 1%. Emulators claim rates their
 * TSC does not run at (Bochs: 0x16 says 3500 MHz of a 100 MHz TSC), and a
 * nested hypervisor's 0x15 and 0x16 are the host's, not its own TSC's where
 * L0 scales it; 0x40000010 is what KVM's TSC runs at.
 */
void tsc_claim_from_cpuid(const struct cpu_raw *raw, uint64_t measured_khz, struct tsc_claim *out);

#endif

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
    uint32_t svm_eax, svm_ebx, svm_edx; /* 0x8000000A: revision, ASIDs, features */
    uint64_t vm_cr;                     /* AMD MSR 0xC0010114 */
    uint64_t feature_control;           /* Intel MSR 0x3A */
    uint64_t vmx_basic;                 /* 0x480 */
    uint64_t vmx_pinbased;              /* 0x481, or 0x48D with true controls */
    uint64_t vmx_procbased;             /* 0x482, or 0x48E with true controls */
    uint64_t vmx_procbased2;            /* 0x48B, 0 if secondary controls cannot be enabled */
    uint64_t vmx_ept_vpid_cap;          /* 0x48C, 0 unless EPT or VPID can be enabled */
    uint64_t vmx_misc;                  /* 0x485 */
};

enum virt_backend { VIRT_NONE, VIRT_SVM, VIRT_VMX };

struct virt_features {
    enum virt_backend backend;
    const char *reason; /* why VIRT_NONE, "" otherwise */
    bool x2apic, tsc_deadline, nx;
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
};

void features_read(struct cpu_raw *raw);
void features_decode(const struct cpu_raw *raw, struct virt_features *out);
const char *virt_backend_name(enum virt_backend b);

#endif

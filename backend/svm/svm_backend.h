/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the SVM backend's files share; vmm/ sees none of it, only
 * arch/x86/virt.h. The state kept per host CPU and per vCPU, what setup
 * found once for all of them (svm.c), and the entry stub (vmrun.S).
 */
#ifndef POLLUX_BACKEND_SVM_SVM_BACKEND_H
#define POLLUX_BACKEND_SVM_SVM_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/regs.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcb.h"
#include "backend/svm/svm_intr.h"
#include "backend/svm/svm_sched.h"

void svm_vmrun(struct guest_regs *regs, uint64_t vmcb_pa, uint64_t host_vmcb_pa);

/* Per host CPU. ASIDs are per CPU (svm_sched.h). */
struct svm_cpu {
    uint64_t hsave_pa;
    uint64_t host_vmcb_pa;
    struct svm_asid_cpu asids;
    uint64_t host_cr0;     /* what #VMEXIT must leave in CR0 (svm_keep_host_cr0) */
    uint64_t cr0_restores; /* times a #VMEXIT did not (QEMU 7.2) */
};

struct svm_vcpu {
    struct vmcb *vmcb;
    struct svm_asid_vcpu asid;
    /* set_pause_exiting's request, applied again after every reset. */
    enum pause_exiting pause_mode;
    uint32_t pause_window, pause_gap;
    uint64_t reinject;  /* EXITINTINFO of an event interrupted by the exit, to deliver again */
    int offered;        /* the vector in V_IRQ at the last VMRUN, -1 for none */
    bool virq_at_entry; /* V_IRQ was set at the last VMRUN: an offered vector or a window */
    /*
     * SVM has no virtual-NMI blocking here (neither emulator has vNMI): after
     * injecting an NMI pollux intercepts IRET and counts the guest as in its
     * NMI handler until RIP leaves that IRET.
     */
    bool nmi_masked;
    bool iret_seen;
    uint64_t iret_rip;
    /*
     * With an NMI pending but blocked (the handler's IRET not yet executed,
     * an interrupt shadow, an event being delivered), pollux single-steps the
     * guest one instruction with TF and the #DB intercept, as KVM does: the
     * trap after that instruction is the NMI window SVM does not have.
     */
    bool nmi_step;
    bool nmi_step_guest_tf;   /* the guest had TF set itself: the step's #DB is its own */
    bool nmi_step_restore_tf; /* TF was pollux's, not the guest's: clear it after the step */
};

/* What setup found and made, once, for every CPU and vCPU (svm.c). */
struct svm_setup {
    uint64_t iopm_pa, msrpm_pa;     /* every VM's: all ones, every port and MSR exits */
    enum hlt_intercept hlt_mode;    /* for every reset from now on (set_hlt_intercept) */
    enum svm_virq_check virq_check; /* how this CPU checks V_IRQ's priority (svm_intr.h) */
};

extern struct svm_setup svm_setup;

static inline struct svm_vcpu *svm(struct virt_vcpu *v)
{
    return v->arch;
}

static inline void clgi(void)
{
    __asm__ volatile("clgi" ::: "memory");
}

static inline void stgi(void)
{
    __asm__ volatile("stgi" ::: "memory");
}

static inline void set_seg(struct vmcb_seg *s, uint16_t sel, uint16_t attrib, uint32_t limit)
{
    *s = (struct vmcb_seg){.selector = sel, .attrib = attrib, .limit = limit, .base = 0};
}

/* What every VMCB pollux runs holds at reset: no TR or LDT, EFER.SVME, the debug and PAT defaults.
 */
static inline void svm_vmcb_reset_state(struct vmcb *vmcb)
{
    set_seg(&vmcb->tr, 0, 0x8b, 0xffff);
    set_seg(&vmcb->ldtr, 0, 0x82, 0xffff);
    vmcb->efer = EFER_SVME;
    vmcb->dr6 = 0xffff0ff0;
    vmcb->dr7 = 0x400;
    vmcb->g_pat = PAT_DEFAULT;
}

/* The multiboot entry state: flat 32-bit segments, protected mode, paging off. */
static inline void svm_vmcb_flat_protected(struct vmcb *vmcb)
{
    set_seg(&vmcb->cs, 0x08, 0xc9b, 0xffffffff);
    set_seg(&vmcb->ds, 0x10, 0xc93, 0xffffffff);
    vmcb->es = vmcb->ss = vmcb->fs = vmcb->gs = vmcb->ds;
    vmcb->cr0 = 0x11; /* PE | ET */
}

#endif

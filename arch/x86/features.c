/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/features.h"

#include "arch/x86/regs.h"
#include "arch/x86/vmx/vmcs.h"
#include "lib/string.h"

#ifndef HOST_TEST
#include "arch/x86/cpu.h"
#endif

/* CPUID.1:ECX */
#define CPUID1_VMX    (1u << 5)
#define CPUID1_X2APIC (1u << 21)
/* CPUID.80000001 */
#define EXT1_ECX_SVM (1u << 2)
#define EXT1_EDX_NX  (1u << 20)
/* CPUID.8000000A:EDX */
#define SVM_NPT                 (1u << 0)
#define SVM_NRIPS               (1u << 3)
#define SVM_VMCB_CLEAN          (1u << 5)
#define SVM_FLUSH_BY_ASID       (1u << 6)
#define SVM_DECODE_ASSISTS      (1u << 7)
#define SVM_PAUSE_FILTER        (1u << 10)
#define SVM_PAUSE_FILTER_THRESH (1u << 12)
#define SVM_VGIF                (1u << 16)
#define SVM_IDLE_HLT            (1u << 30)
/* VM_CR */
#define VM_CR_LOCK   (1u << 3)
#define VM_CR_SVMDIS (1u << 4)
/* A VMX control bit (arch/x86/vmx/vmcs.h) in the allowed-1 (high) half of its capability MSR. */
#define ALLOWED1(bit) ((uint64_t)(bit) << 32)

const char *virt_backend_name(enum virt_backend b)
{
    return b == VIRT_SVM ? "svm" : b == VIRT_VMX ? "vmx" : "none";
}

static void decode_svm(const struct cpu_raw *raw, struct virt_features *f)
{
    uint32_t d = raw->svm_edx;
    f->svm_asids = raw->svm_ebx;
    f->npt = d & SVM_NPT;
    f->nrips = d & SVM_NRIPS;
    f->vmcb_clean = d & SVM_VMCB_CLEAN;
    f->flush_by_asid = d & SVM_FLUSH_BY_ASID;
    f->decode_assists = d & SVM_DECODE_ASSISTS;
    f->pause_filter = d & SVM_PAUSE_FILTER;
    f->pause_filter_thresh = d & SVM_PAUSE_FILTER_THRESH;
    f->vgif = d & SVM_VGIF;
    f->idle_hlt = d & SVM_IDLE_HLT;
    /* pollux sets none of the RDTSCP, INVPCID or XSAVES intercepts. */
    f->guest_rdtscp = f->guest_invpcid = f->guest_xsaves = true;
    if (raw->vm_cr & VM_CR_SVMDIS)
        f->reason = (raw->vm_cr & VM_CR_LOCK) ? "SVM disabled by firmware (VM_CR.SVMDIS locked)"
                                              : "SVM disabled (VM_CR.SVMDIS)";
    else if (!f->npt)
        f->reason = "no nested paging (NPT)";
    else if (f->svm_asids < 2) /* ASID 0 is the host's (svm_asid_cpu_init) */
        f->reason = "no guest ASID (CPUID 8000_000A EBX below 2)";
    else
        f->backend = VIRT_SVM;
}

static void decode_vmx(const struct cpu_raw *raw, struct virt_features *f)
{
    f->true_controls = raw->vmx_basic & VMX_BASIC_TRUE_CTLS;
    f->preemption_timer = raw->vmx_pinbased & ALLOWED1(PIN_PREEMPTION_TIMER);
    f->preemption_timer_shift = raw->vmx_misc & 0x1f;
    if (raw->vmx_procbased & ALLOWED1(PROC_SECONDARY)) {
        f->ept = raw->vmx_procbased2 & ALLOWED1(PROC2_EPT);
        f->vpid = raw->vmx_procbased2 & ALLOWED1(PROC2_VPID);
        f->unrestricted_guest = raw->vmx_procbased2 & ALLOWED1(PROC2_UNRESTRICTED);
        f->ple = raw->vmx_procbased2 & ALLOWED1(PROC2_PLE);
        /* Without its control each raises #UD in the guest (vmx_derive_controls sets them). */
        f->guest_rdtscp = raw->vmx_procbased2 & ALLOWED1(PROC2_RDTSCP);
        f->guest_invpcid = raw->vmx_procbased2 & ALLOWED1(PROC2_INVPCID);
        f->guest_xsaves = raw->vmx_procbased2 & ALLOWED1(PROC2_XSAVES);
    }
    if (f->ept) {
        uint64_t cap = raw->vmx_ept_vpid_cap;
        f->ept_wb = cap & EPT_CAP_WB;
        f->ept_2m = cap & EPT_CAP_2M;
        f->ept_1g = cap & EPT_CAP_1G;
        f->ept_ad = cap & EPT_CAP_AD;
        if (!(cap & EPT_CAP_WALK4) || !f->ept_wb)
            f->ept = false; /* pollux builds 4-level write-back EPT only */
    }
    if ((raw->feature_control & FEATURE_CTL_LOCKED) && !(raw->feature_control & FEATURE_CTL_VMXON))
        f->reason = "VMX disabled by firmware (IA32_FEATURE_CONTROL locked without VMXON)";
    else if (!f->ept)
        f->reason = "no EPT (4-level, write-back)";
    else if (!f->unrestricted_guest)
        f->reason = "no unrestricted guest";
    else
        f->backend = VIRT_VMX;
}

void features_decode(const struct cpu_raw *raw, struct virt_features *f)
{
    memset(f, 0, sizeof(*f));
    f->backend = VIRT_NONE;
    f->reason = "";
    f->x2apic = raw->leaf1_ecx & CPUID1_X2APIC;
    f->tsc_deadline = raw->leaf1_ecx & CPUID1_TSC_DEADLINE;
    f->nx = raw->ext1_edx & EXT1_EDX_NX;
    if (raw->ext1_ecx & EXT1_ECX_SVM)
        decode_svm(raw, f);
    else if (raw->leaf1_ecx & CPUID1_VMX)
        decode_vmx(raw, f);
    else
        f->reason = "no hardware virtualization (neither SVM nor VMX in CPUID)";
}

#ifndef HOST_TEST
void features_read(struct cpu_raw *raw)
{
    memset(raw, 0, sizeof(*raw));
    struct cpuid_regs r = cpuid(0, 0);
    raw->max_leaf = r.eax;
    memcpy(raw->vendor, &r.ebx, 4);
    memcpy(raw->vendor + 4, &r.edx, 4);
    memcpy(raw->vendor + 8, &r.ecx, 4);
    r = cpuid(1, 0);
    raw->leaf1_ecx = r.ecx;
    raw->leaf1_edx = r.edx;
    raw->max_ext_leaf = cpuid(0x80000000, 0).eax;
    if (raw->max_ext_leaf >= 0x80000001) {
        r = cpuid(0x80000001, 0);
        raw->ext1_ecx = r.ecx;
        raw->ext1_edx = r.edx;
    }
    if (raw->ext1_ecx & EXT1_ECX_SVM) {
        if (raw->max_ext_leaf >= 0x8000000a) {
            r = cpuid(0x8000000a, 0);
            raw->svm_eax = r.eax;
            raw->svm_ebx = r.ebx;
            raw->svm_edx = r.edx;
        }
        raw->vm_cr = rdmsr(MSR_VM_CR);
    } else if (raw->leaf1_ecx & CPUID1_VMX) {
        raw->feature_control = rdmsr(MSR_FEATURE_CONTROL);
        raw->vmx_basic = rdmsr(MSR_VMX_BASIC);
        bool true_ctls = raw->vmx_basic & VMX_BASIC_TRUE_CTLS;
        raw->vmx_pinbased = rdmsr(true_ctls ? MSR_VMX_TRUE_PINBASED : MSR_VMX_PINBASED);
        raw->vmx_procbased = rdmsr(true_ctls ? MSR_VMX_TRUE_PROCBASED : MSR_VMX_PROCBASED);
        raw->vmx_misc = rdmsr(MSR_VMX_MISC);
        /* These MSRs exist only when the capability bits say so (#GP otherwise). */
        if (raw->vmx_procbased & ALLOWED1(PROC_SECONDARY)) {
            raw->vmx_procbased2 = rdmsr(MSR_VMX_PROCBASED2);
            if (raw->vmx_procbased2 & ALLOWED1(PROC2_EPT | PROC2_VPID))
                raw->vmx_ept_vpid_cap = rdmsr(MSR_VMX_EPT_VPID_CAP);
        }
    }
}
#endif

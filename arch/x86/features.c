/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/features.h"

#include "abi/kvm.h"
#include "arch/x86/regs.h"
#include "arch/x86/vmcs.h"
#include "lib/string.h"

#ifndef HOST_TEST
#include "arch/x86/cpu.h"
#endif

/* CPUID.1:ECX */
#define CPUID1_VMX        (1u << 5)
#define CPUID1_HYPERVISOR (1u << 31)
/* The hypervisor leaves (Linux's hypervisor_cpuid_base): a signature every 0x100 leaves. */
#define HV_CPUID_BASE      0x40000000u
#define HV_CPUID_BASE_KVM2 0x40000100u /* KVM behind Hyper-V's leaves */
#define HV_CPUID_TIMING    0x40000010u
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
/* A VMX control bit (arch/x86/vmcs.h) in the allowed-1 (high) half of its capability MSR. */
#define ALLOWED1(bit) ((uint64_t)(bit) << 32)

const char *virt_backend_name(enum virt_backend b)
{
    return b == VIRT_SVM ? "svm" : b == VIRT_VMX ? "vmx" : "none";
}

static const struct {
    const char *signature;
    enum l0_kind l0;
    bool timing_leaf; /* defines 0x40000010 EAX as the TSC rate in kHz */
} hypervisors[] = {
    {"KVMKVMKVM", L0_KVM, true},       {"TCGTCGTCGTCG", L0_TCG, true},
    {"VMwareVMware", L0_VMWARE, true}, {"Microsoft Hv", L0_HYPERV, false},
    {"pollux", L0_POLLUX, true},
};

const char *l0_name(enum l0_kind l0)
{
    static const char *const names[] = {
        [L0_NONE] = "none",     [L0_KVM] = "kvm",       [L0_TCG] = "tcg",
        [L0_VMWARE] = "vmware", [L0_HYPERV] = "hyperv", [L0_POLLUX] = "pollux",
        [L0_OTHER] = "other",
    };
    return names[l0];
}

static unsigned hypervisor_index(const struct cpu_raw *raw)
{
    unsigned i = 0, n = sizeof(hypervisors) / sizeof(hypervisors[0]);
    if (!(raw->leaf1_ecx & CPUID1_HYPERVISOR))
        return n;
    while (i < n && strcmp(raw->hv_signature, hypervisors[i].signature))
        i++;
    return i;
}

static enum l0_kind decode_l0(const struct cpu_raw *raw)
{
    if (!(raw->leaf1_ecx & CPUID1_HYPERVISOR))
        return L0_NONE;
    unsigned i = hypervisor_index(raw);
    return i < sizeof(hypervisors) / sizeof(hypervisors[0]) ? hypervisors[i].l0 : L0_OTHER;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

void tsc_claim_from_cpuid(const struct cpu_raw *raw, uint64_t measured_khz, struct tsc_claim *out)
{
    struct tsc_claim claims[3];
    unsigned n = 0;
    unsigned hv = hypervisor_index(raw);
    if (hv < sizeof(hypervisors) / sizeof(hypervisors[0]) && hypervisors[hv].timing_leaf &&
        raw->hv_max_leaf >= HV_CPUID_TIMING && raw->hv_tsc_khz)
        claims[n++] = (struct tsc_claim){raw->hv_tsc_khz, "0x40000010", false};
    /* ECX 0: the crystal is not enumerated (Bochs's {2, 0x124, 0}); no rate can be derived. */
    if (raw->leaf15_eax && raw->leaf15_ebx && raw->leaf15_ecx)
        claims[n++] = (struct tsc_claim){
            (uint64_t)raw->leaf15_ecx * raw->leaf15_ebx / raw->leaf15_eax / 1000, "0x15", false};
    if (raw->leaf16_eax & 0xffff)
        claims[n++] =
            (struct tsc_claim){(uint64_t)(raw->leaf16_eax & 0xffff) * 1000, "0x16", false};
    *out = n ? claims[0] : (struct tsc_claim){0, "", false};
    for (unsigned i = 0; i < n; i++)
        if (distance(claims[i].khz, measured_khz) * 100 <= measured_khz) {
            *out = claims[i];
            out->accepted = true;
            return;
        }
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
    f->phys_bits = raw->max_ext_leaf >= 0x80000008 ? raw->ext8_eax & 0xff : 36;
    if (raw->ext1_ecx & EXT1_ECX_SVM)
        decode_svm(raw, f);
    else if (raw->leaf1_ecx & CPUID1_VMX)
        decode_vmx(raw, f);
    else
        f->reason = "no hardware virtualization (neither SVM nor VMX in CPUID)";
    f->l0 = decode_l0(raw);
    f->l0_steal_time = f->l0 == L0_KVM && (raw->hv_features & (1u << KVM_FEATURE_STEAL_TIME));
    f->pause_filter_by_l0 = f->l0 == L0_KVM && f->backend == VIRT_SVM && f->pause_filter;
}

#ifndef HOST_TEST
static void read_signature(uint32_t base, uint32_t *max_leaf, char sig[13])
{
    struct cpuid_regs r = cpuid(base, 0);
    *max_leaf = r.eax;
    memcpy(sig, &r.ebx, 4);
    memcpy(sig + 4, &r.ecx, 4);
    memcpy(sig + 8, &r.edx, 4);
    sig[12] = 0;
}

static void read_hypervisor(struct cpu_raw *raw)
{
    raw->hv_base = HV_CPUID_BASE;
    read_signature(HV_CPUID_BASE, &raw->hv_max_leaf, raw->hv_signature);
    if (strcmp(raw->hv_signature, "KVMKVMKVM")) {
        uint32_t max;
        char sig[13];
        read_signature(HV_CPUID_BASE_KVM2, &max, sig);
        if (!strcmp(sig, "KVMKVMKVM")) {
            raw->hv_base = HV_CPUID_BASE_KVM2;
            raw->hv_max_leaf = max;
            memcpy(raw->hv_signature, sig, sizeof(sig));
        }
    }
    if (!strcmp(raw->hv_signature, "KVMKVMKVM") && raw->hv_max_leaf >= raw->hv_base + 1)
        raw->hv_features = cpuid(raw->hv_base + 1, 0).eax;
    if (raw->hv_base == HV_CPUID_BASE && raw->hv_max_leaf >= HV_CPUID_TIMING)
        raw->hv_tsc_khz = cpuid(HV_CPUID_TIMING, 0).eax;
}

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
    if (raw->max_leaf >= 0x15) {
        r = cpuid(0x15, 0);
        raw->leaf15_eax = r.eax;
        raw->leaf15_ebx = r.ebx;
        raw->leaf15_ecx = r.ecx;
    }
    if (raw->max_leaf >= 0x16)
        raw->leaf16_eax = cpuid(0x16, 0).eax;
    /* Without the hypervisor bit these leaves mean nothing (Bochs answers them with 0x16's). */
    if (raw->leaf1_ecx & CPUID1_HYPERVISOR)
        read_hypervisor(raw);
    raw->max_ext_leaf = cpuid(0x80000000, 0).eax;
    if (raw->max_ext_leaf >= 0x80000001) {
        r = cpuid(0x80000001, 0);
        raw->ext1_ecx = r.ecx;
        raw->ext1_edx = r.edx;
    }
    if (raw->max_ext_leaf >= 0x80000008)
        raw->ext8_eax = cpuid(0x80000008, 0).eax;
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

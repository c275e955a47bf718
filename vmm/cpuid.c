#include "vmm/cpuid.h"

#include "lib/string.h"
#include "vmm/hypercall.h"
#include "vmm/kvm_pv.h"

/* Leaf 1 ECX */
#define L1C_DTES64       (1u << 2)
#define L1C_MONITOR      (1u << 3)
#define L1C_DSCPL        (1u << 4)
#define L1C_VMX          (1u << 5)
#define L1C_SMX          (1u << 6)
#define L1C_EST          (1u << 7)
#define L1C_TM2          (1u << 8)
#define L1C_PDCM         (1u << 15)
#define L1C_X2APIC       (1u << 21)
#define L1C_TSC_DEADLINE (1u << 24)
#define L1C_OSXSAVE      (1u << 27)
#define L1C_HYPERVISOR   (1u << 31)
/* Leaf 1 EDX */
#define L1D_MCE  (1u << 7)
#define L1D_APIC (1u << 9)
#define L1D_MTRR (1u << 12)
#define L1D_MCA  (1u << 14)
#define L1D_DS   (1u << 21)
#define L1D_ACPI (1u << 22)
#define L1D_TM   (1u << 29)
#define L1D_PBE  (1u << 31)
/* Leaf 7.0 */
#define L7B_SGX       (1u << 2)
#define L7B_PQM       (1u << 12)
#define L7B_PQE       (1u << 15)
#define L7B_PT        (1u << 25)
#define L7C_WAITPKG   (1u << 5)
#define L7C_RDPID     (1u << 22)
#define L7D_ARCH_CAPS (1u << 29)
#define E1D_RDTSCP    (1u << 27)
#define LD1A_XSAVES   (1u << 3)
/* 0x80000001 ECX */
#define E1C_SVM          (1u << 2)
#define E1C_SKINIT       (1u << 12)
#define E1C_WDT          (1u << 13)
#define E1C_LWP          (1u << 15)
#define E1C_PERFCTR_CORE (1u << 23)
#define CR4_OSXSAVE      (1u << 18)

#define HYPERVISOR_CPUID_FIRST 0x40000000u
#define HYPERVISOR_CPUID_LAST  0x4fffffffu

static unsigned log2_ceil(unsigned n)
{
    unsigned s = 0;
    while ((1u << s) < n)
        s++;
    return s;
}

void cpuid_filter(uint32_t leaf, uint32_t subleaf, const struct cpuid_view *view,
                  struct cpuid_regs *r)
{
    switch (leaf) {
    case 1:
        r->ecx &= ~(L1C_DTES64 | L1C_MONITOR | L1C_DSCPL | L1C_VMX | L1C_SMX | L1C_EST | L1C_TM2 |
                    L1C_PDCM | L1C_OSXSAVE);
        /* The virtual local APIC offers x2APIC and the TSC-deadline timer on any host. */
        r->ecx |= L1C_HYPERVISOR | L1C_X2APIC | L1C_TSC_DEADLINE;
        r->edx |= L1D_APIC;
        if (view->guest_cr4 & CR4_OSXSAVE)
            r->ecx |= L1C_OSXSAVE;
        /* No MTRRs or machine-check MSRs are offered. */
        r->edx &= ~(L1D_MCE | L1D_MTRR | L1D_MCA | L1D_DS | L1D_ACPI | L1D_TM | L1D_PBE);
        r->ebx = (r->ebx & 0x0000ffffu) | (view->vcpu_id << 24) | ((view->nvcpus & 0xff) << 16);
        break;
    case 5:   /* MONITOR/MWAIT */
    case 6:   /* thermal and power */
    case 0xa: /* performance monitoring: counters are not virtualized */
        *r = (struct cpuid_regs){0};
        break;
    case 7:
        if (subleaf == 0) {
            r->ebx &= ~(L7B_SGX | L7B_PQM | L7B_PQE | L7B_PT);
            /* RDPID reads IA32_TSC_AUX, which pollux does not give each vCPU. */
            r->ecx &= ~(L7C_WAITPKG | L7C_RDPID);
            r->edx &= ~L7D_ARCH_CAPS;
        }
        break;
    case 0xd:
        if (subleaf == 0) {
            r->eax &= (uint32_t)view->xcr0_supported;
            r->edx &= (uint32_t)(view->xcr0_supported >> 32);
        } else if (subleaf == 1) {
            r->eax &= ~LD1A_XSAVES; /* IA32_XSS is not virtualized */
        }
        break;
    case 0xb:
    case 0x1f:
        /* One thread per core, one package holding every vCPU. */
        if (subleaf == 0)
            *r = (struct cpuid_regs){0, 1, (1u << 8), view->vcpu_id};
        else if (subleaf == 1)
            *r = (struct cpuid_regs){log2_ceil(view->nvcpus), view->nvcpus, (2u << 8) | 1,
                                     view->vcpu_id};
        else
            *r = (struct cpuid_regs){0, 0, subleaf, view->vcpu_id};
        break;
    case 0x80000001:
        r->ecx &= ~(E1C_SVM | E1C_SKINIT | E1C_WDT | E1C_LWP | E1C_PERFCTR_CORE);
        r->edx &= ~E1D_RDTSCP; /* IA32_TSC_AUX is not per vCPU */
        break;
    case 0x8000000a: /* SVM features */
        *r = (struct cpuid_regs){0};
        break;
    case POLLUX_CPUID_BASE: {
        const char *sig = POLLUX_CPUID_SIGNATURE;
        r->eax = POLLUX_CPUID_TIMING;
        memcpy(&r->ebx, sig, 4);
        memcpy(&r->ecx, sig + 4, 4);
        memcpy(&r->edx, sig + 8, 4);
        break;
    }
    case POLLUX_CPUID_TIMING:
        *r = (struct cpuid_regs){(uint32_t)view->tsc_khz, (uint32_t)view->apic_timer_khz, 0, 0};
        break;
    default:
        /*
         * The range reserved for hypervisors holds only pollux's and KVM's
         * leaves: never the host's (an L0 hypervisor's own signature).
         */
        if (leaf >= HYPERVISOR_CPUID_FIRST && leaf <= HYPERVISOR_CPUID_LAST &&
            !kvm_pv_cpuid(leaf, r))
            *r = (struct cpuid_regs){0};
        break;
    }
}

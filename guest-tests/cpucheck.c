/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A guest that holds pollux to the CPUID it gives: it prints the CPUID it
 * sees (the boot tests compare it with docs/cpuid.md applied to the host's
 * values), then exercises every feature that CPUID offers, or checks that
 * what it hides really is absent (#UD, #GP):
 *   - CPUID bits that follow state: APIC (IA32_APIC_BASE.EN), OSXSAVE, OSPKE
 *   - IA32_APIC_BASE moves the xAPIC page (the old address then reads all
 *     ones: run with unbacked=ignore, one read), up to MAXPHYADDR; reserved
 *     bits (9, MAXPHYADDR) raise #GP
 *   - IA32_TSC_AUX through RDTSCP and RDPID, IA32_XSS with XSAVES/XRSTORS,
 *     IA32_PKRS and PKRU, IA32_MISC_ENABLE, the speculation MSRs
 *   - 57-bit canonical MSR addresses where LA57 is offered, INVPCID
 *   - a single-step #DB (DR6.BS) right after each instruction pollux
 *     emulates: CPUID, IN, OUT, RDMSR, WRMSR, a hypercall, an MMIO load
 *   - CPUID and the hypercall with prefixes and across or at the end of a
 *     page, where pollux without NRIPS finds their length the slow way:
 *     the guest goes on right after each
 *   - two NMIs sent back to back to the other vCPU: both arrive
 *   - the per-vCPU MSRs, PKRU and XCR0 keep each vCPU's values across a
 *     shared host CPU, and XRSTOR takes back what XSAVE wrote before it
 *   - in long mode (five levels where LA57 is offered), from a high alias of
 *     its code: CPUID and an MMIO load that pollux decodes by walking the
 *     guest's page tables, TPR written through the xAPIC page and read from
 *     CR8 and the reverse, a self-IPI that CR8 = 15 holds back taken as soon
 *     as CR8 is lowered to 0 (SVM intercepts that write while a vector waits),
 *     and CR0.WP toggled (argument: how often)
 * Run it with two vCPUs on one host CPU (vcpus=2:pin=0,0:unbacked=ignore). Each check
 * prints "check <name>: ok" or "check <name>: FAIL ..."; the exit code is
 * the number of failures.
 */
#include <stddef.h>

#include "guest-tests/runtime/check.h"
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/fault.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"
#include "abi/hypercall.h"

#define VECTOR_TIMER 0x40
#define VECTOR_GO    0x41
#define VECTOR_TPR   0x42 /* class 4: the self-IPI that CR8 holds back (long mode) */

#define RFLAGS_TF        (1u << 8)
#define DR6_INIT         0xffff0ff0u
#define DR6_BS           (1u << 14)
#define CR4_LA57         (1u << 12)
#define CR4_OSXSAVE      (1u << 18)
#define CR4_PKE          (1u << 22)
#define CR4_PKS          (1u << 24)
#define CR4_RESERVED_BIT (1u << 31) /* reserved on every CPU pollux offers */
#define EFLAGS_RF        (1u << 16)
#define MSR_NOBODY_HAS   0x4b564eff /* past KVM's range, in no vendor's: #GP */
#define VENDOR_INTEL_EBX 0x756e6547 /* "Genu" */

#define MSR_TSC              0x10
#define MSR_TSC_ADJUST       0x3b
#define MSR_SPEC_CTRL        0x48
#define MSR_PRED_CMD         0x49
#define MSR_CORE_CAPS        0xcf
#define MSR_ARCH_CAPS        0x10a
#define MSR_FLUSH_CMD        0x10b
#define MSR_MISC_ENABLE      0x1a0
#define MSR_MCG_CAP          0x179
#define MSR_MCG_STATUS       0x17a
#define MSR_MCG_CTL          0x17b
#define MSR_MC0_CTL          0x400
#define MSR_AMD_HWCR         0xc0010015
#define HWCR_MC_STATUS_WR_EN (1ull << 18)
#define L1D_MCE              (1u << 7)
#define L1D_MCA              (1u << 14)
#define MSR_PKRS             0x6e1
#define MSR_XSS              0xda0
#define MSR_FS_BASE          0xc0000100
#define MSR_TSC_AUX          0xc0000103
#define MSR_VIRT_SPEC        0xc001011f
#define APIC_BASE_BSP        (1u << 8)
#define APIC_BASE_ENABLE     (1u << 11)

#define XAPIC_VERSION 0xfee00030u
#define MOVED_XAPIC   0xfed40000u /* where the relocation check puts the xAPIC page */
#define XAPIC_ID_OFF  0x020
#define XAPIC_VER_OFF 0x030
#define LAPIC_TPR     0x080

/* CPUID feature bits this guest acts on. */
#define LD0A_AVX      (1u << 2)
#define L1C_XSAVE     (1u << 26)
#define L1C_OSXSAVE   (1u << 27)
#define L1D_APIC      (1u << 9)
#define L7B_TSC_ADJ   (1u << 1)
#define L7B_INVPCID   (1u << 10)
#define L7C_PKU       (1u << 3)
#define L7C_OSPKE     (1u << 4)
#define L7C_LA57      (1u << 16)
#define L7C_RDPID     (1u << 22)
#define L7C_PKS       (1u << 31)
#define L7D_SPEC_CTRL (1u << 26)
#define LD1A_XSAVES   (1u << 3)
#define E1D_RDTSCP    (1u << 27)

#define TSC_FAR_AHEAD (1ull << 40) /* minutes at any rate pollux runs at */

/* The values each vCPU keeps in its per-vCPU MSRs and PKRU. */
#define BSP_TSC_AUX 0xb5
#define AP_TSC_AUX  0xa9
#define BSP_PKRS    0x55555554u
#define AP_PKRS     0x11111110u
#define BSP_PKRU    0x0000000cu
#define AP_PKRU     0x00000030u
/* Page-fault addresses no fault of this guest makes: CR2 is the CPU's, not the VMCS's, on VMX. */
#define BSP_CR2  0x0b5cc200u
#define AP_CR2   0x0a9cc200u
#define XCR0_X87 1u
#define XCR0_SSE 2u
#define XCR0_AVX 4u

/* ------------------------------------------------------------ faults */

/* Each try_* runs one instruction and returns the vector it raised, or NO_FAULT
 * (guest-tests/runtime/fault.h has the MSR ones). */
static uint32_t read_cr4(void)
{
    uint32_t v;
    __asm__ volatile("mov %%cr4, %0" : "=r"(v));
    return v;
}

static uint32_t read_cr2(void)
{
    uint32_t v;
    __asm__ volatile("mov %%cr2, %0" : "=r"(v));
    return v;
}

static void write_cr2(uint32_t v)
{
    __asm__ volatile("mov %0, %%cr2" : : "r"(v) : "memory");
}

static unsigned try_write_cr4(uint32_t value)
{
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\tmov %[v], %%cr4\n1:"
                     : [rec] "=m"(fault_recover_eip)
                     : [v] "r"(value)
                     : "memory");
    return fault_vector;
}

static unsigned try_rdtscp(uint32_t *aux)
{
    uint32_t a = 0, d = 0, c = 0;
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\trdtscp\n1:"
                     : "+a"(a), "+d"(d), "+c"(c), [rec] "=m"(fault_recover_eip)
                     :
                     : "memory");
    *aux = c;
    return fault_vector;
}

static unsigned try_rdpid(uint32_t *value)
{
    uint32_t v = 0;
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\trdpid %[v]\n1:"
                     : [v] "+r"(v), [rec] "=m"(fault_recover_eip)
                     :
                     : "memory");
    *value = v;
    return fault_vector;
}

static unsigned try_rdpkru(uint32_t *value)
{
    uint32_t a = 0, d = 0;
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\trdpkru\n1:"
                     : "+a"(a), "+d"(d), [rec] "=m"(fault_recover_eip)
                     : "c"(0)
                     : "memory");
    *value = a;
    return fault_vector;
}

static unsigned try_wrpkru(uint32_t value)
{
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\twrpkru\n1:"
                     : [rec] "=m"(fault_recover_eip)
                     : "a"(value), "c"(0), "d"(0)
                     : "memory");
    return fault_vector;
}

static unsigned try_invpcid_all(void)
{
    static const uint64_t descriptor[2] __attribute__((aligned(16)));
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\tinvpcid %[d], %[type]\n1:"
                     : [rec] "=m"(fault_recover_eip)
                     : [d] "m"(descriptor), [type] "r"(2) /* all contexts, globals too */
                     : "memory");
    return fault_vector;
}

static void xsetbv(uint64_t xcr0)
{
    __asm__ volatile("xsetbv" : : "c"(0), "a"((uint32_t)xcr0), "d"((uint32_t)(xcr0 >> 32)));
}

static uint32_t xgetbv(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return lo;
}

static uint8_t xsave_area[4096] __attribute__((aligned(64)));

static unsigned try_xsaves(uint64_t mask)
{
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\txsaves %[area]\n1:"
                     : [rec] "=m"(fault_recover_eip), [area] "=m"(xsave_area)
                     : "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32))
                     : "memory");
    return fault_vector;
}

static unsigned try_xrstors(uint64_t mask)
{
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\txrstors %[area]\n1:"
                     : [rec] "=m"(fault_recover_eip)
                     : [area] "m"(xsave_area), "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32))
                     : "memory");
    return fault_vector;
}

static void xsave(uint8_t *area, uint64_t mask)
{
    __asm__ volatile("xsave (%[area])"
                     :
                     : [area] "r"(area), "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32))
                     : "memory");
}

static unsigned try_xrstor(const uint8_t *area, uint64_t mask)
{
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\txrstor (%[area])\n1:"
                     : [rec] "=m"(fault_recover_eip)
                     : [area] "r"(area), "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32))
                     : "memory");
    return fault_vector;
}

/* An MSR the guest's CPUID says is absent: both accesses raise #GP. */
static void check_msr_absent(const char *name, uint32_t msr)
{
    uint64_t v;
    unsigned r = try_rdmsr(msr, &v), w = try_wrmsr(msr, 0);
    if (r != VECTOR_GP || w != VECTOR_GP)
        printf("  MSR 0x%x: RDMSR %s, WRMSR %s\n", msr, fault_name(r), fault_name(w));
    vcheck(r == VECTOR_GP && w == VECTOR_GP, name, "the MSR of a hidden feature exists");
}

/* ------------------------------------------------------------ CPUID */

struct leaf {
    uint32_t leaf, subleaf;
    bool has_subleaf;
};

static const struct leaf printed[] = {
    {0x0, 0, false},        {0x1, 0, false},        {0x5, 0, false},        {0x6, 0, false},
    {0x7, 0, true},         {0x7, 1, true},         {0xa, 0, false},        {0xd, 0, true},
    {0xd, 1, true},         {0x80000000, 0, false}, {0x80000001, 0, false}, {0x80000007, 0, false},
    {0x80000008, 0, false}, {0x8000000a, 0, false},
};

static void print_cpuid(void)
{
    uint32_t max = cpuid(0, 0).eax, max_ext = cpuid(0x80000000u, 0).eax;
    for (size_t i = 0; i < sizeof(printed) / sizeof(printed[0]); i++) {
        const struct leaf *l = &printed[i];
        if (l->leaf > (l->leaf >= 0x80000000u ? max_ext : max))
            continue;
        struct cpuid_regs r = cpuid(l->leaf, l->subleaf);
        if (l->has_subleaf)
            printf("cpuid 0x%x.%u 0x%x 0x%x 0x%x 0x%x\n", l->leaf, l->subleaf, r.eax, r.ebx, r.ecx,
                   r.edx);
        else
            printf("cpuid 0x%x 0x%x 0x%x 0x%x 0x%x\n", l->leaf, r.eax, r.ebx, r.ecx, r.edx);
    }
}

/* What this guest's CPUID offers. */
static struct {
    bool xsave, avx_state, xsaves, rdtscp, rdpid, pku, pks, la57, invpcid, spec_ctrl, amd;
    bool tsc_adjust;
} has;

static void read_features(void)
{
    struct cpuid_regs l1 = cpuid(1, 0), l7 = cpuid(7, 0), d1 = cpuid(0xd, 1);
    struct cpuid_regs e1 = cpuid(0x80000001u, 0);
    has.xsave = l1.ecx & L1C_XSAVE;
    has.avx_state = has.xsave && (cpuid(0xd, 0).eax & LD0A_AVX);
    has.xsaves = d1.eax & LD1A_XSAVES;
    has.rdtscp = e1.edx & E1D_RDTSCP;
    has.rdpid = l7.ecx & L7C_RDPID;
    has.pku = l7.ecx & L7C_PKU;
    has.pks = l7.ecx & L7C_PKS;
    has.la57 = l7.ecx & L7C_LA57;
    has.invpcid = l7.ebx & L7B_INVPCID;
    has.tsc_adjust = l7.ebx & L7B_TSC_ADJ;
    has.spec_ctrl = l7.edx & L7D_SPEC_CTRL;
    has.amd = cpuid(0, 0).ebx == 0x68747541u;
}

static bool apic_bits(void)
{
    bool leaf1 = cpuid(1, 0).edx & L1D_APIC;
    /* AMD repeats the bit in 0x80000001 EDX. */
    return has.amd ? leaf1 && (cpuid(0x80000001u, 0).edx & L1D_APIC) : leaf1;
}

static void check_state_dependent_cpuid(void)
{
    uint64_t base;
    try_rdmsr(MSR_APIC_BASE, &base);
    bool on = apic_bits();
    try_wrmsr(MSR_APIC_BASE, base & ~(uint64_t)APIC_BASE_ENABLE);
    bool off = apic_bits();
    try_wrmsr(MSR_APIC_BASE, base);
    vcheck(on && !off && apic_bits(), "cpuid-apic", "CPUID APIC does not follow IA32_APIC_BASE.EN");
    lapic_enable(); /* disabling it reset the APIC */

    uint32_t cr4 = read_cr4();
    if (has.xsave) {
        bool before = cpuid(1, 0).ecx & L1C_OSXSAVE;
        unsigned f = try_write_cr4(cr4 | CR4_OSXSAVE);
        bool after = cpuid(1, 0).ecx & L1C_OSXSAVE;
        try_write_cr4(cr4);
        vcheck(!before && f == NO_FAULT && after && !(cpuid(1, 0).ecx & L1C_OSXSAVE),
               "cpuid-osxsave", "OSXSAVE does not follow CR4.OSXSAVE");
    }
    if (has.pku) {
        unsigned f = try_write_cr4(cr4 | CR4_PKE);
        bool after = cpuid(7, 0).ecx & L7C_OSPKE;
        uint32_t pkru = 0;
        unsigned w = try_wrpkru(0x55555554u), r = try_rdpkru(&pkru);
        try_write_cr4(cr4);
        uint32_t unused;
        unsigned off_fault = try_rdpkru(&unused);
        vcheck(f == NO_FAULT && after && !(cpuid(7, 0).ecx & L7C_OSPKE) && w == NO_FAULT &&
                   r == NO_FAULT && pkru == 0x55555554u && off_fault == VECTOR_UD,
               "pku", "OSPKE, RDPKRU/WRPKRU do not follow CR4.PKE");
    } else {
        unsigned f = try_write_cr4(cr4 | CR4_PKE);
        try_write_cr4(cr4);
        vcheck(f == VECTOR_GP, "pku-absent", "CR4.PKE accepted without PKU");
    }
}

/* ------------------------------------------------------------ IA32_APIC_BASE */

static uint32_t mmio_read32(uint32_t address)
{
    return *(volatile uint32_t *)address;
}

/* CPUID 0x80000008 EAX[7:0], or the SDM's 36 without the leaf. */
static unsigned maxphyaddr(void)
{
    if (cpuid(0x80000000u, 0).eax < 0x80000008u)
        return 36;
    return cpuid(0x80000008u, 0).eax & 0xff;
}

/*
 * Move the xAPIC page to MOVED_XAPIC: its ID and version registers answer
 * there, the old page is no longer the APIC (all ones under unbacked=ignore),
 * the highest base MAXPHYADDR allows is taken, reserved bit 9 and bit
 * MAXPHYADDR raise #GP; then back to where it was, for the rest of the guest.
 */
static void check_apic_base_moves(void)
{
    uint64_t base, moved_back = 0, high_back = 0;
    try_rdmsr(MSR_APIC_BASE, &base);
    uint64_t keep = APIC_BASE_ENABLE | (base & APIC_BASE_BSP);
    uint32_t id = mmio_read32(XAPIC_BASE + XAPIC_ID_OFF);
    uint32_t version = mmio_read32(XAPIC_VERSION);
    unsigned move = try_wrmsr(MSR_APIC_BASE, MOVED_XAPIC | keep);
    uint32_t moved_id = mmio_read32(MOVED_XAPIC + XAPIC_ID_OFF);
    uint32_t moved_version = mmio_read32(MOVED_XAPIC + XAPIC_VER_OFF);
    uint32_t old = mmio_read32(XAPIC_VERSION);
    unsigned bits = maxphyaddr();
    unsigned bit9 = try_wrmsr(MSR_APIC_BASE, MOVED_XAPIC | keep | 0x200);
    unsigned past =
        bits < 64 ? try_wrmsr(MSR_APIC_BASE, MOVED_XAPIC | keep | 1ull << bits) : VECTOR_GP;
    try_rdmsr(MSR_APIC_BASE, &moved_back);
    uint64_t high = (1ull << (bits - 1)) | keep;
    unsigned top = try_wrmsr(MSR_APIC_BASE, high);
    try_rdmsr(MSR_APIC_BASE, &high_back);
    unsigned back = try_wrmsr(MSR_APIC_BASE, base);
    uint32_t again = mmio_read32(XAPIC_VERSION);
    bool ok = move == NO_FAULT && moved_id == id && moved_version == version &&
              (version & 0xff) == 0x14 && old == 0xffffffffu && bit9 == VECTOR_GP &&
              past == VECTOR_GP && moved_back == (MOVED_XAPIC | keep) && top == NO_FAULT &&
              high_back == high && back == NO_FAULT && again == version;
    if (!ok)
        printf("  base 0x%lx, MAXPHYADDR %u: move %s, ID 0x%x/0x%x, version 0x%x/0x%x, old page "
               "0x%x, bit 9 %s, bit %u %s, then 0x%lx; top %s 0x%lx; back %s, 0x%x\n",
               (unsigned long)base, bits, fault_name(move), id, moved_id, version, moved_version,
               old, fault_name(bit9), bits, fault_name(past), (unsigned long)moved_back,
               fault_name(top), (unsigned long)high_back, fault_name(back), again);
    vcheck(ok, "apic-base-move", "IA32_APIC_BASE does not move the xAPIC page as KVM does");
}

/* ------------------------------------------------------------ MSRs */

/*
 * The machine-check bank as KVM models it (vmm/dev/mce_state.h): CPUID's MCE and MCA say it is
 * there, MCG_CAP gives its banks, CTLs take only 0 or all ones, STATUS only 0 (unless AMD's
 * HWCR.McStatusWrEn is set), ADDR and MISC anything, MCG_CAP is read-only.
 */
static void check_machine_check_msrs(void)
{
    uint32_t edx = cpuid(1, 0).edx;
    bool cpuid_ok = (edx & L1D_MCE) && (edx & L1D_MCA);
    if (has.amd) {
        uint32_t e = cpuid(0x80000001u, 0).edx;
        cpuid_ok = cpuid_ok && (e & L1D_MCE) && (e & L1D_MCA);
    }
    uint64_t cap = 0, ctl = 0, st = 0, addr = 0;
    unsigned r = try_rdmsr(MSR_MCG_CAP, &cap), wcap = try_wrmsr(MSR_MCG_CAP, cap);
    uint32_t banks = (uint32_t)cap & 0xff, last = MSR_MC0_CTL + 4 * (banks - 1);
    unsigned rctl = try_rdmsr(MSR_MC0_CTL, &ctl);
    unsigned gctl0 = try_wrmsr(MSR_MCG_CTL, 0), gctl1 = try_wrmsr(MSR_MCG_CTL, ~0ull);
    unsigned gbad = try_wrmsr(MSR_MCG_CTL, 0x1234);
    unsigned c0 = try_wrmsr(last, 0), c1 = try_wrmsr(last, ~0ull), cbad = try_wrmsr(last, 0x1234);
    unsigned s0 = try_wrmsr(MSR_MC0_CTL + 1, 0), sbad = try_wrmsr(MSR_MC0_CTL + 1, 1);
    unsigned a = try_wrmsr(MSR_MC0_CTL + 2, 0x1234);
    try_rdmsr(MSR_MC0_CTL + 2, &addr);
    unsigned gs = try_wrmsr(MSR_MCG_STATUS, 0);
    unsigned past = try_rdmsr(last + 4, &st);
    bool ok = cpuid_ok && r == NO_FAULT && (cap & (1u << 8)) && banks > 0 && wcap == VECTOR_GP &&
              rctl == NO_FAULT && ctl == ~0ull && gctl0 == NO_FAULT && gctl1 == NO_FAULT &&
              gbad == VECTOR_GP && c0 == NO_FAULT && c1 == NO_FAULT && cbad == VECTOR_GP &&
              s0 == NO_FAULT && sbad == VECTOR_GP && a == NO_FAULT && addr == 0x1234 &&
              gs == NO_FAULT && past == VECTOR_GP;
    if (has.amd) {
        /* AMD: HWCR.McStatusWrEn lets STATUS take any value (KVM's can_set_mci_status). */
        uint64_t hwcr = 0;
        try_rdmsr(MSR_AMD_HWCR, &hwcr);
        unsigned h = try_wrmsr(MSR_AMD_HWCR, hwcr | HWCR_MC_STATUS_WR_EN);
        unsigned s1 = try_wrmsr(MSR_MC0_CTL + 1, 1);
        try_rdmsr(MSR_MC0_CTL + 1, &st);
        try_wrmsr(MSR_MC0_CTL + 1, 0);
        try_wrmsr(MSR_AMD_HWCR, hwcr);
        ok = ok && h == NO_FAULT && s1 == NO_FAULT && st == 1;
    }
    if (!ok)
        printf("  MCG_CAP 0x%lx (%s): cpuid %d ctl 0x%lx faults %u%u%u%u%u%u%u%u%u%u%u%u\n",
               (unsigned long)cap, fault_name(r), cpuid_ok, (unsigned long)ctl, wcap, rctl, gctl0,
               gctl1, gbad, c0, c1, cbad, s0, sbad, a, past);
    vcheck(ok, "machine-check", "the machine-check MSRs do not follow KVM's model");
}

/*
 * A fault's pushed EFLAGS has RF set (SDM 6.12.1): the handler's IRET back
 * to the instruction must not hit its instruction breakpoint again. Both
 * faults here are pollux's to inject: an MSR it has not (every RDMSR
 * exits), and on VMX a MOV to CR4 with a reserved bit (the CR4 guest/host
 * mask owns it). SVM leaves CR4 writes to the CPU, and QEMU 7.2's SVM takes
 * the reserved bit without a fault (VMRUN then rejects the VMCB): that half
 * runs on Intel only.
 */
static void check_fault_rf(void)
{
    uint64_t unused;
    unsigned msr = try_rdmsr(MSR_NOBODY_HAS, &unused);
    uint32_t msr_eflags = fault_eflags;
    bool ok = msr == VECTOR_GP && (msr_eflags & EFLAGS_RF);
    if (!ok)
        printf("  rdmsr 0x%x: %s, eflags 0x%x\n", MSR_NOBODY_HAS, fault_name(msr), msr_eflags);
    if (cpuid(0, 0).ebx == VENDOR_INTEL_EBX) {
        unsigned cr4 = try_write_cr4(read_cr4() | CR4_RESERVED_BIT);
        uint32_t cr4_eflags = fault_eflags;
        if (cr4 != VECTOR_GP || !(cr4_eflags & EFLAGS_RF)) {
            printf("  mov cr4 with a reserved bit: %s, eflags 0x%x\n", fault_name(cr4), cr4_eflags);
            ok = false;
        }
    }
    vcheck(ok, "fault-rf", "a fault's pushed EFLAGS lacks RF");
}

/*
 * IA32_TSC_ADJUST as KVM keeps it, on the BSP before any TSC write of this
 * VM: 0 from creation; a write moves the TSC by its change; an IA32_TSC
 * write moves TSC_ADJUST by the TSC's step (here back by about as much as
 * the first write, less the ticks in between).
 */
static void check_tsc_adjust(void)
{
    uint64_t start = 1, stepped = 0, end = 1;
    unsigned r = try_rdmsr(MSR_TSC_ADJUST, &start);
    uint64_t before = rdtsc();
    unsigned w = try_wrmsr(MSR_TSC_ADJUST, TSC_FAR_AHEAD);
    uint64_t ahead = rdtsc() - before;
    unsigned t = try_wrmsr(MSR_TSC, rdtsc() - TSC_FAR_AHEAD);
    try_rdmsr(MSR_TSC_ADJUST, &stepped);
    unsigned z = try_wrmsr(MSR_TSC_ADJUST, 0);
    try_rdmsr(MSR_TSC_ADJUST, &end);
    bool ok = r == NO_FAULT && start == 0 && w == NO_FAULT && ahead >= TSC_FAR_AHEAD &&
              ahead - TSC_FAR_AHEAD < TSC_FAR_AHEAD / 2 && t == NO_FAULT &&
              -stepped < TSC_FAR_AHEAD / 2 && z == NO_FAULT && end == 0;
    if (!ok)
        printf("  TSC_ADJUST: %s 0x%llx; +2^40 moved the TSC 0x%llx (%s); a TSC write back left "
               "0x%llx (%s); then 0x%llx (%s)\n",
               fault_name(r), (unsigned long long)start, (unsigned long long)ahead, fault_name(w),
               (unsigned long long)stepped, fault_name(t), (unsigned long long)end, fault_name(z));
    vcheck(ok, "tsc-adjust", "IA32_TSC_ADJUST does not move with the TSC as KVM's does");
}

static void check_msrs(void)
{
    uint64_t v = 0;
    uint32_t aux = 0;
    if (has.rdtscp) {
        unsigned w = try_wrmsr(MSR_TSC_AUX, BSP_TSC_AUX), r = try_rdtscp(&aux);
        uint64_t back = 0;
        try_rdmsr(MSR_TSC_AUX, &back);
        vcheck(w == NO_FAULT && r == NO_FAULT && aux == BSP_TSC_AUX && back == BSP_TSC_AUX,
               "rdtscp", "RDTSCP does not return IA32_TSC_AUX");
    } else {
        vcheck(try_rdtscp(&aux) == VECTOR_UD, "rdtscp-absent", "RDTSCP hidden but runs");
    }
    if (has.rdpid) {
        unsigned w = try_wrmsr(MSR_TSC_AUX, BSP_TSC_AUX), r = try_rdpid(&aux);
        vcheck(w == NO_FAULT && r == NO_FAULT && aux == BSP_TSC_AUX, "rdpid",
               "RDPID does not return IA32_TSC_AUX");
    } else {
        vcheck(try_rdpid(&aux) == VECTOR_UD, "rdpid-absent", "RDPID hidden but runs");
    }
    if (!has.rdtscp && !has.rdpid)
        check_msr_absent("tsc-aux-absent", MSR_TSC_AUX);

    if (has.xsaves) {
        uint32_t cr4 = read_cr4();
        try_write_cr4(cr4 | CR4_OSXSAVE);
        xsetbv(3); /* x87 and SSE */
        unsigned r = try_rdmsr(MSR_XSS, &v), w0 = try_wrmsr(MSR_XSS, 0);
        unsigned bad = try_wrmsr(MSR_XSS, 1u << 8); /* PT state: not offered */
        unsigned s = try_xsaves(3), l = try_xrstors(3);
        uint64_t xcomp;
        __builtin_memcpy(&xcomp, xsave_area + 520, sizeof(xcomp));
        xsetbv(1);
        try_write_cr4(cr4);
        vcheck(r == NO_FAULT && v == 0 && w0 == NO_FAULT && bad == VECTOR_GP && s == NO_FAULT &&
                   l == NO_FAULT && (xcomp >> 63) == 1,
               "xsaves", "XSAVES/XRSTORS or IA32_XSS misbehave");
    } else {
        uint32_t cr4 = read_cr4();
        unsigned s = NO_FAULT;
        if (has.xsave) {
            try_write_cr4(cr4 | CR4_OSXSAVE);
            s = try_xsaves(1);
            try_write_cr4(cr4);
        }
        vcheck(!has.xsave || s == VECTOR_UD, "xsaves-absent", "XSAVES hidden but runs");
        check_msr_absent("xss-absent", MSR_XSS);
    }

    if (has.pks) {
        uint32_t cr4 = read_cr4();
        unsigned c = try_write_cr4(cr4 | CR4_PKS);
        try_write_cr4(cr4);
        unsigned w = try_wrmsr(MSR_PKRS, BSP_PKRS), r = try_rdmsr(MSR_PKRS, &v);
        unsigned bad = try_wrmsr(MSR_PKRS, 1ull << 32);
        vcheck(c == NO_FAULT && w == NO_FAULT && r == NO_FAULT && v == BSP_PKRS && bad == VECTOR_GP,
               "pks", "IA32_PKRS or CR4.PKS misbehave");
    } else {
        uint32_t cr4 = read_cr4();
        unsigned c = try_write_cr4(cr4 | CR4_PKS);
        try_write_cr4(cr4);
        vcheck(c == VECTOR_GP, "pks-absent-cr4", "CR4.PKS accepted without PKS");
        check_msr_absent("pks-absent", MSR_PKRS);
    }

    /* 57-bit canonical addresses in MSRs exactly where LA57 is offered. */
    const uint64_t only57 = 0x00ff000000000000ull, neither = 0x0100000000000000ull;
    unsigned w57 = try_wrmsr(MSR_FS_BASE, only57);
    try_rdmsr(MSR_FS_BASE, &v);
    unsigned wbad = try_wrmsr(MSR_FS_BASE, neither);
    unsigned w48 = try_wrmsr(MSR_FS_BASE, 0x00007fff00000000ull);
    try_wrmsr(MSR_FS_BASE, 0);
    if (has.la57)
        vcheck(w57 == NO_FAULT && v == only57 && wbad == VECTOR_GP && w48 == NO_FAULT,
               "canonical-57", "FS_BASE rejects a 57-bit canonical address");
    else
        vcheck(w57 == VECTOR_GP && wbad == VECTOR_GP && w48 == NO_FAULT, "canonical-48",
               "FS_BASE takes a non-canonical address");

    if (has.invpcid)
        vcheck(try_invpcid_all() == NO_FAULT, "invpcid", "INVPCID offered but faults");
    else
        vcheck(try_invpcid_all() == VECTOR_UD, "invpcid-absent", "INVPCID hidden but runs");

    /* IA32_MISC_ENABLE as KVM models it. */
    unsigned r0 = try_rdmsr(MSR_MISC_ENABLE, &v);
    uint64_t reset = v;
    unsigned w1 = try_wrmsr(MSR_MISC_ENABLE, 0x400c51809ull);
    try_rdmsr(MSR_MISC_ENABLE, &v);
    uint64_t linux_value = v;
    unsigned w2 = try_wrmsr(MSR_MISC_ENABLE, 0x400c51809ull & ~(1ull << 11));
    try_wrmsr(MSR_MISC_ENABLE, reset);
    vcheck(r0 == NO_FAULT && reset == 0x1801 && w1 == NO_FAULT && linux_value == 0x400c51809ull &&
               w2 == VECTOR_GP,
           "misc-enable", "IA32_MISC_ENABLE does not follow KVM's model");

    if (has.spec_ctrl) {
        unsigned w = try_wrmsr(MSR_SPEC_CTRL, 1), r = try_rdmsr(MSR_SPEC_CTRL, &v);
        unsigned p = try_wrmsr(MSR_PRED_CMD, 1);
        try_wrmsr(MSR_SPEC_CTRL, 0);
        vcheck(w == NO_FAULT && r == NO_FAULT && v == 1 && p == NO_FAULT, "spec-ctrl",
               "IA32_SPEC_CTRL/PRED_CMD offered but misbehave");
    } else {
        check_msr_absent("spec-ctrl-absent", MSR_SPEC_CTRL);
    }
    check_machine_check_msrs();

    if (has.tsc_adjust)
        check_tsc_adjust();
    else
        check_msr_absent("tsc-adjust-absent", MSR_TSC_ADJUST);
    /* Features docs/cpuid.md clears: their MSRs are absent too. */
    check_msr_absent("arch-caps-absent", MSR_ARCH_CAPS);
    check_msr_absent("core-caps-absent", MSR_CORE_CAPS);
    check_msr_absent("flush-cmd-absent", MSR_FLUSH_CMD);
    if (has.amd)
        check_msr_absent("virt-spec-ctrl-absent", MSR_VIRT_SPEC);
}

/* ------------------------------------------------------------ single step */

static volatile uint32_t db_eip, db_dr6, db_count;

__attribute__((interrupt)) static void db_handler(struct interrupt_frame *f)
{
    uint32_t dr6;
    __asm__ volatile("mov %%db6, %0" : "=r"(dr6));
    db_eip = f->eip;
    db_dr6 = dr6;
    db_count++;
    f->eflags &= ~RFLAGS_TF;
    __asm__ volatile("mov %0, %%db6" : : "r"(DR6_INIT));
}

/* TF goes on with POPF, so the trap comes after the instruction that follows it. */
#define STEP_OVER(insn, ...)                                                                       \
    __asm__ volatile("movl $1f, %[next]\n\t"                                                       \
                     "pushf\n\t"                                                                   \
                     "orl $0x100, (%%esp)\n\t"                                                     \
                     "popf\n\t" insn "\n"                                                          \
                     "1:" __VA_ARGS__)

static void step_result(const char *name, uint32_t next)
{
    bool ok = db_count == 1 && db_eip == next && (db_dr6 & DR6_BS);
    if (!ok)
        printf("  %s: %u #DB, at 0x%x (want 0x%x), DR6 0x%x\n", name, db_count, db_eip, next,
               db_dr6);
    vcheck(ok, name, "no single-step #DB right after the instruction");
}

static void check_single_step(void)
{
    uint32_t next, a, b, c, d;
    __asm__ volatile("mov %0, %%db6" : : "r"(DR6_INIT));
    db_count = 0;
    STEP_OVER("nop", : [next] "=m"(next) : : "memory");
    step_result("step-nop", next);

    db_count = 0;
    STEP_OVER("cpuid",
              : [next] "=m"(next), "=a"(a), "=b"(b), "=c"(c), "=d"(d)
              : "a"(0), "c"(0)
              : "memory");
    step_result("step-cpuid", next);

    db_count = 0;
    STEP_OVER("inb $0x80, %%al", : [next] "=m"(next), "=a"(a) : : "memory");
    step_result("step-in", next);

    db_count = 0;
    STEP_OVER("outb %%al, $0x80", : [next] "=m"(next) : "a"(0) : "memory");
    step_result("step-out", next);

    db_count = 0;
    STEP_OVER("rdmsr", : [next] "=m"(next), "=a"(a), "=d"(d) : "c"(MSR_MISC_ENABLE) : "memory");
    step_result("step-rdmsr", next);

    db_count = 0;
    STEP_OVER("wrmsr", : [next] "=m"(next) : "c"(MSR_MISC_ENABLE), "a"(a), "d"(d) : "memory");
    step_result("step-wrmsr", next);

    db_count = 0;
    if (has.amd)
        STEP_OVER("vmmcall", : [next] "=m"(next), "=a"(a) : "a"(HC_NOP) : "memory");
    else
        STEP_OVER("vmcall", : [next] "=m"(next), "=a"(a) : "a"(HC_NOP) : "memory");
    step_result("step-hypercall", next);

    db_count = 0;
    STEP_OVER("movl (%[reg]), %[val]",
              : [next] "=m"(next), [val] "=r"(a)
              : [reg] "r"(XAPIC_VERSION)
              : "memory");
    step_result("step-mmio", next);
}

/* ------------------------------------------------------------ instruction lengths */

/* Where the instructions run: across the boundary of these two pages and before it. */
static uint8_t code_pages[2 * 4096] __attribute__((aligned(4096)));

/*
 * Runs insn at offset of code_pages, followed by "mov $0x600d, %esi; ret",
 * with EAX = eax and ECX = 0: true when it comes back with ESI = 0x600d,
 * the instruction's results in *r, so only when execution went on right
 * after the instruction.
 */
static bool run_insn_at(uint32_t offset, const uint8_t *insn, size_t len, uint32_t eax,
                        struct cpuid_regs *r)
{
    static const uint8_t tail[] = {0xbe, 0x0d, 0x60, 0, 0, 0xc3};
    uint8_t *p = code_pages + offset;
    for (size_t i = 0; i < len; i++)
        p[i] = insn[i];
    for (size_t i = 0; i < sizeof(tail); i++)
        p[len + i] = tail[i];
    uint32_t esi = 0;
    r->eax = eax;
    r->ecx = 0;
    __asm__ volatile("call *%[code]"
                     : "+a"(r->eax), "=b"(r->ebx), "+c"(r->ecx), "=d"(r->edx), "+S"(esi)
                     : [code] "r"(p)
                     : "memory");
    return esi == 0x600d;
}

static void check_insn_lengths(void)
{
    struct cpuid_regs want = cpuid(0, 0), r;
    static const struct {
        const char *name;
        uint8_t len, bytes[4];
        uint32_t offset;
    } cpuids[] = {
        {"cs-prefix", 3, {0x2e, 0x0f, 0xa2}, 0x100},
        {"two-prefixes", 4, {0x66, 0x3e, 0x0f, 0xa2}, 0x200},
        {"across-pages", 2, {0x0f, 0xa2}, 0xfff},
        {"prefix-across-pages", 3, {0x2e, 0x0f, 0xa2}, 0xffe},
        {"at-page-end", 2, {0x0f, 0xa2}, 0xffe},
        {"3-bytes-before-page-end", 2, {0x0f, 0xa2}, 0xffd},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof(cpuids) / sizeof(cpuids[0]); i++) {
        bool went_on = run_insn_at(cpuids[i].offset, cpuids[i].bytes, cpuids[i].len, 0, &r);
        if (!went_on || r.ebx != want.ebx || r.edx != want.edx || r.ecx != want.ecx) {
            printf("  cpuid %s at page offset 0x%x: went on %u, ebx 0x%x\n", cpuids[i].name,
                   cpuids[i].offset, went_on, r.ebx);
            ok = false;
        }
    }
    vcheck(ok, "insn-cpuid-slow-length", "CPUID did not go on right after the instruction");

    /* VMMCALL or VMCALL, 3 bytes: across the page boundary, and with a prefix. */
    uint8_t call[4] = {0x2e, 0x0f, 0x01, has.amd ? 0xd9 : 0xc1};
    ok = run_insn_at(0xffe, call + 1, 3, HC_NOP, &r) && r.eax == 0 &&
         run_insn_at(0xfff, call + 1, 3, HC_NOP, &r) && r.eax == 0 &&
         run_insn_at(0x300, call, 4, HC_NOP, &r) && r.eax == 0;
    vcheck(ok, "insn-hypercall-slow-length",
           "the hypercall did not go on right after the instruction");
}

/* ------------------------------------------------------------ two vCPUs */

/*
 * The AP halts until the BSP says go, sets its own per-vCPU values, then
 * spins with interrupts on, so it stays runnable behind the BSP on their
 * shared host CPU. The BSP sends it two NMIs back to back at the start of
 * a fresh time slice: both are pending before the AP runs again, and both
 * must arrive.
 */
static volatile uint32_t nmi_count, ap_go, ap_phase, ap_failed, timer_ticks;

__attribute__((interrupt)) static void nmi_handler(struct interrupt_frame *f)
{
    (void)f;
    nmi_count++;
}

__attribute__((interrupt)) static void timer_handler(struct interrupt_frame *f)
{
    (void)f;
    timer_ticks++;
    lapic_eoi();
}

__attribute__((interrupt)) static void go_handler(struct interrupt_frame *f)
{
    (void)f;
    ap_go = 1;
    lapic_eoi();
}

/* XCR0 values of their own: x87 and SSE for the AP, AVX too for the BSP where offered. */
#define BSP_XCR0 (XCR0_X87 | XCR0_SSE | (has.avx_state ? XCR0_AVX : 0))
#define AP_XCR0  (XCR0_X87 | XCR0_SSE)

/* Each vCPU's XSAVE image, written under its own XCR0 before the host CPU goes to the other. */
static uint8_t own_xsave_area[2][4096] __attribute__((aligned(64)));

static void set_own_values(uint32_t tsc_aux, uint32_t pkrs, uint32_t pkru, uint32_t xcr0,
                           uint32_t cr2)
{
    write_cr2(cr2);
    if (has.rdtscp || has.rdpid)
        try_wrmsr(MSR_TSC_AUX, tsc_aux);
    if (has.pks)
        try_wrmsr(MSR_PKRS, pkrs);
    if (has.pku) {
        try_write_cr4(read_cr4() | CR4_PKE);
        try_wrpkru(pkru);
    }
    if (has.xsave) {
        try_write_cr4(read_cr4() | CR4_OSXSAVE);
        xsetbv(xcr0);
        xsave(own_xsave_area[this_cpu_index()], xcr0);
    }
}

/*
 * Which of this vCPU's values another vCPU on its host CPU changed: a bit
 * each. An XCR0 lost while the vCPU was away makes XRSTOR of its own image
 * fault, as Linux's signal return does (XSTATE_BV then holds bits XCR0 lacks).
 * A CR2 lost so hands a page-fault handler, had a VM exit come before it read
 * CR2, another vCPU's fault address: a process killed for it (seen once in a
 * Linux guest on Bochs VMX).
 */
static uint32_t own_values_lost(uint32_t tsc_aux, uint32_t pkrs, uint32_t pkru, uint32_t xcr0,
                                uint32_t cr2)
{
    uint32_t lost = 0, v32;
    uint64_t v;
    if (read_cr2() != cr2)
        lost |= 32;
    if (has.rdtscp && (try_rdtscp(&v32) != NO_FAULT || v32 != tsc_aux))
        lost |= 1;
    if (has.pks && (try_rdmsr(MSR_PKRS, &v) != NO_FAULT || v != pkrs))
        lost |= 2;
    if (has.pku && (try_rdpkru(&v32) != NO_FAULT || v32 != pkru))
        lost |= 4;
    if (has.xsave && xgetbv() != xcr0)
        lost |= 8;
    if (has.xsave && try_xrstor(own_xsave_area[this_cpu_index()], xcr0) != NO_FAULT)
        lost |= 16;
    return lost;
}

/*
 * check_tsc_writes: the BSP's steps for the AP (1: write your TSC far
 * ahead, 2: read your TSC and TSC_ADJUST, 3: read your TSC again), and what
 * the AP wrote and read.
 */
static volatile uint32_t tsc_step, ap_tsc_fault;
static volatile uint64_t ap_tsc_written, ap_tsc_after, ap_tsc_read, ap_tsc_adjust, ap_tsc_synced;

static void wait_tsc_step(uint32_t step)
{
    __asm__ volatile("sti");
    while (tsc_step < step)
        cpu_relax();
    __asm__ volatile("cli");
}

static void ap_tsc_writes(void)
{
    wait_tsc_step(1);
    ap_tsc_written = rdtsc() + TSC_FAR_AHEAD;
    ap_tsc_fault = try_wrmsr(MSR_TSC, ap_tsc_written);
    ap_tsc_after = rdtsc();
    ap_phase = 3;
    wait_tsc_step(2);
    ap_tsc_read = rdtsc();
    uint64_t adjust = 0;
    if (has.tsc_adjust)
        try_rdmsr(MSR_TSC_ADJUST, &adjust);
    ap_tsc_adjust = adjust;
    ap_phase = 4;
    wait_tsc_step(3);
    ap_tsc_synced = rdtsc();
    ap_phase = 5;
}

static void ap_main(uint32_t index)
{
    (void)index;
    while (!ap_go)
        wait_for_interrupt();
    set_own_values(AP_TSC_AUX, AP_PKRS, AP_PKRU, AP_XCR0, AP_CR2);
    ap_phase = 1;
    __asm__ volatile("sti");
    /* Spinning, not halting: a halted AP woken by the first NMI could run before the second. */
    for (uint64_t end = rdtsc() + us_to_tsc(2000000); nmi_count < 2 && rdtsc() < end;)
        __asm__ volatile("" ::: "memory");
    __asm__ volatile("cli");
    ap_failed = own_values_lost(AP_TSC_AUX, AP_PKRS, AP_PKRU, AP_XCR0, AP_CR2);
    ap_phase = 2;
    ap_tsc_writes();
}

/* With interrupts on and PAUSE, so the host CPU can go to the AP (Bochs SVM needs either). */
static bool wait_phase(uint32_t phase)
{
    bool reached = false;
    __asm__ volatile("sti");
    for (uint64_t end = rdtsc() + us_to_tsc(4000000); !reached && rdtsc() < end;) {
        reached = ap_phase >= phase;
        cpu_relax();
    }
    __asm__ volatile("cli");
    return reached;
}

/* Halt for a few milliseconds: the AP runs meanwhile, and the BSP comes back on a fresh slice. */
static void sleep_ms(uint32_t ms)
{
    uint32_t ticks = timer_ticks;
    lapic_timer_start(LAPIC_TIMER_ONESHOT, VECTOR_TIMER, apic_timer_khz() * ms, 1);
    while (timer_ticks == ticks)
        wait_for_interrupt();
}

static void check_two_vcpus(void)
{
    send_ipi(cpu_apic_id(1), VECTOR_GO);
    if (!wait_phase(1)) {
        vcheck(false, "two-vcpus", "the second vCPU did not run");
        return;
    }
    set_own_values(BSP_TSC_AUX, BSP_PKRS, BSP_PKRU, BSP_XCR0, BSP_CR2);
    sleep_ms(3);
    send_nmi(cpu_apic_id(1));
    send_nmi(cpu_apic_id(1));
    bool done = wait_phase(2);
    if (nmi_count != 2)
        printf("  the AP took %u NMIs\n", nmi_count);
    vcheck(done && nmi_count == 2, "nmi-back-to-back", "two NMIs collapsed into one");
    uint32_t lost = own_values_lost(BSP_TSC_AUX, BSP_PKRS, BSP_PKRU, BSP_XCR0, BSP_CR2);
    if (lost || ap_failed)
        printf("  lost (TSC_AUX 1, PKRS 2, PKRU 4, XCR0 8, XRSTOR faults 16, CR2 32): BSP 0x%x, "
               "AP 0x%x\n",
               lost, ap_failed);
    vcheck(done && !lost && !ap_failed, "per-vcpu-values",
           "a vCPU's TSC_AUX, PKRS, PKRU, XCR0 or CR2 changed under another vCPU");
    if (has.xsave)
        xsetbv(XCR0_X87);
    try_write_cr4(read_cr4() & ~(CR4_PKE | CR4_OSXSAVE));
}

/*
 * IA32_TSC is each vCPU's own (KVM 6.1's guest writes): the AP's write far
 * ahead moves the AP's TSC and leaves the BSP's alone. The BSP's write half
 * a second past where the AP's TSC has got to is taken as it is: KVM once
 * matched such a write to the other vCPUs' TSC, now only its userspace's.
 * Then the BSP takes the AP's IA32_TSC_ADJUST, as Linux brings a package's
 * TSCs together: equal TSC_ADJUSTs are equal TSCs.
 */
static void check_tsc_writes(void)
{
    uint64_t before = rdtsc();
    tsc_step = 1;
    bool wrote = wait_phase(3);
    uint64_t after = rdtsc();
    bool own =
        wrote && ap_tsc_fault == NO_FAULT && ap_tsc_after - ap_tsc_written < TSC_FAR_AHEAD / 2;
    bool alone = after - before < TSC_FAR_AHEAD / 2 && ap_tsc_after - after > TSC_FAR_AHEAD / 2;
    if (!own || !alone)
        printf("  TSC: BSP 0x%llx then 0x%llx; the AP wrote 0x%llx, read 0x%llx\n",
               (unsigned long long)before, (unsigned long long)after,
               (unsigned long long)ap_tsc_written, (unsigned long long)ap_tsc_after);
    vcheck(own && alone, "tsc-write-per-vcpu",
           "a vCPU's IA32_TSC write did not move its own TSC alone");

    uint64_t value = rdtsc() + TSC_FAR_AHEAD + us_to_tsc(500000);
    unsigned fault = try_wrmsr(MSR_TSC, value);
    uint64_t since = rdtsc() - value;
    tsc_step = 2;
    bool read = wait_phase(4);
    uint64_t bsp = rdtsc(), apart = bsp - ap_tsc_read;
    bool exact = fault == NO_FAULT && since < us_to_tsc(250000) && read &&
                 apart >= us_to_tsc(250000) && apart < us_to_tsc(750000);
    if (!exact)
        printf("  TSC: the BSP wrote 0x%llx (%s), read it +0x%llx; then AP 0x%llx, BSP 0x%llx\n",
               (unsigned long long)value, fault_name(fault), (unsigned long long)since,
               (unsigned long long)ap_tsc_read, (unsigned long long)bsp);
    vcheck(exact, "tsc-write-exact", "a write close to another vCPU's TSC was not taken as it is");

    unsigned w = has.tsc_adjust ? try_wrmsr(MSR_TSC_ADJUST, ap_tsc_adjust) : NO_FAULT;
    tsc_step = 3;
    bool synced = wait_phase(5);
    uint64_t bsp_synced = rdtsc(), apart_synced = bsp_synced - ap_tsc_synced;
    if (has.tsc_adjust) {
        bool one = w == NO_FAULT && synced && apart_synced < us_to_tsc(250000);
        if (!one)
            printf("  TSC_ADJUST 0x%llx (%s): AP 0x%llx, then BSP 0x%llx\n",
                   (unsigned long long)ap_tsc_adjust, fault_name(w),
                   (unsigned long long)ap_tsc_synced, (unsigned long long)bsp_synced);
        vcheck(one, "tsc-adjust-sync", "equal IA32_TSC_ADJUSTs did not give the vCPUs one TSC");
    }
}

/*
 * A one-shot count keeps its time across a TSC write, as its counter runs at
 * a rate, not to a TSC value: armed for 100 ms, the TSC moved far ahead at
 * once, the count read just after the write goes on from the one just
 * before (it was 0 when the expiry stayed a TSC value: the count read
 * against the new TSC and the timer fired at once), and the interrupt comes
 * no earlier than the 100 ms. The TSC goes back where it was afterwards.
 */
static void check_timer_across_tsc_write(void)
{
    const uint32_t ms = 100;
    uint32_t ticks = timer_ticks;
    uint64_t t0 = rdtsc();
    lapic_timer_start(LAPIC_TIMER_ONESHOT, VECTOR_TIMER, apic_timer_khz() * ms, 1);
    uint32_t before = lapic_read(LAPIC_TMCCT);
    uint64_t t1 = rdtsc();
    unsigned fault = try_wrmsr(MSR_TSC, t1 + TSC_FAR_AHEAD);
    uint64_t t2 = rdtsc();
    uint32_t after = lapic_read(LAPIC_TMCCT);
    __asm__ volatile("sti");
    while (timer_ticks == ticks && rdtsc() - t2 < us_to_tsc(1000000))
        cpu_relax();
    __asm__ volatile("cli");
    uint64_t t3 = rdtsc();
    try_wrmsr(MSR_TSC, rdtsc() - TSC_FAR_AHEAD);
    /* The write's own time is not counted: at most a few ms even when preempted. */
    uint64_t waited_us = tsc_to_us((t1 - t0) + (t3 - t2));
    bool ok = fault == NO_FAULT && after && after <= before && timer_ticks != ticks &&
              waited_us >= ms * 1000 * 9 / 10;
    if (!ok)
        printf("  one-shot of %u ms across a TSC write (%s): count 0x%x, then 0x%x; fired after "
               "%u us\n",
               ms, fault_name(fault), before, after, (uint32_t)waited_us);
    vcheck(ok, "apic-timer-tsc-write", "a TSC write moved the one-shot timer's expiry");
}

/* ------------------------------------------------------------ long mode */

/*
 * Identity-mapped long mode with 2 MiB pages: the first GiB and the local
 * APIC page. The same tables also appear at a high alias that only the
 * paging depth in use can reach: PML5 entry 256 (0xff00000000000000, not
 * canonical with four levels) or PML4 entry 256 (0xffff800000000000).
 */
#define TWO_MIB 0x200000ull

static uint64_t pml5[512] __attribute__((aligned(4096)));
static uint64_t pml4[512] __attribute__((aligned(4096)));
static uint64_t pdpt[512] __attribute__((aligned(4096)));
static uint64_t pd_low[512] __attribute__((aligned(4096)));
static uint64_t pd_apic[512] __attribute__((aligned(4096)));

/* Shared with the assembly below: keep the offsets in step. */
struct long_mode_run {
    uint32_t cr3, cr4_bits;    /* 0, 4 */
    uint32_t high_lo, high_hi; /* 8, 12: base of the high alias */
    uint32_t wp_toggles;       /* 16 */
    uint32_t saved_cr4;        /* 20 */
    uint32_t vendor_ebx;       /* 24: CPUID 0 from the high alias */
    uint32_t apic_version;     /* 28: MMIO load through the high alias */
    uint32_t cr8_after_tpr;    /* 32: CR8 after the xAPIC TPR was written */
    uint32_t tpr_after_cr8;    /* 36: the xAPIC TPR after CR8 was written */
    uint32_t gdtr[2];          /* 40: the runtime's GDTR, restored afterwards */
    uint32_t idtr[2];          /* 48: the runtime's IDTR, restored afterwards */
    uint32_t tpr_ipi_lowered;  /* 56: VECTOR_TPR taken right after CR8 went to 0 */
    uint32_t tpr_ipi_late;     /* 60: taken by the exit of an xAPIC TPR write after that */
};
_Static_assert(offsetof(struct long_mode_run, wp_toggles) == 16 &&
                   offsetof(struct long_mode_run, saved_cr4) == 20 &&
                   offsetof(struct long_mode_run, vendor_ebx) == 24 &&
                   offsetof(struct long_mode_run, tpr_after_cr8) == 36 &&
                   offsetof(struct long_mode_run, gdtr) == 40 &&
                   offsetof(struct long_mode_run, tpr_ipi_late) == 60,
               "struct long_mode_run layout");

/* The runtime's flat code (0x08) and data (0x10), and 64-bit code at 0x18. */
uint64_t long_mode_gdt[4] = {0, 0x00cf9b000000ffffull, 0x00cf93000000ffffull,
                             0x00af9b000000ffffull};
struct {
    uint16_t limit;
    uint32_t base;
} __attribute__((packed)) long_mode_gdtr = {sizeof(long_mode_gdt) - 1, (uint32_t)long_mode_gdt};

/*
 * Long mode's IDT: only VECTOR_TPR's 64-bit interrupt gate, to
 * long_mode_tpr_handler (it counts in long_mode_tpr_taken and sends the EOI).
 */
uint64_t long_mode_idt[2 * (VECTOR_TPR + 1)] __attribute__((aligned(16)));
struct {
    uint16_t limit;
    uint64_t base;
} __attribute__((packed)) long_mode_idtr = {sizeof(long_mode_idt) - 1, 0};
volatile uint32_t long_mode_tpr_taken;
void long_mode_tpr_handler(void);

/* void long_mode_run(struct long_mode_run *r): cdecl, interrupts off, paging off. */
void long_mode_run(struct long_mode_run *r);
__asm__(".text\n"
        ".code32\n"
        ".globl long_mode_run\n"
        "long_mode_run:\n\t"
        "push %ebp\n\t"
        "push %ebx\n\t"
        "push %esi\n\t"
        "push %edi\n\t"
        "mov 20(%esp), %esi\n\t"
        "sgdt 40(%esi)\n\t"
        "sidt 48(%esi)\n\t"
        "lgdt long_mode_gdtr\n\t"
        "mov %cr4, %eax\n\t"
        "mov %eax, 20(%esi)\n\t"
        "or 4(%esi), %eax\n\t"
        "mov %eax, %cr4\n\t"
        "mov 0(%esi), %eax\n\t"
        "mov %eax, %cr3\n\t"
        "mov $0xc0000080, %ecx\n\t"
        "rdmsr\n\t"
        "or $0x100, %eax\n\t" /* EFER.LME */
        "wrmsr\n\t"
        "mov %cr0, %eax\n\t"
        "or $0x80000000, %eax\n\t"
        "mov %eax, %cr0\n\t"
        "ljmp $0x18, $1f\n"
        ".code64\n"
        "1:\n\t"
        /* Continue at the high alias of the code below. */
        "mov 8(%rsi), %rbp\n\t"
        "lea 2f(%rip), %rax\n\t"
        "add %rbp, %rax\n\t"
        "jmp *%rax\n"
        "2:\n\t"
        "xor %eax, %eax\n\t"
        "xor %ecx, %ecx\n\t"
        "cpuid\n\t"
        "mov %ebx, 24(%rsi)\n\t"
        "mov $0xfee00030, %ebx\n\t"
        "add %rbp, %rbx\n\t"
        "mov (%rbx), %eax\n\t"
        "mov %eax, 28(%rsi)\n\t"
        /* TPR through the xAPIC page, read back as CR8; and the reverse. */
        "mov $0xfee00080, %ebx\n\t"
        "add %rbp, %rbx\n\t"
        "movl $0x50, (%rbx)\n\t"
        "mov %cr8, %rax\n\t"
        "mov %eax, 32(%rsi)\n\t"
        "mov $3, %eax\n\t"
        "mov %rax, %cr8\n\t"
        "mov (%rbx), %eax\n\t"
        "mov %eax, 36(%rsi)\n\t"
        "xor %eax, %eax\n\t"
        "mov %rax, %cr8\n\t"
        /*
         * A self-IPI of class 4 under CR8 = 15 waits in IRR; lowering CR8
         * must deliver it before the instruction after the next serializing
         * one (an IRETQ to itself: no exit), with nothing else to exit on.
         */
        "lidt long_mode_idtr(%rip)\n\t"
        "mov $15, %eax\n\t"
        "mov %rax, %cr8\n\t"
        "movl $0x44042, 0x280(%rbx)\n\t" /* ICR: fixed, asserted, to self, VECTOR_TPR */
        "sti\n\t"
        "nop\n\t"
        "xor %eax, %eax\n\t"
        "mov %rax, %cr8\n\t"
        "mov %rsp, %rax\n\t"
        "pushq $0x10\n\t"
        "push %rax\n\t"
        "pushfq\n\t"
        "pushq $0x18\n\t"
        "lea 7f(%rip), %rax\n\t"
        "push %rax\n\t"
        "iretq\n"
        "7:\n\t"
        "mov long_mode_tpr_taken(%rip), %eax\n\t"
        "mov %eax, 56(%rsi)\n\t"
        /* If it still waits, the exit of a TPR write delivers it before the IDT goes back. */
        "movl $0, (%rbx)\n\t"
        "mov long_mode_tpr_taken(%rip), %eax\n\t"
        "mov %eax, 60(%rsi)\n\t"
        "cli\n\t"
        /* CR0.WP back and forth. */
        "mov 16(%rsi), %ecx\n\t"
        "test %ecx, %ecx\n\t"
        "jz 4f\n"
        "3:\n\t"
        "mov %cr0, %rax\n\t"
        "xor $0x10000, %rax\n\t"
        "mov %rax, %cr0\n\t"
        "dec %ecx\n\t"
        "jnz 3b\n"
        "4:\n\t"
        /* Back to the identity map, then to 32-bit compatibility mode. */
        "lea 5f(%rip), %rax\n\t"
        "sub %rbp, %rax\n\t"
        "jmp *%rax\n"
        "5:\n\t"
        "pushq $0x08\n\t"
        "lea 6f(%rip), %rax\n\t"
        "push %rax\n\t"
        "lretq\n"
        ".code32\n"
        "6:\n\t"
        "mov %cr0, %eax\n\t"
        "and $0x7fffffff, %eax\n\t"
        "mov %eax, %cr0\n\t"
        "mov $0xc0000080, %ecx\n\t"
        "rdmsr\n\t"
        "and $~0x100, %eax\n\t"
        "wrmsr\n\t"
        "mov 20(%esi), %eax\n\t"
        "mov %eax, %cr4\n\t"
        "lgdt 40(%esi)\n\t"
        "lidt 48(%esi)\n\t"
        "pop %edi\n\t"
        "pop %esi\n\t"
        "pop %ebx\n\t"
        "pop %ebp\n\t"
        "ret\n"
        ".code64\n"
        "long_mode_tpr_handler:\n\t"
        "incl long_mode_tpr_taken(%rip)\n\t"
        "push %rax\n\t"
        "mov $0xfee000b0, %eax\n\t" /* EOI, through the identity map */
        "movl $0, (%rax)\n\t"
        "pop %rax\n\t"
        "iretq\n"
        ".code32\n");

/*
 * EFER.LME set with paging and PAE still off, as a guest sets it on its way
 * into long mode when it sets LME first: an exit there (CPUID) must leave
 * the guest where it was. QEMU 7.2 left this guest's CR0 in the host at such
 * an exit; until pollux put the host's back, the next entry on that CPU ran
 * the guest on host-physical memory (docs/robustness.md). A failure here is
 * therefore most likely a crash of this VM, not a FAIL line.
 */
static volatile uint32_t lme_canary = 0x600dcafe;

static void check_lme_paging_off(void)
{
    uint32_t want = cpuid(0, 0).ebx;
    uint64_t efer = 0;
    unsigned r = try_rdmsr(MSR_EFER, &efer);
    unsigned w = try_wrmsr(MSR_EFER, efer | EFER_LME);
    uint32_t vendor = cpuid(0, 0).ebx;
    uint64_t during = 0;
    unsigned r2 = try_rdmsr(MSR_EFER, &during);
    unsigned back = try_wrmsr(MSR_EFER, efer);
    vcheck(r == NO_FAULT && w == NO_FAULT && r2 == NO_FAULT && back == NO_FAULT &&
               (during & (EFER_LME | EFER_LMA)) == EFER_LME && vendor == want &&
               lme_canary == 0x600dcafe,
           "lme-paging-off", "EFER.LME with paging off did not survive an exit");
}

static void build_page_tables(void)
{
    for (uint64_t i = 0; i < 512; i++)
        pd_low[i] = i * TWO_MIB | PTE_PS | PTE_RW | PTE_P;
    pd_apic[(0xfee00000u >> 21) & 511] = 0xfee00000u | PTE_PCD | PTE_PWT | PTE_PS | PTE_RW | PTE_P;
    pdpt[0] = (uint32_t)pd_low | PTE_RW | PTE_P;
    pdpt[3] = (uint32_t)pd_apic | PTE_RW | PTE_P;
    pml4[0] = pml4[256] = (uint32_t)pdpt | PTE_RW | PTE_P;
    pml5[0] = pml5[256] = (uint32_t)pml4 | PTE_RW | PTE_P;
    /* The 64-bit interrupt gate: offset 15:0, selector 0x18, present DPL 0 type 0xE, 31:16. */
    uint32_t handler = (uint32_t)long_mode_tpr_handler;
    long_mode_idt[2 * VECTOR_TPR] =
        (handler & 0xffffull) | 0x18ull << 16 | 0x8e00ull << 32 | (uint64_t)(handler >> 16) << 48;
    long_mode_idtr.base = (uint32_t)long_mode_idt;
}

static void check_long_mode(uint32_t wp_toggles)
{
    build_page_tables();
    struct long_mode_run r = {0};
    r.cr3 = has.la57 ? (uint32_t)pml5 : (uint32_t)pml4;
    r.cr4_bits = CR4_PAE | (has.la57 ? CR4_LA57 : 0);
    r.high_hi = has.la57 ? 0xff000000u : 0xffff8000u;
    r.wp_toggles = wp_toggles;
    uint64_t start = rdtsc();
    long_mode_run(&r);
    uint64_t cycles = rdtsc() - start;
    printf("long mode (%u levels): %u CR0.WP toggles in %u ms of TSC\n", has.la57 ? 5 : 4,
           wp_toggles, (uint32_t)div64(tsc_to_us(cycles), 1000));
    vcheck(r.vendor_ebx == cpuid(0, 0).ebx && r.apic_version == *(volatile uint32_t *)XAPIC_VERSION,
           has.la57 ? "walk-5-level" : "walk-4-level",
           "CPUID or an MMIO load at a high linear address went wrong");
    if (r.cr8_after_tpr != 5 || r.tpr_after_cr8 != 0x30)
        printf("  CR8 after TPR 0x50: %u; TPR after CR8 3: 0x%x\n", r.cr8_after_tpr,
               r.tpr_after_cr8);
    vcheck(r.cr8_after_tpr == 5 && r.tpr_after_cr8 == 0x30, "tpr-cr8",
           "the xAPIC TPR and CR8 disagree");
    if (r.tpr_ipi_lowered != 1 || r.tpr_ipi_late != 1)
        printf("  held-back self-IPI taken: %u after CR8 0, %u after a TPR write\n",
               r.tpr_ipi_lowered, r.tpr_ipi_late);
    vcheck(r.tpr_ipi_lowered == 1 && r.tpr_ipi_late == 1, "tpr-cr8-lower",
           "lowering CR8 did not deliver the interrupt it held back");
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t wp_toggles = arg_uint(info, 1000, 0, 100000000);
    print_cpuid();
    read_features();
    bool two = smp_start(false, ap_main) == 2;
    /* After smp_start, whose cpu_init installs the runtime's exception handlers. */
    set_interrupt_handler(VECTOR_DB, db_handler);
    set_interrupt_handler(VECTOR_NMI, nmi_handler);
    fault_catch_install();
    set_interrupt_handler(VECTOR_TIMER, timer_handler);
    set_interrupt_handler(VECTOR_GO, go_handler);
    check_state_dependent_cpuid();
    check_apic_base_moves();
    check_msrs();
    check_fault_rf();
    if (two) {
        check_two_vcpus();
        check_tsc_writes();
    } else
        vcheck(false, "two-vcpus", "no second vCPU (run with vcpus=2)");
    check_timer_across_tsc_write();
    check_single_step();
    check_insn_lengths();
    check_lme_paging_off();
    check_long_mode(wp_toggles);
    return check_summary("cpucheck");
}

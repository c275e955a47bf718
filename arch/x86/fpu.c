/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/fpu.h"

#include "arch/x86/cpu.h"
#include "arch/x86/mm.h"
#include "lib/string.h"

#define CPUID7_ECX_PKU (1u << 3)

#define XCR0_X87  (1u << 0)
#define XCR0_SSE  (1u << 1)
#define XCR0_AVX  (1u << 2)
#define XCR0_PKRU (1u << 9)
/* Components pollux saves for guests; others (AVX-512, MPX, ...) are not offered. */
#define XCR0_SUPPORTED (XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_PKRU)

#define FXSAVE_MXCSR_OFFSET 24
#define MXCSR_DEFAULT       0x1f80

static bool have_xsave;
/*
 * PKRU is switched by hand as well: WRPKRU works whatever the guest's XCR0
 * says, so XSAVE under the guest's XCR0 may miss it. The host sets CR4.PKE
 * to reach the register; its own pages are supervisor pages, which PKRU
 * does not govern.
 */
static bool have_pku;
static uint64_t host_xcr0;
static unsigned area_size = 512;

static inline void xsetbv(uint64_t v)
{
    __asm__ volatile("xsetbv" ::"c"(0), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
    exit_count(EXIT_COUNT_XSETBV);
}

static inline uint64_t xgetbv(void)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

void fpu_cpu_init(void)
{
    have_xsave = cpuid(1, 0).ecx & (1u << 26);
    have_pku = cpuid(0, 0).eax >= 7 && (cpuid(7, 0).ecx & CPUID7_ECX_PKU);
    write_cr0((read_cr0() & ~(uint64_t)(CR0_EM | CR0_TS)) | CR0_MP | CR0_NE);
    uint64_t cr4 = read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT;
    if (have_xsave)
        cr4 |= CR4_OSXSAVE;
    if (have_pku)
        cr4 |= CR4_PKE;
    write_cr4(cr4);
    if (have_xsave) {
        struct cpuid_regs d = cpuid(0xd, 0);
        host_xcr0 = (((uint64_t)d.edx << 32) | d.eax) & XCR0_SUPPORTED;
        xsetbv(host_xcr0);
        area_size = cpuid(0xd, 0).ebx; /* size for the components now enabled */
    }
}

bool fpu_has_xsave(void)
{
    return have_xsave;
}

unsigned fpu_xsave_size(void)
{
    return area_size;
}

static inline uint32_t rdpkru(void)
{
    uint32_t eax, edx;
    __asm__ volatile("rdpkru" : "=a"(eax), "=d"(edx) : "c"(0));
    return eax;
}

static inline void wrpkru(uint32_t v)
{
    __asm__ volatile("wrpkru" ::"a"(v), "c"(0), "d"(0) : "memory");
}

uint64_t fpu_host_xcr0(void)
{
    return host_xcr0;
}

int fpu_state_init(struct fpu_state *f)
{
    f->area = page_alloc_zeroed((area_size + PAGE_SIZE - 1) / PAGE_SIZE);
    if (!f->area)
        return -1;
    /* XSTATE_BV = 0 gives the initial x87/SSE/AVX state; MXCSR is loaded regardless. */
    uint32_t mxcsr = MXCSR_DEFAULT;
    memcpy(f->area + FXSAVE_MXCSR_OFFSET, &mxcsr, sizeof(mxcsr));
    uint16_t fcw = 0x37f;
    memcpy(f->area, &fcw, sizeof(fcw));
    f->xcr0 = XCR0_X87;
    return 0;
}

void fpu_state_free(struct fpu_state *f)
{
    if (f->area)
        pmm_free(&host_pmm, (uint64_t)f->area, (area_size + PAGE_SIZE - 1) / PAGE_SIZE);
    f->area = 0;
}

void fpu_guest_enter(struct fpu_state *f)
{
    if (have_xsave) {
        __asm__ volatile("xrstor64 %0" ::"m"(*f->area), "a"(~0u), "d"(~0u) : "memory");
        if (f->xcr0 != host_xcr0)
            xsetbv(f->xcr0);
    } else {
        __asm__ volatile("fxrstor64 %0" ::"m"(*f->area) : "memory");
    }
    if (have_pku)
        wrpkru(f->pkru);
}

void fpu_guest_leave(struct fpu_state *f)
{
    if (have_pku)
        f->pkru = rdpkru();
    if (have_xsave) {
        /*
         * The XCR0 in force is the guest's, read back rather than taken
         * from the last XSETBV exit: QEMU TCG's SVM never takes the XSETBV
         * intercept, so there the guest sets XCR0 itself. Only components
         * pollux saves are kept (a guest sets others only without the
         * intercept, and only if CPUID 0xD, which lists none, is ignored).
         */
        uint64_t in_force = xgetbv();
        f->xcr0 = in_force & host_xcr0;
        /*
         * Saved under the host's XCR0, a superset of the guest's: a guest
         * uses SSE without XCR0 bit 1 (an OS without XSAVE, XCR0 = 1 from
         * reset), and a save under its XCR0 would drop its XMM registers.
         */
        if (in_force != host_xcr0)
            xsetbv(host_xcr0);
        __asm__ volatile("xsave64 %0" : "=m"(*f->area) : "a"(~0u), "d"(~0u) : "memory");
    } else {
        __asm__ volatile("fxsave64 %0" : "=m"(*f->area)::"memory");
    }
}

bool fpu_xcr0_valid(uint64_t xcr0)
{
    if (!have_xsave || !(xcr0 & XCR0_X87) || (xcr0 & ~host_xcr0))
        return false;
    return !((xcr0 & XCR0_AVX) && !(xcr0 & XCR0_SSE));
}

void fpu_set_guest_xcr0(struct fpu_state *f, uint64_t xcr0)
{
    f->xcr0 = xcr0;
    xsetbv(xcr0);
}

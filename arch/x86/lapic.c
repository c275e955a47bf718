/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/lapic.h"

#include "arch/x86/cpu.h"
#include "arch/x86/trap.h"

#define LAPIC_ID        0x020
#define LAPIC_TPR       0x080
#define LAPIC_EOI       0x0b0
#define LAPIC_SVR       0x0f0
#define LAPIC_ESR       0x280
#define LAPIC_ICR_LO    0x300
#define LAPIC_ICR_HI    0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370
#define LAPIC_TMICT     0x380
#define LAPIC_TMCCT     0x390
#define LAPIC_TDCR      0x3e0

#define SVR_ENABLE       (1u << 8)
#define LVT_DELIVERY_NMI (4u << 8)
#define ICR_PENDING      (1u << 12)
#define ICR_ASSERT       (1u << 14)
#define ICR_LEVEL        (1u << 15)
#define ICR_INIT         (5u << 8)
#define ICR_STARTUP      (6u << 8)
#define ICR_NMI          (4u << 8)
#define ICR_ALL_BUT_SELF (3u << 18)
#define TDCR_DIV16       0x3
#define LVT_TSC_DEADLINE (2u << 17)

#define X2APIC_MSR(reg) (0x800u + (reg) / 16)

uint64_t lapic_timer_khz;
static volatile uint32_t *lapic_mmio;
static bool x2apic;
static bool ready;

static inline uint32_t rd(uint32_t reg)
{
    return x2apic ? (uint32_t)rdmsr(X2APIC_MSR(reg)) : lapic_mmio[reg / 4];
}

static inline void wr(uint32_t reg, uint32_t v)
{
    if (x2apic)
        wrmsr(X2APIC_MSR(reg), v);
    else
        lapic_mmio[reg / 4] = v;
}

void lapic_init(void)
{
    uint64_t msr = rdmsr(MSR_APIC_BASE);
    /* The boot CPU decides; the APs, initialised after it, follow. */
    if (!ready)
        x2apic = cpuid(1, 0).ecx & CPUID1_X2APIC;
    lapic_mmio = (volatile uint32_t *)(msr & ~0xfffull);
    /*
     * At the firmware's base, the BSP flag kept. x2APIC is entered from
     * xAPIC mode (a disabled APIC is enabled first) and never left: the SDM
     * allows no way back but through disabled.
     */
    uint64_t base = (msr & ~0xfffull) | APIC_BASE_ENABLE | (msr & 0x100);
    if (x2apic && !(msr & APIC_BASE_ENABLE))
        wrmsr(MSR_APIC_BASE, base);
    wrmsr(MSR_APIC_BASE, x2apic ? base | APIC_BASE_X2APIC : base);
    ready = true;
    wr(LAPIC_TPR, 0);
    wr(LAPIC_LVT_TIMER, LVT_MASKED);
    wr(LAPIC_LVT_LINT0, LVT_MASKED);
    /* LINT1 is the NMI input (a machine's NMI button, QEMU's inject-nmi): a state dump. */
    wr(LAPIC_LVT_LINT1, LVT_DELIVERY_NMI);
    wr(LAPIC_LVT_ERROR, LVT_MASKED);
    wr(LAPIC_SVR, SVR_ENABLE | VECTOR_SPURIOUS);
    wr(LAPIC_ESR, 0);
    wr(LAPIC_EOI, 0);
    wr(LAPIC_TDCR, TDCR_DIV16);
}

bool lapic_ready(void)
{
    return ready;
}

bool lapic_x2apic(void)
{
    return x2apic;
}

uint32_t lapic_id(void)
{
    return x2apic ? rd(LAPIC_ID) : rd(LAPIC_ID) >> 24;
}

void lapic_eoi(void)
{
    wr(LAPIC_EOI, 0);
}

static void icr_send(uint32_t dest, uint32_t lo)
{
    /* One 64-bit MSR write, with no delivery status to wait for. */
    if (x2apic) {
        wrmsr(X2APIC_MSR(LAPIC_ICR_LO), (uint64_t)dest << 32 | lo);
        return;
    }
    while (rd(LAPIC_ICR_LO) & ICR_PENDING)
        cpu_relax();
    wr(LAPIC_ICR_HI, dest << 24);
    wr(LAPIC_ICR_LO, lo);
}

void lapic_send_init(uint32_t apic_id)
{
    icr_send(apic_id, ICR_INIT | ICR_ASSERT | ICR_LEVEL);
}

void lapic_send_sipi(uint32_t apic_id, uint8_t vector_page)
{
    icr_send(apic_id, ICR_STARTUP | ICR_ASSERT | vector_page);
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
    icr_send(apic_id, ICR_ASSERT | vector);
}

void lapic_send_nmi(uint32_t apic_id)
{
    icr_send(apic_id, ICR_NMI | ICR_ASSERT);
}

void lapic_send_nmi_all_but_self(void)
{
    icr_send(0, ICR_NMI | ICR_ASSERT | ICR_ALL_BUT_SELF);
}

bool lapic_has_tsc_deadline(void)
{
    return cpuid(1, 0).ecx & CPUID1_TSC_DEADLINE;
}

void lapic_timer_tsc_deadline(uint64_t tsc)
{
    if ((rd(LAPIC_LVT_TIMER) & ~0xffu) != LVT_TSC_DEADLINE)
        wr(LAPIC_LVT_TIMER, LVT_TSC_DEADLINE | VECTOR_TIMER);
    /* The SDM asks for a fence between the LVT write and the MSR write. */
    __asm__ volatile("mfence" ::: "memory");
    wrmsr(MSR_TSC_DEADLINE, tsc);
}

void lapic_timer_oneshot(uint32_t ticks)
{
    wr(LAPIC_LVT_TIMER, VECTOR_TIMER);
    wr(LAPIC_TMICT, ticks ? ticks : 1);
}

void lapic_timer_stop(void)
{
    wr(LAPIC_TMICT, 0);
}

uint32_t lapic_timer_current(void)
{
    return rd(LAPIC_TMCCT);
}

void lapic_timer_start_count(void)
{
    wr(LAPIC_LVT_TIMER, LVT_MASKED);
    wr(LAPIC_TMICT, 0xffffffffu);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The local APIC in xAPIC or x2APIC mode, per CPU.
 */
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/timing.h"

#define APIC_BASE_EXTD   (1u << 10) /* x2APIC mode */
#define MSR_X2APIC_FIRST 0x800
#define MSR_X2APIC_ICR   0x830

#define CPUID1_ECX_X2APIC       (1u << 21)
#define CPUID1_ECX_TSC_DEADLINE (1u << 24)

#define SVR_ENABLE           (1u << 8)
#define ICR_DELIVERY_PENDING (1u << 12) /* xAPIC only */
#define ICR_LEVEL_ASSERT     (1u << 14)
#define ICR_ALL_BUT_SELF     (3u << 18)
#define ICR_NMI              (4u << 8)
#define ICR_INIT             (5u << 8)
#define ICR_STARTUP          (6u << 8)

#define INIT_DELAY_US    10000
#define STARTUP_DELAY_US 200

/* Per CPU, by cpu_slot(). */
static bool x2apic_mode[MAX_CPUS];
static bool deadline_armed[MAX_CPUS];

/*
 * pollux emulates the xAPIC page by decoding the faulting instruction, and
 * knows the MOV forms. Inline assembly pins the accesses to plain MOVs,
 * which a compiler could otherwise fold into other instructions.
 */
static uint32_t mmio_read(uint32_t reg)
{
    uint32_t v;
    __asm__ volatile("movl (%1), %0" : "=r"(v) : "r"(XAPIC_BASE + reg) : "memory");
    return v;
}

static void mmio_write(uint32_t reg, uint32_t v)
{
    __asm__ volatile("movl %0, (%1)" : : "r"(v), "r"(XAPIC_BASE + reg) : "memory");
}

uint32_t lapic_read(uint32_t reg)
{
    if (x2apic_mode[cpu_slot()])
        return (uint32_t)rdmsr(MSR_X2APIC_FIRST + reg / 16);
    return mmio_read(reg);
}

void lapic_write(uint32_t reg, uint32_t value)
{
    if (x2apic_mode[cpu_slot()])
        wrmsr(MSR_X2APIC_FIRST + reg / 16, value);
    else
        mmio_write(reg, value);
}

void lapic_enable(void)
{
    lapic_write(LAPIC_SVR, SVR_ENABLE | LAPIC_SPURIOUS_VECTOR);
}

void lapic_eoi(void)
{
    lapic_write(LAPIC_EOI, 0);
}

uint32_t lapic_id(void)
{
    if (x2apic_mode[cpu_slot()])
        return (uint32_t)rdmsr(MSR_X2APIC_FIRST + LAPIC_ID / 16);
    return mmio_read(LAPIC_ID) >> 24;
}

bool lapic_x2apic_offered(void)
{
    return (cpuid(1, 0).ecx & CPUID1_ECX_X2APIC) != 0;
}

bool lapic_tsc_deadline_offered(void)
{
    return (cpuid(1, 0).ecx & CPUID1_ECX_TSC_DEADLINE) != 0;
}

bool switch_to_x2apic(void)
{
    if (!lapic_x2apic_offered())
        return false;
    wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_EXTD);
    x2apic_mode[cpu_slot()] = true;
    return true;
}

static void write_icr(uint32_t dest, uint32_t low)
{
    /* In xAPIC mode the ICR is two registers: an interrupt handler sending an IPI between the two
     * writes would change the destination under us. */
    uint32_t flags;
    __asm__ volatile("pushf; pop %0; cli" : "=r"(flags) : : "memory");
    if (x2apic_mode[cpu_slot()]) {
        /* WRMSR to x2APIC registers is not serializing: without the fences the target could take
         * the IPI before it sees our earlier stores (Intel SDM, x2APIC register access). */
        __asm__ volatile("mfence; lfence" : : : "memory");
        wrmsr(MSR_X2APIC_ICR, (uint64_t)dest << 32 | low);
    } else {
        while (mmio_read(LAPIC_ICR_LO) & ICR_DELIVERY_PENDING)
            cpu_relax();
        mmio_write(LAPIC_ICR_HI, dest << 24);
        mmio_write(LAPIC_ICR_LO, low);
    }
    __asm__ volatile("push %0; popf" : : "r"(flags) : "memory", "cc");
}

void send_ipi(uint32_t apic_id, uint8_t vector)
{
    write_icr(apic_id, vector); /* fixed delivery, physical destination, edge */
}

void send_nmi(uint32_t apic_id)
{
    write_icr(apic_id, ICR_NMI | ICR_LEVEL_ASSERT);
}

void send_init_sipi_all(uint32_t page)
{
    write_icr(0, ICR_ALL_BUT_SELF | ICR_LEVEL_ASSERT | ICR_INIT);
    delay_us(INIT_DELAY_US);
    /* The second STARTUP is for a CPU that missed the first; one already running ignores it. */
    for (int i = 0; i < 2; i++) {
        write_icr(0, ICR_ALL_BUT_SELF | ICR_LEVEL_ASSERT | ICR_STARTUP | (page >> 12));
        delay_us(STARTUP_DELAY_US);
    }
}

/* TDCR values for dividers 1, 2, 4, ..., 128 (bits 3 and 1:0 of the divide configuration register).
 */
static const uint8_t tdcr_code[8] = {0xb, 0x0, 0x1, 0x2, 0x3, 0x8, 0x9, 0xa};

uint64_t lapic_timer_start(enum lapic_timer_mode mode, uint8_t vector, uint32_t count,
                           uint32_t divider)
{
    lapic_write(LAPIC_TDCR, tdcr_code[__builtin_ctz(divider) & 7]);
    lapic_write(LAPIC_LVT_TIMER, (uint32_t)mode | vector);
    /* LFENCE: RDTSC may otherwise execute late, after the write that starts the count. */
    uint64_t start = rdtsc();
    __asm__ volatile("lfence" : : : "memory");
    lapic_write(LAPIC_TMICT, count);
    return start;
}

void lapic_timer_deadline(uint8_t vector, uint64_t deadline)
{
    lapic_write(LAPIC_LVT_TIMER, LAPIC_TIMER_TSC_DEADLINE | vector);
    /* The deadline must be written after the mode change, which an xAPIC MMIO store does not
     * order with WRMSR by itself (Intel SDM, "TSC-Deadline Mode"). */
    __asm__ volatile("mfence" : : : "memory");
    wrmsr(MSR_TSC_DEADLINE, deadline);
    deadline_armed[cpu_slot()] = true;
}

void lapic_timer_stop(void)
{
    uint32_t slot = cpu_slot();
    /* Clear the deadline while still in TSC-deadline mode: in another mode the write is ignored.
     */
    if (deadline_armed[slot]) {
        wrmsr(MSR_TSC_DEADLINE, 0);
        deadline_armed[slot] = false;
    }
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
    lapic_write(LAPIC_TMICT, 0);
}

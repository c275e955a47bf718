/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TSC and APIC timer rates. Under pollux they come from CPUID 0x40000010.
 * Elsewhere the TSC is timed against PIT channel 2, as a BIOS would, and
 * the APIC timer directly against the TSC: what the guests need is the
 * ratio of the two, and measured directly it can be rounded the safe way.
 */
#include "guest-tests/runtime/timing.h"
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "abi/hypercall.h"

#define PIT_HZ       1193182u
#define PIT_CH2      0x42
#define PIT_MODE     0x43
#define PIT_CH2_MODE 0xb0 /* channel 2, low then high byte, mode 0 (out high at terminal count) */
#define PORT_B       0x61
#define PORT_B_GATE2 0x01
#define PORT_B_SPKR  0x02
#define PORT_B_OUT2  0x20

#define PIT_WINDOW_MS  10
#define PIT_WINDOWS    5
#define PIT_COUNT      (PIT_HZ * PIT_WINDOW_MS / 1000)
#define APIC_WINDOW_US 50000
#define TDCR_DIVIDE_1  0xb
#define TMICT_MAX      0xffffffffu

static uint32_t tsc_rate;  /* kHz */
static uint32_t apic_rate; /* kHz */
static const char *source;

static bool pollux_leaf(void)
{
    struct cpuid_regs r = cpuid(POLLUX_CPUID_BASE, 0);
    uint32_t words[3] = {r.ebx, r.ecx, r.edx};
    const char *sig = POLLUX_CPUID_SIGNATURE;
    for (int i = 0; i < 12; i++)
        if ((char)(words[i / 4] >> (8 * (i % 4))) != sig[i])
            return false;
    return r.eax >= POLLUX_CPUID_TIMING;
}

/* TSC cycles over PIT_COUNT PIT clocks. In mode 0 the count starts when its high byte is
 * written and OUT2 rises when it reaches zero. */
static uint64_t pit_window_cycles(void)
{
    uint8_t port_b = inb(PORT_B);
    outb(PORT_B, (port_b & ~PORT_B_SPKR) | PORT_B_GATE2);
    outb(PIT_MODE, PIT_CH2_MODE);
    outb(PIT_CH2, PIT_COUNT & 0xff);
    outb(PIT_CH2, PIT_COUNT >> 8);
    uint64_t t0 = rdtsc();
    while (!(inb(PORT_B) & PORT_B_OUT2))
        ;
    uint64_t t1 = rdtsc();
    outb(PORT_B, port_b);
    return t1 - t0;
}

/* The shortest of a few windows: being descheduled (an emulator's thread, a busy host) only
 * ever makes one look longer. */
static uint32_t measure_tsc_khz(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < PIT_WINDOWS; i++) {
        uint64_t c = pit_window_cycles();
        if (c < best)
            best = c;
    }
    return (uint32_t)div64(best * PIT_HZ, PIT_COUNT * 1000u);
}

/*
 * The APIC timer rate in the TSC's kHz, rounded up so that apic_ticks_to_tsc never overestimates
 * a duration: the clocks between the two TMCCT reads are at most their difference + 1 (the reads
 * truncate), and the TSC time between them at least the gap between the rdtsc right after the
 * first read and the one right before the second. The LFENCEs keep each RDTSC on its side of the
 * read next to it.
 */
static uint32_t measure_apic_khz(void)
{
    uint32_t c0, c1;
    uint64_t a, b;
    /* A count that ran out (a guest descheduled for seconds) would undercount: measure again. */
    do {
        lapic_write(LAPIC_TDCR, TDCR_DIVIDE_1);
        lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
        lapic_write(LAPIC_TMICT, TMICT_MAX);
        c0 = lapic_read(LAPIC_TMCCT);
        __asm__ volatile("lfence" : : : "memory");
        a = rdtsc();
        delay_us(APIC_WINDOW_US);
        b = rdtsc();
        __asm__ volatile("lfence" : : : "memory");
        c1 = lapic_read(LAPIC_TMCCT);
        lapic_timer_stop();
    } while (c0 != 0 && c1 == 0);
    if (c0 == c1)
        return 0;

    uint64_t ticks = (uint64_t)(c0 - c1) + 1;
    uint64_t cycles = b - a;
    uint64_t num = ticks * tsc_rate;
    /* div64 divides by 32 bits; halving keeps the rounding direction (cycles down, num up). */
    while (cycles > UINT32_MAX) {
        cycles >>= 1;
        num = (num + 1) >> 1;
    }
    return (uint32_t)div64(num + cycles - 1, (uint32_t)cycles);
}

void timing_init(void)
{
    if (pollux_leaf()) {
        struct cpuid_regs r = cpuid(POLLUX_CPUID_TIMING, 0);
        tsc_rate = r.eax;
        apic_rate = r.ebx;
        source = "pollux";
    } else {
        tsc_rate = measure_tsc_khz();
        apic_rate = measure_apic_khz();
        source = "pit";
    }
}

const char *timing_source(void)
{
    return source;
}

uint32_t tsc_khz(void)
{
    return tsc_rate;
}

uint32_t apic_timer_khz(void)
{
    return apic_rate;
}

uint64_t apic_ticks_to_tsc(uint64_t ticks)
{
    return div64(ticks * tsc_rate, apic_rate);
}

uint64_t us_to_tsc(uint64_t us)
{
    return div64(us * tsc_rate + 999, 1000);
}

uint64_t tsc_to_us(uint64_t cycles)
{
    return div64(cycles * 1000, tsc_rate);
}

void delay_us(uint32_t us)
{
    uint64_t end = rdtsc() + us_to_tsc(us);
    while (rdtsc() < end)
        cpu_relax();
}

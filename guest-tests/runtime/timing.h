/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The TSC and local APIC timer rates, from pollux's CPUID leaf 0x40000010
 * or, elsewhere, measured: the TSC against PIT channel 2, the APIC timer
 * against the TSC.
 */
#ifndef POLLUX_GUEST_TIMING_H
#define POLLUX_GUEST_TIMING_H

#include "guest-tests/runtime/runtime.h"

/* On the BSP with its local APIC enabled, before any other call here. */
void timing_init(void);

/* "pollux" (the CPUID leaf) or "pit" (measured). */
const char *timing_source(void);
uint32_t tsc_khz(void);
/* The APIC timer's input clock, before the TDCR divider; 0 if it does not count. */
uint32_t apic_timer_khz(void);

/*
 * TSC cycles for this many APIC timer input clocks, rounded so that it is
 * never more than the real duration (measured rates are rounded to make
 * sure of that), so a "not before" check built on it has no false alarms.
 */
uint64_t apic_ticks_to_tsc(uint64_t ticks);
uint64_t us_to_tsc(uint64_t us);
uint64_t tsc_to_us(uint64_t cycles);

/* Spin for at least us microseconds of TSC time. */
void delay_us(uint32_t us);

/*
 * n / d for a 64-bit n in 32-bit code, which would otherwise call libgcc's
 * __udivdi3: the high word first, so each DIV's quotient fits in 32 bits.
 */
static inline uint64_t div64(uint64_t n, uint32_t d)
{
    uint32_t hi = (uint32_t)(n >> 32), lo = (uint32_t)n;
    uint32_t qhi = hi / d, r = hi % d, qlo;
    __asm__("divl %4" : "=a"(qlo), "=d"(r) : "a"(lo), "d"(r), "rm"(d));
    return ((uint64_t)qhi << 32) | qlo;
}

#endif

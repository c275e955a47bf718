/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TSC and local APIC timer rates. Both are always measured against the PIT;
 * a CPUID-reported TSC rate (leaf 0x15/0x16, or the hypervisor leaf
 * 0x40000010) is preferred only when it agrees with the measurement within
 * 1%, because emulators report rates their TSC does not run at.
 */
#ifndef POLLUX_ARCH_X86_TSC_H
#define POLLUX_ARCH_X86_TSC_H

#include <stdint.h>

#include "arch/x86/features.h"

struct tsc_calibration {
    uint64_t tsc_khz;       /* the rate in use */
    uint64_t measured_khz;  /* from the PIT */
    struct tsc_claim cpuid; /* what CPUID claims (tsc_claim_from_cpuid) */
    uint64_t lapic_khz;     /* local APIC timer at divide-by-16 */
};

extern uint64_t tsc_khz;

/* Measure on the boot CPU (needs the local APIC initialised). */
void tsc_calibrate(struct tsc_calibration *out);

/* Split so that neither product overflows, whatever the uptime. */
static inline uint64_t tsc_to_ns(uint64_t cycles)
{
    return cycles / tsc_khz * 1000000 + cycles % tsc_khz * 1000000 / tsc_khz;
}

static inline uint64_t ns_to_tsc(uint64_t ns)
{
    return ns / 1000000 * tsc_khz + ns % 1000000 * tsc_khz / 1000000;
}

/* Busy-wait; needs a calibrated TSC. */
void tsc_delay_us(uint64_t us);

#endif

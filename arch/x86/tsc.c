/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/tsc.h"

#include "arch/x86/cpu.h"
#include "arch/x86/features.h"
#include "arch/x86/lapic.h"
#include "drivers/pit.h"

#define CALIBRATION_ROUNDS    3
#define CALIBRATION_PIT_TICKS 23864 /* 20 ms */

uint64_t tsc_khz;

void tsc_calibrate(struct tsc_calibration *c)
{
    uint64_t best_tsc = ~0ull, best_lapic = 0;
    /* The shortest round saw the least interference from the emulator's host. */
    for (int round = 0; round < CALIBRATION_ROUNDS; round++) {
        lapic_timer_start_count();
        pit_oneshot_start(CALIBRATION_PIT_TICKS);
        uint64_t t0 = rdtsc();
        uint32_t l0 = lapic_timer_current();
        while (!pit_oneshot_done())
            cpu_relax();
        uint64_t t1 = rdtsc();
        uint32_t l1 = lapic_timer_current();
        if (t1 - t0 < best_tsc) {
            best_tsc = t1 - t0;
            best_lapic = l0 - l1;
        }
    }
    lapic_timer_stop();
    uint64_t us = (uint64_t)CALIBRATION_PIT_TICKS * 1000000 / PIT_HZ;
    c->measured_khz = best_tsc * 1000 / us;
    c->lapic_khz = best_lapic * 1000 / us;
    struct cpu_raw raw;
    features_read(&raw);
    tsc_claim_from_cpuid(&raw, c->measured_khz, &c->cpuid);
    c->tsc_khz = c->cpuid.accepted ? c->cpuid.khz : c->measured_khz;
    tsc_khz = c->tsc_khz;
    lapic_timer_khz = c->lapic_khz;
}

void tsc_delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + us * tsc_khz / 1000;
    while (rdtsc() < end)
        cpu_relax();
}

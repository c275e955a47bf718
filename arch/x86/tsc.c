/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/tsc.h"

#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "drivers/pit.h"
#include "lib/string.h"

#define CALIBRATION_ROUNDS    3
#define CALIBRATION_PIT_TICKS 23864 /* 20 ms */

uint64_t tsc_khz;

uint64_t tsc_choose_khz(uint64_t measured_khz, uint64_t cpuid_khz)
{
    if (!cpuid_khz)
        return measured_khz;
    uint64_t diff = cpuid_khz > measured_khz ? cpuid_khz - measured_khz : measured_khz - cpuid_khz;
    return diff * 100 <= measured_khz ? cpuid_khz : measured_khz;
}

static bool hypervisor_leaf_khz(uint64_t *khz)
{
    if (!(cpuid(1, 0).ecx & (1u << 31)))
        return false;
    struct cpuid_regs sig = cpuid(0x40000000, 0);
    char name[13];
    memcpy(name, &sig.ebx, 4);
    memcpy(name + 4, &sig.ecx, 4);
    memcpy(name + 8, &sig.edx, 4);
    name[12] = 0;
    /* Hypervisors known to define 0x40000010 as the timing leaf. */
    if (strcmp(name, "KVMKVMKVM") && strcmp(name, "VMwareVMware") && strcmp(name, "pollux") &&
        strcmp(name, "TCGTCGTCGTCG"))
        return false;
    if (sig.eax < 0x40000010)
        return false;
    *khz = cpuid(0x40000010, 0).eax;
    return *khz != 0;
}

static void cpuid_claim(struct tsc_calibration *c)
{
    c->cpuid_khz = 0;
    c->cpuid_leaf = "";
    uint32_t max = cpuid(0, 0).eax;
    if (max >= 0x15) {
        struct cpuid_regs r = cpuid(0x15, 0);
        if (r.eax && r.ebx && r.ecx) {
            c->cpuid_khz = (uint64_t)r.ecx * r.ebx / r.eax / 1000;
            c->cpuid_leaf = "0x15";
            return;
        }
    }
    if (max >= 0x16) {
        uint32_t mhz = cpuid(0x16, 0).eax & 0xffff;
        if (mhz) {
            c->cpuid_khz = (uint64_t)mhz * 1000;
            c->cpuid_leaf = "0x16";
            return;
        }
    }
    if (hypervisor_leaf_khz(&c->cpuid_khz))
        c->cpuid_leaf = "0x40000010";
}

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
    cpuid_claim(c);
    c->tsc_khz = tsc_choose_khz(c->measured_khz, c->cpuid_khz);
    tsc_khz = c->tsc_khz;
    lapic_timer_khz = c->lapic_khz;
}

void tsc_delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + us * tsc_khz / 1000;
    while (rdtsc() < end)
        cpu_relax();
}

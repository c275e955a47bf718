/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host local APIC, with its one-shot timer, whose rate is measured against
 * the PIT at boot. In x2APIC mode where the CPU offers it (its MSRs, 32-bit
 * APIC IDs; under nested KVM an MSR write costs L0 less than an xAPIC MMIO
 * access, which it must decode), through xAPIC MMIO otherwise (QEMU TCG has
 * no x2APIC).
 */
#ifndef POLLUX_ARCH_X86_LAPIC_H
#define POLLUX_ARCH_X86_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Enable this CPU's APIC: in x2APIC mode where the boot CPU found it offered
 * (every CPU follows the boot CPU's choice), else in xAPIC mode at the base
 * IA32_APIC_BASE gives (identity mapped).
 */
void lapic_init(void);
bool lapic_ready(void);
bool lapic_x2apic(void);
uint32_t lapic_id(void);
void lapic_eoi(void);

/* IPIs. Each waits for the previous ICR send to be accepted. */
void lapic_send_init(uint32_t apic_id);
void lapic_send_sipi(uint32_t apic_id, uint8_t vector_page);
void lapic_send_ipi(uint32_t apic_id, uint8_t vector);
void lapic_send_nmi_all_but_self(void);
void lapic_send_nmi(uint32_t apic_id);

/* Timer: ticks at lapic_timer_khz (divide-by-16). */
extern uint64_t lapic_timer_khz;
void lapic_timer_oneshot(uint32_t ticks);
void lapic_timer_stop(void);
uint32_t lapic_timer_current(void);
/*
 * TSC-deadline mode, where the CPU has it (CPUID.1:ECX[24]): the interrupt
 * comes when the TSC reaches the deadline, with no rate conversion. 0 disarms.
 */
bool lapic_has_tsc_deadline(void);
void lapic_timer_tsc_deadline(uint64_t tsc);

/* Start a free-running count from 0xffffffff, for calibration. */
void lapic_timer_start_count(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The local APIC of the calling CPU, in xAPIC mode (MMIO at 0xFEE00000)
 * or x2APIC mode (MSRs 0x800 + offset / 16), behind one interface that
 * takes xAPIC register offsets. Each CPU tracks its own mode, so CPUs may
 * switch to x2APIC one at a time.
 */
#ifndef POLLUX_GUEST_LAPIC_H
#define POLLUX_GUEST_LAPIC_H

#include "guest-tests/runtime/runtime.h"

#define XAPIC_BASE 0xfee00000u /* the xAPIC's registers, where IA32_APIC_BASE leaves them */

/* xAPIC register offsets; x2APIC MSR = 0x800 + offset / 16 */
#define LAPIC_ID        0x020
#define LAPIC_EOI       0x0b0
#define LAPIC_SVR       0x0f0
#define LAPIC_ICR_LO    0x300
#define LAPIC_ICR_HI    0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_TMICT     0x380
#define LAPIC_TMCCT     0x390
#define LAPIC_TDCR      0x3e0

#define LAPIC_SPURIOUS_VECTOR 0xff
#define LVT_MASKED            (1u << 16)
#define MSR_TSC_DEADLINE      0x6e0 /* IA32_TSC_DEADLINE */

enum lapic_timer_mode {
    LAPIC_TIMER_ONESHOT = 0,
    LAPIC_TIMER_PERIODIC = 1u << 17,
    LAPIC_TIMER_TSC_DEADLINE = 2u << 17,
};

/* Software-enable this CPU's APIC: SVR = 0x100 | the spurious vector 0xFF. */
void lapic_enable(void);

uint32_t lapic_read(uint32_t reg);
void lapic_write(uint32_t reg, uint32_t value);
void lapic_eoi(void);
/* The APIC ID: 8 bits in xAPIC mode, 32 in x2APIC mode. */
uint32_t lapic_id(void);

/* CPUID.1:ECX[21] */
bool lapic_x2apic_offered(void);
/* Put this CPU's APIC in x2APIC mode; false (and no change) if not offered. */
bool switch_to_x2apic(void);

/* A fixed, edge-triggered IPI to one APIC ID (physical destination). */
void send_ipi(uint32_t apic_id, uint8_t vector);
/* An NMI to one APIC ID. */
void send_nmi(uint32_t apic_id);
/*
 * Start all other CPUs at the page at physical address page (4 KiB
 * aligned, below 1 MiB): INIT, 10 ms, STARTUP, 200 us, STARTUP, with the
 * delays timed by the TSC (timing_init first).
 */
void send_init_sipi_all(uint32_t page);

/*
 * Program the timer: divide configuration (1, 2, 4, ..., 128), LVT (mode and
 * vector, unmasked), then the initial count, which starts it. Returns the
 * TSC read just before the initial count was written: no tick can come
 * before it plus the count's duration.
 */
uint64_t lapic_timer_start(enum lapic_timer_mode mode, uint8_t vector, uint32_t count,
                           uint32_t divider);
/* CPUID.1:ECX[24] */
bool lapic_tsc_deadline_offered(void);
/* TSC-deadline mode: one interrupt when the TSC reaches deadline. */
void lapic_timer_deadline(uint8_t vector, uint64_t deadline);
/* Mask the timer and clear its count and deadline. */
void lapic_timer_stop(void);

#endif

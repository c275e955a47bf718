/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-CPU software timers driving the host local APIC timer (TSC-deadline
 * mode where the CPU has it, else one-shot with a calibrated count). Each
 * CPU keeps its timers in a list sorted by deadline (host TSC); the APIC is
 * programmed for the earliest of them and of whatever sched/ asks for (the
 * end of a time slice). Expired timers run in the timer interrupt, with
 * interrupts off, on the CPU whose queue holds them.
 *
 * Contract: a timer belongs to one CPU's queue at a time. timer_arm and
 * timer_cancel may be called from any CPU (the queue is locked); arming a
 * timer that becomes the earliest on another CPU kicks that CPU so it
 * reprograms its APIC, and on this CPU brings its APIC timer forward at once
 * (the exit fast path enters again without host_timer_program). The callback
 * may re-arm its own timer.
 */
#ifndef POLLUX_SCHED_TIMER_H
#define POLLUX_SCHED_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct timer {
    uint64_t deadline; /* host TSC; meaningful only while armed */
    void (*fn)(struct timer *t, uint64_t now);
    struct timer *next;
    int cpu; /* queue it is on, -1 when not armed */
};

void timer_init(struct timer *t, void (*fn)(struct timer *t, uint64_t now));
void timer_arm(struct timer *t, unsigned cpu, uint64_t deadline);
void timer_cancel(struct timer *t);

/* On this CPU: run every timer whose deadline has passed. Interrupts off. */
void timers_run_expired(uint64_t now);

/* On this CPU: earliest armed deadline, 0 if none. */
uint64_t timers_next_deadline(void);

/*
 * On this CPU: program the APIC timer for min(earliest timer, extra) (extra
 * 0 = none); nothing is reprogrammed when the value is unchanged.
 */
void host_timer_program(uint64_t extra);

/* On this CPU: use TSC-deadline mode where the CPU has it, else one-shot. */
void host_timer_init(void);

/* The APIC timer fired: the programmed deadline is gone. */
void host_timer_fired(void);

#endif

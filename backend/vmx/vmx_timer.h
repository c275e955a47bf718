/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VMX preemption timer's value for an entry. It counts down from the
 * value the VMCS holds at every entry (pollux never sets "save VMX-preemption
 * timer value", so an exit leaves the field alone): an entry that would write
 * the value already there may skip the VMWRITE. Pure, for host unit tests.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_TIMER_H
#define POLLUX_BACKEND_VMX_VMX_TIMER_H

#include <stdint.h>

/* The timer value that fires after tsc_left TSC ticks: rounded up, at most the field's maximum. */
uint32_t vmx_timer_value(uint64_t tsc_left, unsigned rate_shift);

/*
 * TSC ticks from now until the exit is due: until the deadline (0: none;
 * nothing left once it is past), and no later than backstop_tsc from now (0:
 * no backstop). UINT64_MAX with neither: the timer stays off.
 */
uint64_t vmx_timer_left(uint64_t deadline, uint64_t now, uint64_t backstop_tsc);

#endif

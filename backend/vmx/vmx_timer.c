/* SPDX-License-Identifier: GPL-2.0-only */
/* The preemption timer's arithmetic (vmx_timer.h). */
#include "backend/vmx/vmx_timer.h"

uint32_t vmx_timer_value(uint64_t tsc_left, unsigned rate_shift)
{
    uint64_t ticks = (tsc_left >> rate_shift) + ((tsc_left & ((1ull << rate_shift) - 1)) != 0);
    return ticks > 0xffffffffu ? 0xffffffffu : (uint32_t)ticks;
}

uint64_t vmx_timer_left(uint64_t deadline, uint64_t now, uint64_t backstop_tsc)
{
    uint64_t left = !deadline ? UINT64_MAX : deadline > now ? deadline - now : 0;
    return backstop_tsc && left > backstop_tsc ? backstop_tsc : left;
}

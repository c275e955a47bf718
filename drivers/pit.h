/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 8254 PIT's channel 2, used only as a reference clock for calibration:
 * its gate and output are visible in port 0x61, so no interrupt is needed.
 */
#ifndef POLLUX_DRIVERS_PIT_H
#define POLLUX_DRIVERS_PIT_H

#include <stdbool.h>
#include <stdint.h>

#define PIT_HZ 1193182u

/* Start a countdown of the given number of PIT ticks (at most 65535). */
void pit_oneshot_start(uint16_t ticks);
/* True once the countdown has reached zero. */
bool pit_oneshot_done(void);

#endif

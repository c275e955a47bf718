/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPI ping-pong between two vCPUs that wait in HLT: the building block of
 * pingpong, haltpoll and idletick. Vector PING_VECTOR sets a flag on the
 * vCPU it reaches; a waiter may first poll that flag itself for a while, as
 * Linux's cpuidle-haltpoll does, before it halts.
 */
#ifndef POLLUX_GUEST_PING_H
#define POLLUX_GUEST_PING_H

#include "guest-tests/runtime/runtime.h"

#define PING_VECTOR 0x40

/* On the BSP before smp_start: install the handler. */
void ping_init(void);

/* Ping the vCPU with this index. */
void ping_send(uint32_t index);

/*
 * Wait (interrupts disabled on entry and exit) until this vCPU is pinged:
 * poll the flag with interrupts on for up to poll_cycles of TSC, then halt.
 * Returns true if the poll caught the ping, so that no HLT was needed.
 */
bool ping_wait(uint32_t me, uint64_t poll_cycles);

/*
 * Answer pings from vCPU 0 until *stop is set when one arrives (that one is
 * not answered). Returns how many waits the guest's own poll caught.
 */
uint32_t ping_respond(uint32_t me, uint64_t poll_cycles, const volatile uint32_t *stop);

/* n round trips from vCPU 0 to peer; the mean TSC cycles of one. */
uint64_t ping_round_trips(uint32_t peer, uint32_t n, uint64_t poll_cycles, uint32_t *caught);

#endif

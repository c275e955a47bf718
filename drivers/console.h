/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The serial console. Each kprintf call goes whole into an output buffer,
 * so lines from different CPUs never interleave within one call; the buffer
 * reaches the UART outside the writers' lock (drivers/console.c).
 * Machine-readable events are single lines "@<event> <json>" (see
 * docs/console.md), written with console_event so they are never split.
 */
#ifndef POLLUX_DRIVERS_CONSOLE_H
#define POLLUX_DRIVERS_CONSOLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/json.h"

void console_init(void);
__attribute__((format(printf, 1, 2))) void kprintf(const char *fmt, ...);
void kvprintf(const char *fmt, va_list ap);
/*
 * kprintf's call whole if the buffer has room for it now, else nothing and
 * false: never waits for the UART (a guest's line, written in its exit).
 */
__attribute__((format(printf, 1, 2))) bool ktryprintf(const char *fmt, ...);

/* Print "@<name> <object>\n" atomically; closes the object first. */
void console_event(const char *name, struct json *j);

/*
 * kick is called after each write and returns true if it woke an idle CPU,
 * which then calls console_drain; otherwise the output waits for the next
 * console_drain (between time slices), or for a writer that finds it full.
 */
void console_set_idle_kicker(bool (*kick)(void));

/* Called while the console waits for the UART: the lockup watchdog's heartbeat. */
void console_set_heartbeat(void (*beat)(void));

/* Send what is buffered to the UART, unless another CPU is doing so. */
void console_drain(void);

/*
 * The same without waiting for the UART: a burst whenever its FIFO is
 * empty, while more(ctx) is true (the idle loop and the scheduler: until a
 * vCPU waits). A writer that appended meanwhile may leave its bytes behind.
 */
void console_drain_while(bool (*more)(void *ctx), void *ctx);

/* Output is waiting in the buffer. */
bool console_pending(void);

/* Bytes the buffer takes now without a writer waiting for the UART; all it holds. */
uint64_t console_room(void);
#define CONSOLE_BUFFER_BYTES (64u * 1024) /* a power of two */

/* A CPU is sending buffered output to the UART now: another need not help. */
bool console_draining(void);

/* From now on write synchronously, after what is buffered (at shutdown). */
void console_sync(void);

/* Bytes written so far, and writes that found the buffer full (for stats/). */
void console_counts(uint64_t *bytes, uint64_t *full_waits);

/* Called by the panicking CPU after it stopped the others: drop any held lock. */
void console_panic_takeover(void);

/*
 * From an NMI that is no panic (a state dump): the interrupted code may hold
 * the console lock, so wait for it only a while, then take the console over.
 */
void console_nmi_takeover(void);

#endif

/*
 * The serial console. kprintf is serialised by a lock, so lines from
 * different CPUs never interleave within one call. Machine-readable events
 * are single lines "@<event> <json>" (see docs/console.md), written with
 * console_event so they are never split.
 */
#ifndef POLLUX_DRIVERS_CONSOLE_H
#define POLLUX_DRIVERS_CONSOLE_H

#include <stdarg.h>

#include "lib/json.h"

void console_init(void);
__attribute__((format(printf, 1, 2))) void kprintf(const char *fmt, ...);
void kvprintf(const char *fmt, va_list ap);

/* Print "@<name> <object>\n" atomically; closes the object first. */
void console_event(const char *name, struct json *j);

/* Called by the panicking CPU after it stopped the others: drop any held lock. */
void console_panic_takeover(void);

/*
 * From an NMI that is no panic (a state dump): the interrupted code may hold
 * the console lock, so wait for it only a while, then take the console over.
 */
void console_nmi_takeover(void);

#endif

/*
 * Traces: one console line per event, enabled with `trace=` (a
 * comma-separated list of the names below). The layout is trace-cmd's:
 *   <ns since boot>: <vm>: <event>: <details>
 * A trace line starts with a digit, never with '@' or '[', so it can be
 * told from events and from guest lines, and no guest can forge one
 * (docs/console.md).
 */
#ifndef POLLUX_VMM_TRACE_H
#define POLLUX_VMM_TRACE_H

#include <stdbool.h>

enum trace_kind {
    TRACE_HALT_POLL, /* kvm_halt_poll_ns: every change of a vCPU's polling window */
    TRACE_KIND_COUNT
};

/* The names trace= accepts, bit i of trace_mask for trace_names[i]; NULL-terminated. */
extern const char *const trace_names[TRACE_KIND_COUNT + 1];
extern unsigned trace_mask;

static inline bool trace_on(enum trace_kind k)
{
    return trace_mask & (1u << k);
}

struct vm;

/* Print one trace line for vm; event is KVM's tracepoint name where there is one. */
__attribute__((format(printf, 3, 4))) void trace_line(const struct vm *vm, const char *event,
                                                      const char *fmt, ...);

#endif

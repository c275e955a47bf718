/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Traces: events recorded as they happen, printed as console lines when
 * their VM stops, enabled with `trace=` (a comma-separated list of the names
 * below). A serial line costs about 7 ms at 115200 baud, far longer than
 * the halts being traced, so printing at once would change what is measured
 * (as KVM's tracepoints go to a ring buffer that trace-cmd reads later).
 * Each VM keeps the last TRACE_RING_RECORDS records; older ones are counted
 * as lost. The layout is trace-cmd's, with the time the event happened:
 *   <ns since boot>: <vm>: <event>: <details>
 * A trace line starts with a digit, never with '@' or '[', so it can be
 * told from events and from guest lines, and no guest can forge one
 * (docs/console.md).
 */
#ifndef POLLUX_VMM_CONSOLE_TRACE_H
#define POLLUX_VMM_CONSOLE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum trace_kind {
    TRACE_HALT_POLL, /* kvm_halt_poll_ns: a vCPU's polling window changed */
    TRACE_PLE,       /* kvm_ple_window_update and directed_yield (flag: enum trace_ple) */
    TRACE_KIND_COUNT
};

/*
 * TRACE_PLE records. Window changes: arg0 the new window, arg1 the old one.
 * Yield decisions: arg0 the target's id + 1 (0: none), arg1 packs the
 * scan (trace_yield_pack).
 */
enum trace_ple {
    TRACE_PLE_GROW,
    TRACE_PLE_SHRINK,
    TRACE_YIELD_BOOSTED,  /* the target runs now in the spinner's place */
    TRACE_YIELD_SLICE,    /* no target: the spinner gave up the rest of its slice */
    TRACE_YIELD_KEPT_CPU, /* no target and nobody else to run: the spinner goes on */
};

/* A scan's pivot, skips, failed tries and give-up, in one trace argument. */
static inline uint64_t trace_yield_pack(unsigned pivot, unsigned skipped, unsigned failed,
                                        bool gave_up)
{
    return (uint64_t)pivot << 40 | (uint64_t)gave_up << 32 | (uint64_t)(failed & 0xff) << 24 |
           (skipped & 0xffffff);
}

/* The names trace= accepts, bit i of trace_mask for trace_names[i]; NULL-terminated. */
extern const char *const trace_names[TRACE_KIND_COUNT + 1];
extern unsigned trace_mask;

static inline bool trace_on(enum trace_kind k)
{
    return trace_mask & (1u << k);
}

#define TRACE_RING_RECORDS 4096

struct trace_record {
    uint64_t ns; /* since boot */
    uint16_t kind, vcpu;
    uint32_t flag;   /* TRACE_HALT_POLL: 1 grow, 0 shrink; TRACE_PLE: enum trace_ple */
    uint64_t arg[2]; /* TRACE_HALT_POLL: the new window, the old one; TRACE_PLE: above */
};

struct trace_ring {
    uint64_t next; /* records ever written; the ring holds the last TRACE_RING_RECORDS */
    struct trace_record rec[TRACE_RING_RECORDS];
};

struct vm;

/* Record an event for a VM (any CPU, any context); nothing when the VM has no ring. */
void trace_record(struct vm *vm, enum trace_kind kind, unsigned vcpu, uint32_t flag, uint64_t arg0,
                  uint64_t arg1);

/* One record as its console line, without the newline. */
void trace_format(const struct trace_record *r, const char *vm_name, char *buf, size_t len);

/* Print a stopped VM's records in order, and how many were lost. */
void trace_flush(struct vm *vm);

#endif

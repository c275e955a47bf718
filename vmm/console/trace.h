/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Traces: events recorded as they happen, printed as console lines when
 * their VM stops, enabled with `trace=` (a comma-separated list of the names
 * below). A serial line costs about 7 ms at 115200 baud, far longer than
 * the halts being traced, so printing at once would change what is measured
 * (as KVM's tracepoints go to a ring buffer that trace-cmd reads later).
 * Each VM keeps its last trace_records records (trace_records=); older ones
 * are counted as dropped. With trace_window=marker nothing is recorded
 * until the guest opens a capture window (port TRACE_MARKER_PORT,
 * vmm/dev/trace_marker.c). The layout is trace-cmd's, with the time the
 * event happened:
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
    TRACE_SCHED,     /* the vCPU timeline: states, migrations, wake-ups, spins (enum trace_sched) */
    TRACE_HALT,      /* kvm_vcpu_wakeup: every halt, for tools/haltreplay.py (trace_halt_flag) */
    TRACE_KIND_COUNT
};

/* A record kind that no trace= names: the guest's marker (flag 1 window start, 0 end). */
#define TRACE_MARKER TRACE_KIND_COUNT

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

/*
 * TRACE_SCHED records. arg1 is the host CPU the vCPU is on, except for a
 * migration. States: arg0 packs the old and the new state (trace_pair).
 * Migrations: arg0 the CPU it leaves, arg1 the one it goes to. Wake-ups:
 * arg0 packs the source (enum trace_wake) and the sending vCPU's id + 1 (0:
 * none). Spins: arg0 0. The directed yield that follows a spin is trace=ple's
 * directed_yield record, recorded under trace=sched too.
 */
enum trace_sched {
    TRACE_SCHED_STATE,
    TRACE_SCHED_MIGRATE,
    TRACE_SCHED_WAKEUP,
    TRACE_SCHED_SPIN,
};

/* What woke a halted vCPU (or started a parked one). */
enum trace_wake {
    TRACE_WAKE_IPI,    /* a fixed or lowest-priority IPI from a sibling */
    TRACE_WAKE_DEVICE, /* an interrupt from a device: the I/O APIC */
    TRACE_WAKE_TIMER,  /* its local APIC timer */
    TRACE_WAKE_NMI,
    TRACE_WAKE_INIT,
    TRACE_WAKE_SIPI,
    TRACE_WAKE_STOP, /* its VM stops (the timeout, a guest's exit, the console, ...) */
    TRACE_WAKE_KICK, /* a sibling's PV kick (KVM_HC_KICK_CPU) */
    TRACE_WAKE_COUNT
};

extern const char *const trace_wake_names[TRACE_WAKE_COUNT];

/*
 * TRACE_HALT records, one per halt once it is over, stamped with the halt's
 * start (the HLT exit) rather than the time of recording: arg0 the halt's
 * length in ns as the polling window is adjusted from it (to the wake event
 * for a blocked halt, to the end of a successful poll), arg1 the window the
 * policy had when it began. flag: the wake source (enum trace_wake) in its
 * low byte and these bits. A poll of w ns would have caught the halt if
 * arg0 <= w: a replay of any policy needs nothing else (docs/halt_polling.md).
 */
#define TRACE_HALT_WAITED     (1u << 8)  /* it blocked: KVM's kvm_vcpu_wakeup "wait", else "poll" */
#define TRACE_HALT_VALID      (1u << 9)  /* ended by a guest event, not a stop request */
#define TRACE_HALT_OPTED_OUT  (1u << 10) /* the guest had turned host polling off */
#define TRACE_HALT_CPU_WANTED (1u << 11) /* another vCPU waited for the CPU: it could not poll */

static inline uint32_t trace_halt_flag(unsigned source, bool waited, bool valid, bool opted_out,
                                       bool cpu_wanted)
{
    return (source & 0xff) | (waited ? TRACE_HALT_WAITED : 0) | (valid ? TRACE_HALT_VALID : 0) |
           (opted_out ? TRACE_HALT_OPTED_OUT : 0) | (cpu_wanted ? TRACE_HALT_CPU_WANTED : 0);
}

/* Two small values in one argument: a state change's old and new state, a wake-up's source
 * and sender + 1. */
static inline uint64_t trace_pair(unsigned hi, unsigned lo)
{
    return (uint64_t)hi << 16 | (lo & 0xffff);
}

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

/* trace_records=: each VM's ring, in records of 32 bytes (4096: 128 KiB). */
#define TRACE_RECORDS_DEFAULT 4096
#define TRACE_RECORDS_MIN     16
#define TRACE_RECORDS_MAX     (1u << 20)
extern uint64_t trace_records;

/* trace_window=: record from the VM's start, or only inside the guest's marker window. */
enum trace_window { TRACE_WINDOW_ALL, TRACE_WINDOW_MARKER };
extern unsigned trace_window_mode;
extern const char *const trace_window_names[];

/*
 * flag: TRACE_HALT_POLL 1 grow, 0 shrink; TRACE_PLE enum trace_ple;
 * TRACE_SCHED enum trace_sched; TRACE_HALT trace_halt_flag; TRACE_MARKER 1
 * window start, 0 end.
 * arg: TRACE_HALT_POLL the new window, the old one; the others above.
 */
struct trace_record {
    uint64_t ns; /* since boot: when it happened (TRACE_HALT: when the halt began) */
    uint16_t kind, vcpu;
    uint32_t flag;
    uint64_t arg[2];
};

struct trace_ring {
    uint64_t next;  /* records ever written; the ring holds the last `size` */
    uint32_t size;  /* records in rec[] */
    bool recording; /* inside the capture window (always, with trace_window=all) */
    struct trace_record rec[];
};

/* The bytes of a ring of n records (trace_ring_init it in that many zeroed bytes). */
static inline uint64_t trace_ring_bytes(uint64_t n)
{
    return sizeof(struct trace_ring) + n * sizeof(struct trace_record);
}

/* A new VM's ring: recording at once unless the window waits for the marker. */
void trace_ring_init(struct trace_ring *ring, uint32_t size, enum trace_window window);

/* What a guest's marker write did to its VM's window (trace_window_mark). */
enum trace_mark {
    TRACE_MARK_IGNORED, /* neither 1 nor 0 */
    TRACE_MARK_START,
    TRACE_MARK_END,
};

/*
 * The capture window's rule, pure: value 1 starts it, 0 ends it, anything
 * else is ignored; with trace_window=all recording never stops, and the
 * marks are still recorded (where the guest's measured phase lies).
 */
enum trace_mark trace_window_mark(bool *recording, enum trace_window window, uint8_t value);

struct vm;

/* Record an event for a VM (any CPU, any context); nothing when the VM has no ring. */
void trace_record(struct vm *vm, enum trace_kind kind, unsigned vcpu, uint32_t flag, uint64_t arg0,
                  uint64_t arg1);

/* The same for an event that began earlier, at host TSC tsc (a halt, recorded once it is over). */
void trace_record_at(struct vm *vm, uint64_t tsc, enum trace_kind kind, unsigned vcpu,
                     uint32_t flag, uint64_t arg0, uint64_t arg1);

/* One record as its console line, without the newline. */
void trace_format(const struct trace_record *r, const char *vm_name, char *buf, size_t len);

/*
 * A guest's marker write (vCPU vcpu): the window opens or closes, recorded
 * as a marker record; an opening also records each vCPU's state then, so
 * the timeline's first intervals are known.
 */
void trace_marker(struct vm *vm, unsigned vcpu, uint8_t value);

/* Print a stopped VM's @trace_flush (records, dropped) and its records in order. */
void trace_flush(struct vm *vm);

#endif

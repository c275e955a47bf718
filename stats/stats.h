/*
 * The statistics model: every number pollux reports about its vCPUs, VMs
 * and CPUs, described once by a table of descriptors (name, kind, unit,
 * scopes, meaning), as KVM's binary-stats descriptors are. The `@stats`
 * JSON records, the human tables on COM1 and docs/stats.md are all produced
 * from this table; adding a statistic is one line in STATS_KEYS plus the
 * line that fills it in (stats/collect.c).
 *
 * A record is one scope's values, indexed by enum stats_key; this file and
 * stats/render.c are pure (no hypervisor state), so the host unit tests
 * cover the rendering.
 */
#ifndef POLLUX_STATS_STATS_H
#define POLLUX_STATS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATS_HIST_BUCKETS 40 /* log2 histograms: bucket b counts [2^b, 2^(b+1)) ns */

enum stats_kind {
    STATS_COUNTER,   /* only grows */
    STATS_GAUGE,     /* a current value */
    STATS_HIST,      /* log2 histogram of ns: an object of its non-zero buckets */
    STATS_BY_REASON, /* counters per exit reason: an object of the non-zero ones */
    STATS_STRING,
};

enum stats_unit {
    STATS_UNIT_NONE,
    STATS_UNIT_NS,
    STATS_UNIT_US,
};

enum stats_scope {
    STATS_SCOPE_VCPU,
    STATS_SCOPE_VM,
    STATS_SCOPE_CPU,
    STATS_SCOPE_GLOBAL,
    STATS_SCOPE_COUNT
};

#define S_VCPU   (1u << STATS_SCOPE_VCPU)
#define S_VM     (1u << STATS_SCOPE_VM)
#define S_CPU    (1u << STATS_SCOPE_CPU)
#define S_GLOBAL (1u << STATS_SCOPE_GLOBAL)
#define S_ALL    (S_VCPU | S_VM | S_CPU | S_GLOBAL)
#define S_GUEST  (S_VCPU | S_VM) /* per vCPU, and their sum per VM */

/*
 * X(key, kind, unit, scopes, meaning), in output order. The halt-polling and
 * directed-yield names are KVM's (docs/halt_polling.md, docs/directed_yield.md).
 */
#define STATS_KEYS(X)                                                                              \
    X(scope, STATS_STRING, NONE, S_ALL, "`vcpu`, `vm`, `cpu` or `global`")                         \
    X(round, STATS_COUNTER, NONE, S_ALL, "the output round: every record of one round has it")     \
    X(t, STATS_GAUGE, NS, S_ALL, "when the round was taken, ns since boot")                        \
    X(vm, STATS_STRING, NONE, S_GUEST, "the VM's name")                                            \
    X(vcpu, STATS_GAUGE, NONE, S_VCPU, "the vCPU's id")                                            \
    X(cpu, STATS_GAUGE, NONE, S_VCPU | S_CPU, "the host CPU (for a vCPU: the one it is on)")       \
    X(vcpus, STATS_GAUGE, NONE, S_VM, "the VM's vCPUs")                                            \
    X(hlt_intercept, STATS_STRING, NONE, S_GUEST,                                                  \
      "the intercept that makes HLT exit: `idle_hlt` or `hlt`, as in `@boot`")                     \
    X(spin_detector, STATS_STRING, NONE, S_GUEST,                                                  \
      "`ple`, `pause_filter`, `software` or `off` (directed_yield.md)")                            \
    X(run_us, STATS_COUNTER, US, S_GUEST, "time running guest code or handling its exits")         \
    X(wait_us, STATS_COUNTER, US, S_GUEST, "runnable, waiting for a CPU: steal time")              \
    X(polling_us, STATS_COUNTER, US, S_GUEST, "halted, its CPU halt polling")                      \
    X(blocked_us, STATS_COUNTER, US, S_GUEST, "halted, off its CPU")                               \
    X(exits, STATS_BY_REASON, NONE, S_GUEST, "exits by reason")                                    \
    X(exit_ns, STATS_BY_REASON, NS, S_GUEST,                                                       \
      "time handling exits by reason, from the exit to the end of its handler")                    \
    X(halts, STATS_COUNTER, NONE, S_GUEST, "HLTs that halted: nothing was deliverable")            \
    X(halt_exits, STATS_COUNTER, NONE, S_GUEST,                                                    \
      "HLT exits, including those that found an event: `hlt_exits` + `idle_hlt_exits`")            \
    X(hlt_exits, STATS_COUNTER, NONE, S_GUEST, "exits of the plain HLT intercept")                 \
    X(idle_hlt_exits, STATS_COUNTER, NONE, S_GUEST,                                                \
      "exits of the Idle HLT intercept (a HLT with no virtual interrupt or NMI pending)")          \
    X(hlt_in_shadow, STATS_COUNTER, NONE, S_GUEST,                                                 \
      "HLTs pollux completed at another exit: STI; HLT interrupted in STI's shadow, with an "      \
      "interrupt pending (docs/virtual_interrupts.md)")                                            \
    X(halt_attempted_poll, STATS_COUNTER, NONE, S_GUEST, "halts that polled")                      \
    X(halt_successful_poll, STATS_COUNTER, NONE, S_GUEST,                                          \
      "halts whose poll caught the wake-up: the vCPU never blocked")                               \
    X(halt_poll_invalid, STATS_COUNTER, NONE, S_GUEST,                                             \
      "successful polls ended by a stop request rather than a guest event")                        \
    X(halt_wakeup, STATS_COUNTER, NONE, S_GUEST, "wake-ups of a blocked vCPU")                     \
    X(halt_poll_success_ns, STATS_COUNTER, NS, S_GUEST, "time polled in successful polls")         \
    X(halt_poll_fail_ns, STATS_COUNTER, NS, S_GUEST, "time polled in failed polls")                \
    X(halt_wait_ns, STATS_COUNTER, NS, S_GUEST, "time blocked after a failed poll or without one") \
    X(halt_poll_success_hist, STATS_HIST, NS, S_GUEST, "`halt_poll_success_ns` per poll")          \
    X(halt_poll_fail_hist, STATS_HIST, NS, S_GUEST, "`halt_poll_fail_ns` per poll")                \
    X(halt_wait_hist, STATS_HIST, NS, S_GUEST, "`halt_wait_ns` per halt")                          \
    X(halt_poll_ns, STATS_GAUGE, NS, S_VCPU, "the vCPU's polling window")                          \
    X(poll_control, STATS_GAUGE, NONE, S_VCPU, "the guest's `MSR_KVM_POLL_CONTROL`")               \
    X(halt_attempted_poll_optout, STATS_COUNTER, NONE, S_GUEST,                                    \
      "polls while the guest had opted out; 0 unless pollux is broken")                            \
    X(pause_exits, STATS_COUNTER, NONE, S_GUEST, "PAUSE exits taken for spin detection")           \
    X(pause_exits_backstop, STATS_COUNTER, NONE, S_GUEST,                                          \
      "`ple=off`: PAUSE exits kept only to preempt a guest spinning with interrupts off")          \
    X(spins_detected, STATS_COUNTER, NONE, S_GUEST,                                                \
      "hardware spin exits, or runs of `spin_sw_threshold` software-counted ones")                 \
    X(ple_window, STATS_GAUGE, NONE, S_VCPU,                                                       \
      "the hardware window (`ple_window`, `pause_filter_count`); 0 for `software`, `off`")         \
    X(directed_yield_attempted, STATS_COUNTER, NONE, S_GUEST, "spins that scanned for a target")   \
    X(directed_yield_successful, STATS_COUNTER, NONE, S_GUEST,                                     \
      "... that ran one in the spinner's place")                                                   \
    X(directed_yield_failed_tries, STATS_COUNTER, NONE, S_GUEST,                                   \
      "candidates that passed every filter but could not be taken")                                \
    X(directed_yield_gave_up, STATS_COUNTER, NONE, S_GUEST, "scans ended after 3 failed tries")    \
    X(directed_yield_skipped_running, STATS_COUNTER, NONE, S_GUEST, "candidates on a CPU")         \
    X(directed_yield_skipped_blocked, STATS_COUNTER, NONE, S_GUEST,                                \
      "candidates halted (or not started, or stopped) with no interrupt pending")                  \
    X(directed_yield_skipped_user_mode, STATS_COUNTER, NONE, S_GUEST,                              \
      "candidates preempted at CPL 3 while the spinner was at CPL 0")                              \
    X(directed_yield_skipped_not_eligible, STATS_COUNTER, NONE, S_GUEST,                           \
      "spinners whose turn it was not (dy_eligible)")                                              \
    X(directed_yield_skipped_pinned, STATS_COUNTER, NONE, S_GUEST,                                 \
      "candidates pinned to another CPU")                                                          \
    X(spin_slice_yields, STATS_COUNTER, NONE, S_GUEST,                                             \
      "spins without a target after which the vCPU gave up its slice")                             \
    X(migrations, STATS_COUNTER, NONE, S_GUEST, "moves to another host CPU")                       \
    X(busy_us, STATS_COUNTER, US, S_CPU, "time running vCPUs")                                     \
    X(idle_us, STATS_COUNTER, US, S_CPU, "time halted with nothing to run")                        \
    X(poll_us, STATS_COUNTER, US, S_CPU, "the part of `busy_us` spent halt polling")               \
    X(placed, STATS_GAUGE, NONE, S_CPU, "vCPUs of live VMs on this CPU")                           \
    X(cpus, STATS_GAUGE, NONE, S_GLOBAL, "CPUs online")                                            \
    X(vms_running, STATS_GAUGE, NONE, S_GLOBAL, "VMs started and not yet stopped")                 \
    X(vms_stopped, STATS_COUNTER, NONE, S_GLOBAL, "VMs stopped")                                   \
    X(console_bytes, STATS_COUNTER, NONE, S_GLOBAL, "bytes written to the console")                \
    X(console_full_waits, STATS_COUNTER, NONE, S_GLOBAL,                                           \
      "writes that found the console buffer full and drained it themselves")

enum stats_key {
#define STATS_ENUM(key, kind, unit, scopes, doc) STATS_##key,
    STATS_KEYS(STATS_ENUM)
#undef STATS_ENUM
        STATS_KEY_COUNT
};

struct stats_desc {
    const char *name;
    enum stats_kind kind;
    enum stats_unit unit;
    unsigned scopes; /* S_* bits */
    const char *doc;
};

extern const struct stats_desc stats_descs[STATS_KEY_COUNT];
extern const char *const stats_scope_names[STATS_SCOPE_COUNT];

/* The names of the slots of a STATS_BY_REASON value (exit reasons). */
struct stats_reasons {
    unsigned count;
    const char *(*name)(unsigned reason);
};

union stats_value {
    uint64_t n;
    const char *s;
    const uint64_t *hist; /* STATS_HIST_BUCKETS */
    const uint64_t *by;   /* stats_reasons.count */
};

struct stats_record {
    enum stats_scope scope;
    union stats_value v[STATS_KEY_COUNT];
};

static inline bool stats_in_scope(enum stats_key k, enum stats_scope s)
{
    return stats_descs[k].scopes & (1u << s);
}

/* The bucket of a log2 histogram that counts ns. */
static inline unsigned stats_hist_bucket(uint64_t ns)
{
    unsigned b = 63 - (unsigned)__builtin_clzll(ns | 1);
    return b < STATS_HIST_BUCKETS ? b : STATS_HIST_BUCKETS - 1;
}

static inline void stats_hist_add(uint64_t hist[STATS_HIST_BUCKETS], uint64_t ns)
{
    hist[stats_hist_bucket(ns)]++;
}

/*
 * Add src's counters and histograms into dst (the same scope's keys, e.g.
 * vCPU records into their VM's). by-reason and histogram values are summed
 * into the caller's arrays that dst points at.
 */
void stats_accumulate(struct stats_record *dst, const struct stats_record *src,
                      const struct stats_reasons *reasons);

/*
 * The record as one JSON object (the body of an @stats line), every key of
 * its scope present. Returns the text in buf (see lib/json.h on overflow).
 */
const char *stats_json(const struct stats_record *r, const struct stats_reasons *reasons, char *buf,
                       size_t cap);

/* The Markdown table of docs/stats.md, line by line. */
void stats_doc(void (*line)(const char *text, void *ctx), void *ctx);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vcpu/vcpu_stats.h"

#include "arch/x86/tsc.h"
#include "vmm/vcpu/hlt_intercept.h"
#include "vmm/vmm.h"

_Static_assert(VM_MAX_VCPUS <= 64, "stats/report.c keeps 64 vCPU records of one VM");

static const char *reason_name(unsigned r)
{
    return exit_reason_name((enum exit_reason)r);
}

const struct stats_reasons vcpu_exit_reasons = {EXIT_REASON_COUNT, reason_name};

static const char *npf_slot_name(unsigned slot)
{
    if (slot < BUILTIN_DEVICE_COUNT)
        return builtin_devices[slot]->name;
    return slot == NPF_UNBACKED ? "unbacked" : "outside";
}

const struct stats_reasons vcpu_npf_slots = {NPF_SLOTS, npf_slot_name};

static const char *vm_name(const void *base)
{
    return ((const struct vcpu *)base)->vm->cfg.name;
}

static uint64_t vm_vcpus(const void *base, unsigned i)
{
    (void)i;
    return ((const struct vcpu *)base)->vm->nvcpus;
}

static const char *hlt_intercept(const void *base)
{
    (void)base;
    return hlt_intercept_name(hlt_intercept_mode());
}

static const char *spin_detector(const void *field)
{
    return spin_detector_name(*(const enum spin_detector *)field);
}

/* exits: the HLT exits of both intercepts. */
static uint64_t halt_exits(const void *field, unsigned i)
{
    (void)i;
    const uint64_t *exits = field;
    return __atomic_load_n(&exits[EXIT_HLT], __ATOMIC_RELAXED) +
           __atomic_load_n(&exits[EXIT_IDLE_HLT], __ATOMIC_RELAXED);
}

#define ROW(key, kind, unit, scopes, field, doc, ...)                                              \
    STATS_ROW(key, kind, unit, scopes, struct vcpu, field, doc, __VA_ARGS__)
#define AS_US .number = stats_cycles_us /* TSC cycles as us */
#define TABLE .flags = STATS_F_TABLE    /* in the human table */

/*
 * In output order. The halt-polling and directed-yield names are KVM's
 * (docs/halt_polling.md, docs/directed_yield.md). Completed time only:
 * adding the current state's share could count it twice.
 */
static const struct stats_desc vcpu_rows[] = {
    /* The devices record has it too (stats/report.c): */
    STATS_FN(vm, STRING, NONE, S_GUEST | S_DEVICES, "the VM's name", .string = vm_name),
    ROW(vcpu, GAUGE, NONE, S_VCPU, hw.id, "the vCPU's id"),
    ROW(cpu, GAUGE, NONE, S_VCPU, se.cpu, "the host CPU (for a vCPU: the one it is on)", TABLE),
    STATS_FN(vcpus, GAUGE, NONE, S_VM, "the VM's vCPUs", .number = vm_vcpus),
    STATS_FN(hlt_intercept, STRING, NONE, S_GUEST,
             "the intercept that makes HLT exit: `idle_hlt` or `hlt`, as in `@boot`",
             .string = hlt_intercept),
    ROW(spin_detector, STRING, NONE, S_GUEST, spin.detector,
        "`ple`, `pause_filter`, `software` or `off` (directed_yield.md)", .string = spin_detector),
    ROW(run_us, COUNTER, US, S_GUEST, se.cycles[SCHED_RUNNING],
        "time running guest code or handling its exits", AS_US, TABLE),
    ROW(wait_us, COUNTER, US, S_GUEST, se.cycles[SCHED_RUNNABLE],
        "runnable, waiting for a CPU: steal time", AS_US, TABLE),
    ROW(polling_us, COUNTER, US, S_GUEST, se.cycles[SCHED_POLLING], "halted, its CPU halt polling",
        AS_US, TABLE),
    ROW(blocked_us, COUNTER, US, S_GUEST, se.cycles[SCHED_BLOCKED], "halted, off its CPU", AS_US,
        TABLE),
    ROW(exits, BY_REASON, NONE, S_GUEST, stats.exits, "exits by reason"),
    ROW(exit_ns, BY_REASON, NS, S_GUEST, stats.exit_cycles,
        "time handling exits by reason, from the exit to the end of its handler",
        .number = stats_cycles_ns),
    ROW(exit_max_ns, BY_REASON, NS, S_GUEST, stats.exit_max_cycles,
        "the longest exit by reason, timed as `exit_ns`; a VM's is its vCPUs' longest "
        "(docs/robustness.md, \"Bounded exits\")",
        .number = stats_cycles_ns, .flags = STATS_F_MAX),
    ROW(npf_exits, BY_REASON, NONE, S_GUEST, stats.npf_exits,
        "`npf` exits by what they reached: a device's page, `unbacked` memory, `outside` the VM",
        .slots = &vcpu_npf_slots),
    ROW(npf_ns, BY_REASON, NS, S_GUEST, stats.npf_cycles, "time handling them, as `exit_ns`",
        .number = stats_cycles_ns, .slots = &vcpu_npf_slots),
    ROW(npf_max_ns, BY_REASON, NS, S_GUEST, stats.npf_max_cycles,
        "the longest of them, as "
        "`exit_max_ns`",
        .number = stats_cycles_ns, .slots = &vcpu_npf_slots, .flags = STATS_F_MAX),
    ROW(halts, COUNTER, NONE, S_GUEST, stats.halts, "HLTs that halted: nothing was deliverable"),
    ROW(halt_exits, COUNTER, NONE, S_GUEST, stats.exits,
        "HLT exits, including those that found an event: `hlt_exits` + `idle_hlt_exits`",
        .number = halt_exits, TABLE),
    ROW(hlt_exits, COUNTER, NONE, S_GUEST, stats.exits[EXIT_HLT],
        "exits of the plain HLT intercept"),
    ROW(idle_hlt_exits, COUNTER, NONE, S_GUEST, stats.exits[EXIT_IDLE_HLT],
        "exits of the Idle HLT intercept (a HLT with no virtual interrupt or NMI pending)"),
    ROW(hlt_in_shadow, COUNTER, NONE, S_GUEST, stats.hlt_in_shadow,
        "HLTs pollux completed at another exit: STI; HLT interrupted in STI's shadow, with an "
        "interrupt pending (docs/virtual_interrupts.md)"),
    ROW(halt_attempted_poll, COUNTER, NONE, S_GUEST, stats.halt_attempted_poll, "halts that polled",
        TABLE),
    ROW(halt_successful_poll, COUNTER, NONE, S_GUEST, stats.halt_successful_poll,
        "halts whose poll caught the wake-up: the vCPU never blocked", TABLE),
    ROW(halt_poll_invalid, COUNTER, NONE, S_GUEST, stats.halt_poll_invalid,
        "successful polls ended by a stop request rather than a guest event"),
    ROW(halt_wakeup, COUNTER, NONE, S_GUEST, stats.halt_wakeup, "wake-ups of a blocked vCPU",
        TABLE),
    ROW(halt_poll_success_ns, COUNTER, NS, S_GUEST, stats.halt_poll_success_ns,
        "time polled in successful polls", TABLE),
    ROW(halt_poll_fail_ns, COUNTER, NS, S_GUEST, stats.halt_poll_fail_ns,
        "time polled in failed polls", TABLE),
    ROW(halt_wait_ns, COUNTER, NS, S_GUEST, stats.halt_wait_ns,
        "time blocked after a failed poll or without one", TABLE),
    ROW(halt_poll_success_hist, HIST, NS, S_GUEST, stats.halt_poll_success_hist,
        "`halt_poll_success_ns` per poll"),
    ROW(halt_poll_fail_hist, HIST, NS, S_GUEST, stats.halt_poll_fail_hist,
        "`halt_poll_fail_ns` per poll"),
    ROW(halt_wait_hist, HIST, NS, S_GUEST, stats.halt_wait_hist, "`halt_wait_ns` per halt"),
    ROW(halt_poll_ns, GAUGE, NS, S_VCPU, halt_poll.window_ns, "the vCPU's polling window", TABLE),
    ROW(poll_control, GAUGE, NONE, S_VCPU, poll_control, "the guest's `MSR_KVM_POLL_CONTROL`"),
    ROW(halt_attempted_poll_optout, COUNTER, NONE, S_GUEST, stats.halt_attempted_poll_optout,
        "polls while the guest had opted out; 0 unless pollux is broken"),
    ROW(pause_exits, COUNTER, NONE, S_GUEST, stats.pause_exits,
        "PAUSE exits taken for spin detection", TABLE),
    ROW(pause_exits_backstop, COUNTER, NONE, S_GUEST, stats.pause_exits_backstop,
        "`ple=off`: PAUSE exits kept only to preempt a guest spinning with interrupts off"),
    ROW(spins_detected, COUNTER, NONE, S_GUEST, stats.spins_detected,
        "hardware spin exits, or runs of `spin_sw_threshold` software-counted ones", TABLE),
    ROW(ple_window, GAUGE, NONE, S_VCPU, spin.window,
        "the hardware window (`ple_window`, `pause_filter_count`); 0 for `software`, `off`; "
        "pollux's request only where L0 sets its own (`window_by_l0`)",
        TABLE),
    ROW(spin_yield_attempted, COUNTER, NONE, S_GUEST, stats.spin_yield_attempted,
        "spins that scanned for a target", TABLE),
    ROW(spin_yield_successful, COUNTER, NONE, S_GUEST, stats.spin_yield_successful,
        "... that ran one in the spinner's place", TABLE),
    ROW(spin_yield_failed_tries, COUNTER, NONE, S_GUEST, stats.spin_yield_failed_tries,
        "candidates still waiting that could not come to the spinner's CPU (count toward 3)"),
    ROW(spin_yield_gone, COUNTER, NONE, S_GUEST, stats.spin_yield_gone,
        "candidates no longer waiting when taken: started running, halted or moved"),
    ROW(spin_yield_gave_up, COUNTER, NONE, S_GUEST, stats.spin_yield_gave_up,
        "scans ended after 3 failed tries"),
    ROW(spin_yield_skipped_running, COUNTER, NONE, S_GUEST,
        stats.spin_yield_skipped[YIELD_SKIP_RUNNING], "candidates on a CPU"),
    ROW(spin_yield_skipped_blocked, COUNTER, NONE, S_GUEST,
        stats.spin_yield_skipped[YIELD_SKIP_BLOCKED],
        "candidates halted (or not started, or stopped) with no interrupt pending"),
    ROW(spin_yield_skipped_user_mode, COUNTER, NONE, S_GUEST,
        stats.spin_yield_skipped[YIELD_SKIP_USER_MODE],
        "candidates preempted at CPL 3 while the spinner was at CPL 0"),
    ROW(spin_yield_skipped_not_eligible, COUNTER, NONE, S_GUEST,
        stats.spin_yield_skipped[YIELD_SKIP_NOT_ELIGIBLE],
        "spinners whose turn it was not (dy_eligible)"),
    ROW(spin_yield_skipped_pinned, COUNTER, NONE, S_GUEST,
        stats.spin_yield_skipped[YIELD_SKIP_PINNED], "candidates pinned to another CPU"),
    ROW(spin_slice_yields, COUNTER, NONE, S_GUEST, stats.spin_slice_yields,
        "spins without a target after which the vCPU gave up its slice", TABLE),
    ROW(directed_yield_attempted, COUNTER, NONE, S_GUEST, stats.directed_yield_attempted,
        "PV yields asked for: `KVM_HC_SCHED_YIELD` and the yield after `KVM_HC_KICK_CPU`"),
    ROW(directed_yield_successful, COUNTER, NONE, S_GUEST, stats.directed_yield_successful,
        "... that ran the named vCPU in the caller's place"),
    ROW(pv_kicks, COUNTER, NONE, S_GUEST, stats.pv_kicks,
        "`KVM_HC_KICK_CPU` calls naming a vCPU of the VM"),
    ROW(pv_send_ipis, COUNTER, NONE, S_GUEST, stats.pv_send_ipis,
        "IPIs delivered through `KVM_HC_SEND_IPI`"),
    ROW(pv_tlb_flushes, COUNTER, NONE, S_GUEST, stats.pv_tlb_flushes,
        "entries that flushed the guest TLB for a sibling's `KVM_VCPU_FLUSH_TLB` instead of an "
        "IPI"),
    ROW(migrations, COUNTER, NONE, S_GUEST, se.migrations, "moves to another host CPU", TABLE),
    ROW(timer_interrupts, COUNTER, NONE, S_GUEST, stats.timer_interrupts,
        "local APIC timer interrupts injected (or taken through V_IRQ)", TABLE),
    ROW(timer_late_ns, COUNTER, NS, S_GUEST, stats.timer_late_ns,
        "their lateness: from each expiry's deadline to the entry that injects it, in the guest "
        "TSC's ns (KVM's `kvm_wait_lapic_expire` delta, after the wait), without "
        "`timer_idle_exit_ns`",
        TABLE),
    ROW(timer_late_max_ns, GAUGE, NS, S_VCPU, stats.timer_late_max_ns,
        "the largest `timer_late_ns` of one interrupt", TABLE),
    ROW(timer_late_hist, HIST, NS, S_GUEST, stats.timer_late_hist, "`timer_late_ns` per interrupt"),
    ROW(timer_idle_exit_ns, COUNTER, NS, S_GUEST, stats.timer_idle_exit_ns,
        "the C-state model's exits (`idle_exit_latency_us`) of the vCPU's CPU within those "
        "windows, left out of `timer_late_ns`",
        TABLE),
    ROW(lapic_timer_advance_ns, GAUGE, NS, S_VCPU, timer_advance.ns,
        "how early the TSC-deadline timer fires (`timer_advance_ns`; KVM's debugfs name)", TABLE),
    ROW(timer_advance_waits, COUNTER, NONE, S_GUEST, stats.timer_advance_waits,
        "entries that waited for a deadline the advance fired ahead of"),
    ROW(timer_advance_wait_ns, COUNTER, NS, S_GUEST, stats.timer_advance_wait_ns,
        "time those waits took, with interrupts off: the advance's cost", TABLE),
};
const struct stats_table vcpu_stats_table = STATS_TABLE(vcpu_rows, &vcpu_exit_reasons);

/* @vm_stop (docs/console.md), per vCPU: "timer" is its local APIC timer's expiries. */
static const struct stats_desc timer_rows[] = {
    ROW(delivered, COUNTER, NONE, 0, lapic.timer_stats.delivered, 0),
    ROW(coalesced, COUNTER, NONE, 0, lapic.timer_stats.coalesced, 0),
    ROW(skipped, COUNTER, NONE, 0, lapic.timer_stats.skipped, 0),
    /* Their interrupts' lateness and the advance, as @stats's timer_* rows say. */
    ROW(late_ns, COUNTER, NS, 0, stats.timer_late_ns, 0),
    ROW(late_max_ns, GAUGE, NS, 0, stats.timer_late_max_ns, 0),
    ROW(late_ns_log2, HIST, NS, 0, stats.timer_late_hist, 0),
    ROW(idle_exit_ns, COUNTER, NS, 0, stats.timer_idle_exit_ns, 0),
    ROW(advance_ns, GAUGE, NS, 0, timer_advance.ns, 0),
    ROW(advance_wait_ns, COUNTER, NS, 0, stats.timer_advance_wait_ns, 0),
};
static const struct stats_table timer_table = STATS_TABLE(timer_rows, 0);

/* The keys @stats has too are its rows (STATS_REF): @vm_stop only orders them its own way. */
static const struct stats_desc vm_stop_vcpu_rows[] = {
    STATS_REF(cpu, &vcpu_stats_table),
    STATS_REF(run_us, &vcpu_stats_table),
    STATS_REF(wait_us, &vcpu_stats_table),
    STATS_REF(polling_us, &vcpu_stats_table),
    STATS_REF(blocked_us, &vcpu_stats_table),
    STATS_REF(halts, &vcpu_stats_table),
    STATS_FN(timer, OBJECT, NONE, 0, 0, .sub = &timer_table),
    STATS_REF(exits, &vcpu_stats_table),
    STATS_REF(exit_max_ns, &vcpu_stats_table),
    STATS_REF(npf_exits, &vcpu_stats_table),
    ROW(halt_ns_log2, HIST, NS, 0, stats.halt_hist, 0),
};
const struct stats_table vm_stop_vcpu_table = STATS_TABLE(vm_stop_vcpu_rows, &vcpu_exit_reasons);

#undef ROW
#define ROW(key, kind, unit, field, ...)                                                           \
    STATS_ROW(key, kind, unit, 0, struct vm, field, 0, __VA_ARGS__)

static bool involuntary(const void *base)
{
    return ((const struct vm *)base)->stop_detail[0] != 0;
}

static bool has_address(const void *base)
{
    return ((const struct vm *)base)->stop_has_address;
}

static uint64_t since(const void *field, unsigned i)
{
    (void)i;
    return tsc_to_ns(rdtsc() - *(const uint64_t *)field) / 1000;
}

/* Element i of a vcpu_stats array (at offset in struct vcpu), summed over the VM's vCPUs. */
static uint64_t vm_sum(const struct vm *vm, size_t offset, unsigned i)
{
    uint64_t sum = 0;
    for (unsigned k = 0; k < vm->nvcpus; k++) {
        const uint64_t *field = (const uint64_t *)((const char *)vm->vcpus[k] + offset);
        sum += __atomic_load_n(&field[i], __ATOMIC_RELAXED);
    }
    return sum;
}

static uint64_t vm_exits(const void *base, unsigned reason)
{
    return vm_sum(base, offsetof(struct vcpu, stats.exits), reason);
}

/* The VM's longest exit of this reason: its vCPUs' longest, in ns. */
static uint64_t vm_exit_max(const void *base, unsigned reason)
{
    const struct vm *vm = base;
    uint64_t max = 0;
    for (unsigned k = 0; k < vm->nvcpus; k++) {
        uint64_t c =
            __atomic_load_n(&vm->vcpus[k]->stats.exit_max_cycles[reason], __ATOMIC_RELAXED);
        max = c > max ? c : max;
    }
    return tsc_to_ns(max);
}

static uint64_t vm_npf_exits(const void *base, unsigned slot)
{
    return vm_sum(base, offsetof(struct vcpu, stats.npf_exits), slot);
}

static const struct stats_desc vm_stop_rows[] = {
    ROW(vm, STRING, NONE, cfg.name, .flags = STATS_F_CHARS),
    ROW(code, INT, NONE, exit_code),
    ROW(reason, STRING, NONE, stop_reason),
    ROW(detail, STRING, NONE, stop_detail, .flags = STATS_F_CHARS, .present = involuntary),
    ROW(rip, HEX, NONE, stop_rip, .present = involuntary),
    ROW(address, HEX, NONE, stop_address, .present = has_address),
    ROW(run_us, COUNTER, US, start_tsc, .number = since),
    STATS_FN(exits, BY_REASON, NONE, 0, 0, .number = vm_exits),
    STATS_FN(exit_max_ns, BY_REASON, NS, 0, 0, .number = vm_exit_max),
    STATS_FN(npf_exits, BY_REASON, NONE, 0, 0, .number = vm_npf_exits, .slots = &vcpu_npf_slots),
    ROW(unhandled_io_reads, COUNTER, NONE, unhandled_io_reads),
    ROW(unhandled_io_writes, COUNTER, NONE, unhandled_io_writes),
    ROW(unbacked_reads, COUNTER, NONE, unbacked.reads),
    ROW(unbacked_writes, COUNTER, NONE, unbacked.writes),
    ROW(mark_rounds_dropped, COUNTER, NONE, mark_rounds_dropped),
};
const struct stats_table vm_stop_table = STATS_TABLE(vm_stop_rows, &vcpu_exit_reasons);

#ifndef HOST_TEST
/* The devices' counters are read racily, as every round's are: each is one aligned load. */
static bool devices_stats(const void *vm, struct json *j)
{
    return vm_devices_stats((struct vm *)vm, j);
}

void vcpu_stats_vm(const struct vm *vm, const void *bases[VM_MAX_VCPUS], struct stats_vm *out)
{
    for (unsigned i = 0; i < vm->nvcpus; i++)
        bases[i] = vm->vcpus[i];
    *out = (struct stats_vm){vm->cfg.name, bases, vm->nvcpus, devices_stats, vm};
}

struct visit {
    void (*fn)(const struct stats_vm *vm, void *ctx);
    void *ctx;
};

static void visit_vm(struct vm *vm, void *ctx)
{
    const struct visit *v = ctx;
    const void *bases[VM_MAX_VCPUS];
    struct stats_vm g;
    vcpu_stats_vm(vm, bases, &g);
    v->fn(&g, v->ctx);
}

static void for_each_vm(void (*fn)(const struct stats_vm *vm, void *ctx), void *ctx)
{
    struct visit v = {fn, ctx};
    vmm_for_each_vm(visit_vm, &v);
}

static const struct stats_vms vms = {
    &vcpu_stats_table, for_each_vm, vmm_counts,  EXIT_NESTED_PAGE_FAULT,
    "npf_exits",       "npf_ns",    "npf_max_ns"};

void vcpu_stats_register(void)
{
    stats_register_vms(&vms);
}
#endif

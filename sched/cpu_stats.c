/* SPDX-License-Identifier: GPL-2.0-only */
/* sched/'s statistics: the descriptor table over a host CPU's times (the `cpu` scope of @stats). */
#include "sched/sched.h"
#include "stats/stats.h"

#define ROW(key, kind, unit, field, doc, ...)                                                      \
    STATS_ROW(key, kind, unit, S_CPU, struct sched_cpu_times, field, doc, __VA_ARGS__)

static const struct stats_desc cpu_rows[] = {
    ROW(cpu, GAUGE, NONE, cpu, 0), /* described with the vCPU's (vmm/vcpu/vcpu_stats.c) */
    ROW(busy_us, COUNTER, US, busy, "time running vCPUs", .number = stats_cycles_us,
        .flags = STATS_F_TABLE),
    ROW(idle_us, COUNTER, US, idle, "time halted with nothing to run", .number = stats_cycles_us,
        .flags = STATS_F_TABLE),
    ROW(poll_us, COUNTER, US, poll, "the part of `busy_us` spent halt polling",
        .number = stats_cycles_us, .flags = STATS_F_TABLE),
    ROW(idle_exit_us, COUNTER, US, idle_exit,
        "the part of `idle_us` spent leaving idle (`idle_exit_latency_us`, a C-state model)",
        .number = stats_cycles_us, .flags = STATS_F_TABLE),
    ROW(deferred_us, COUNTER, US, deferred,
        "time running deferred device work between vCPU entries (docs/robustness.md)",
        .number = stats_cycles_us, .flags = STATS_F_TABLE),
    ROW(placed, GAUGE, NONE, placed, "vCPUs of live VMs on this CPU", .flags = STATS_F_TABLE),
};
const struct stats_table sched_cpu_stats_table = STATS_TABLE(cpu_rows, 0);

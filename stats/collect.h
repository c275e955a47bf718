/*
 * Filling stats records from the hypervisor's own counters: per vCPU (kept
 * by the vCPU's CPU), per VM (their sum) and per CPU (sched/). Readers on
 * other CPUs read them without locks; see docs/stats.md.
 */
#ifndef POLLUX_STATS_COLLECT_H
#define POLLUX_STATS_COLLECT_H

#include "stats/stats.h"
#include "vmm/vm.h"

extern const struct stats_reasons stats_exit_reasons;

/* The arrays a VM record's sums live in. */
struct stats_vm_sums {
    uint64_t exits[EXIT_REASON_COUNT], exit_ns[EXIT_REASON_COUNT];
    uint64_t hist[3][STATS_HIST_BUCKETS];
};

/* r's by-reason and histogram values point into v's counters, and exit_ns (filled here). */
void stats_collect_vcpu(const struct vcpu *v, struct stats_record *r,
                        uint64_t exit_ns[EXIT_REASON_COUNT]);

/* A VM record summing the vCPU records vcpus[0..n), its arrays in sums. */
void stats_collect_vm(const struct vm *vm, const struct stats_record *vcpus, unsigned n,
                      struct stats_record *r, struct stats_vm_sums *sums);

void stats_collect_cpu(unsigned cpu, struct stats_record *r);
void stats_collect_global(struct stats_record *r);

#endif

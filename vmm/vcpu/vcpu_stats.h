/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmm/'s statistics: the descriptor table over one vCPU (struct vcpu), whose
 * records are the `vcpu` scope and, summed, the `vm` scope of @stats; the
 * tables @vm_stop is printed from; and their registration with stats/.
 */
#ifndef POLLUX_VMM_VCPU_VCPU_STATS_H
#define POLLUX_VMM_VCPU_VCPU_STATS_H

#include "stats/report.h"
#include "vmm/vm.h"

extern const struct stats_reasons vcpu_exit_reasons;
extern const struct stats_reasons vcpu_npf_slots; /* enum npf_slot's names */
extern const struct stats_table vcpu_stats_table;

/* @vm_stop: the VM's keys (over struct vm), then `vcpus`, each over struct vcpu. */
extern const struct stats_table vm_stop_table, vm_stop_vcpu_table;

/* vm as stats/ reads it: bases holds its vCPUs' pointers; its devices' rows (vm_devices_stats). */
void vcpu_stats_vm(const struct vm *vm, const void *bases[VM_MAX_VCPUS], struct stats_vm *out);

/* At boot: the vCPU table and the live VMs, for the rounds. */
void vcpu_stats_register(void);

#endif

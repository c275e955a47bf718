/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * VM lifecycle: every multiboot module becomes a VM (or an @vm_reject with
 * the reason), VMs run on the CPUs sched/ gives them, and when the last one
 * has stopped the boot CPU shuts the machine down.
 */
#ifndef POLLUX_VMM_VMM_H
#define POLLUX_VMM_VMM_H

#include <stdbool.h>

#include "arch/x86/bootinfo.h"
#include "vmm/vm.h"

/* Create and queue a VM per module. Returns how many modules were rejected. */
unsigned vmm_start(const struct boot_info *bi);

/* A vCPU of vm has left for good; the last one reports @vm_stop and frees the VM. */
void vmm_vcpu_retired(struct vm *vm);

/* True once every started VM has stopped. */
bool vmm_all_stopped(void);

/* True if every VM that ran exited with code 0. */
bool vmm_all_succeeded(void);

/* fn for every VM started and not yet stopped; none is freed meanwhile (keep fn short). */
void vmm_for_each_vm(void (*fn)(struct vm *vm, void *ctx), void *ctx);

/* VMs running now, and stopped so far. */
void vmm_counts(uint64_t *running, uint64_t *stopped);

/* For a state dump (sched/watchdog.h): every running VM's vCPUs, read without their locks. */
void vmm_dump(void);

#endif

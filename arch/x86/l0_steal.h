/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pollux as a KVM guest: the steal time L0 reports for each of pollux's own
 * CPUs (KVM_FEATURE_STEAL_TIME, MSR_KVM_STEAL_TIME, abi/kvm.h), which the
 * lockup watchdog uses to tell a CPU that L0 descheduled from one that
 * stopped beating (sched/lockup.h). L0 adds to a CPU's steal the time it was
 * runnable but not running, when it runs again, and sets its preempted byte
 * while it is descheduled. Time L0 spends on the CPU's behalf (its exits,
 * QEMU's device emulation) is neither: a CPU slowed that way is not told
 * apart from one that hangs.
 */
#ifndef POLLUX_ARCH_X86_L0_STEAL_H
#define POLLUX_ARCH_X86_L0_STEAL_H

#include <stdbool.h>
#include <stdint.h>

/* On this CPU, once it is installed: register its record with L0 where KVM offers steal time. */
void l0_steal_enable(void);

/* cpu's steal so far in ns and whether L0 has it descheduled now; false where not enabled. */
bool l0_steal_read(unsigned cpu, uint64_t *steal_ns, bool *preempted);

#endif

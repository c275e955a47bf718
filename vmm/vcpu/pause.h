/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PAUSE exits: the spin detector each VM's vCPUs use (chosen from what the
 * backend offers and the VM's policy, sched/spin.h spin_choose), the hardware window's growing and
 * shrinking with its kvm_ple_window_update trace, and the hand-off of a
 * detected spin to the run loop, which asks sched/ for a directed yield.
 *
 * With ple=off no PAUSE exit is a spin; where the backend needs PAUSE
 * exits to preempt a guest spinning with interrupts off (virt_ops
 * pause_backstop) they stay on with the base window and are counted
 * apart (pause_exits_backstop), never as spins.
 */
#ifndef POLLUX_VMM_VCPU_PAUSE_H
#define POLLUX_VMM_VCPU_PAUSE_H

#include <stdbool.h>

#include "sched/spin.h"

struct vcpu;
struct vm;

/* Once, after the backend is enabled on the boot CPU: choose the detector, say which. */
void pause_setup(void);

enum spin_detector pause_detector(void);
/* PAUSE exits kept on with ple=off only to preempt spinning guests. */
bool pause_backstop(void);

/* At VM creation: its PAUSE handling from its spin policy (vm->pause). */
void pause_vm_init(struct vm *vm);

/* At vCPU creation: program its PAUSE exiting. */
void pause_vcpu_init(struct vcpu *v);

/* EXIT_PAUSE: count it; set v->spin.detected when it shows a spin. */
void pause_exit(struct vcpu *v);

/* v is scheduled in: the window shrinks, and it is no longer a spinner (sched/yield.h). */
void pause_sched_in(struct vcpu *v);

/*
 * v was caught spinning: the scheduler's directed yield (sched_on_spin),
 * counted in v's statistics and traced. True: v must leave the CPU now.
 */
bool pause_directed_yield(struct vcpu *v);

#endif

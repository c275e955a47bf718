/*
 * Placing vCPUs on host CPUs and running them. For now each CPU has a FIFO
 * of vCPUs and runs each one until its VM stops, then the next (preemptive
 * time slices come with multi-vCPU VMs). A CPU with nothing to run idles
 * with interrupts on; enqueueing work kicks it with an IPI.
 */
#ifndef POLLUX_SCHED_SCHED_H
#define POLLUX_SCHED_SCHED_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/* Called on every CPU once it is online: enables the virtualization backend. */
int sched_cpu_init(void);
bool sched_cpu_ready(unsigned cpu);

/* Queue v on host CPU `cpu` and wake that CPU. */
void sched_enqueue(unsigned cpu, struct vcpu *v);

/* Run queued vCPUs forever (APs), or until done() is true (the boot CPU). */
void sched_run(bool (*done)(void));

/* Wake a CPU that may be idle. */
void sched_kick(unsigned cpu);

/* A one-shot host timer at the given TSC value, to force an exit. */
void sched_timer_arm(uint64_t tsc_deadline);

#endif

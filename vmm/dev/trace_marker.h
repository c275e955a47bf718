/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A trace mark's statistics round (vmm/dev/trace_marker.c): taken in the
 * marking exit, printed between vCPU entries by the scheduler loop of the
 * marking CPU (sched_defer), so that the exit costs a copy of the VM's
 * counters and not the console's time (docs/robustness.md, "Bounded exits").
 * A VM has room for TRACE_MARK_ROUNDS rounds taken and not yet printed; a
 * mark while they all wait gets none, counted in @vm_stop
 * (`mark_rounds_dropped`). A round is printed before any round taken or
 * begun after it (stats/report.h), so the console's rounds keep their order.
 */
#ifndef POLLUX_VMM_DEV_TRACE_MARKER_H
#define POLLUX_VMM_DEV_TRACE_MARKER_H

#include <stdbool.h>

#define TRACE_MARK_ROUNDS 2 /* a window's two marks */

struct vm;

/* At creation, once the VM's vCPUs exist: room for its rounds. false: out of memory. */
bool trace_marks_create(struct vm *vm);

/* When the VM stops, before @vm_stop: its rounds still waiting, printed now, in order. */
void trace_marks_flush(struct vm *vm);

/* When it is freed (after trace_marks_flush, or never started). */
void trace_marks_free(struct vm *vm);

#endif

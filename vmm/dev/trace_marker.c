/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The trace marker on port 0x560 (abi/trace_marker.h): a guest's byte write
 * opens (1) or closes (0) its VM's trace capture window, recorded in the
 * VM's trace ring (vmm/console/trace.h), and takes a round of the VM's
 * statistics records, so that a tool can take the window's counts as the
 * difference of two rounds (docs/console.md). The round is printed later,
 * outside the vCPU's path (vmm/dev/trace_marker.h). Other widths are not the
 * device's.
 */
#include "vmm/dev/trace_marker.h"

#include "abi/trace_marker.h"
#include "arch/x86/mm.h"
#include "arch/x86/spinlock.h"
#include "sched/deferred.h"
#include "sched/sched.h"
#include "stats/report.h"
#include "vmm/console/trace.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vcpu/vcpu_stats.h"
#include "vmm/vm.h"

/* A VM's rounds: TRACE_MARK_ROUNDS of them, each free once printed; their vCPU records after. */
struct trace_marks {
    struct spinlock lock;      /* for taking a free round */
    struct deferred_work work; /* prints the rounds taken (stats_print_taken) */
    uint64_t pages;
    struct stats_snapshot round[TRACE_MARK_ROUNDS];
    struct stats_record vcpus[]; /* TRACE_MARK_ROUNDS x the VM's vCPUs */
};

/*
 * Deferred work, between vCPU entries: the rounds taken so far, of any VM,
 * oldest first, as far as the console has room; the rest at a later pass
 * (a wait for the serial line here would hold this CPU's vCPUs off it).
 */
static bool print_rounds(struct deferred_work *w)
{
    (void)w;
    return stats_print_taken_nowait();
}

/* A free round, now in use; NULL if every one waits to be printed. */
static struct stats_snapshot *free_round(struct trace_marks *m)
{
    struct stats_snapshot *r = NULL;
    uint64_t flags = spin_lock_irqsave(&m->lock);
    for (unsigned i = 0; i < TRACE_MARK_ROUNDS && !r; i++)
        if (!__atomic_load_n(&m->round[i].in_use, __ATOMIC_ACQUIRE))
            r = &m->round[i];
    if (r)
        r->in_use = true;
    spin_unlock_irqrestore(&m->lock, flags);
    return r;
}

/* In the marking exit: the VM's records copied, bounded by its vCPUs; no formatting. */
static void take_round(struct vm *vm)
{
    struct stats_snapshot *r = free_round(vm->marks);
    if (!r) {
        __atomic_add_fetch(&vm->mark_rounds_dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    const void *bases[VM_MAX_VCPUS];
    struct stats_vm g;
    vcpu_stats_vm(vm, bases, &g);
    stats_take_vm(&g, r);
    sched_defer(&vm->marks->work);
}

bool trace_marks_create(struct vm *vm)
{
    uint64_t bytes = sizeof(struct trace_marks) +
                     (uint64_t)TRACE_MARK_ROUNDS * vm->nvcpus * sizeof(struct stats_record);
    uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    struct trace_marks *m = page_alloc_zeroed(pages);
    if (!m)
        return false;
    m->lock = (struct spinlock)SPINLOCK_INIT;
    deferred_init(&m->work, print_rounds);
    m->pages = pages;
    for (unsigned i = 0; i < TRACE_MARK_ROUNDS; i++)
        m->round[i].vcpus = &m->vcpus[i * vm->nvcpus];
    vm->marks = m;
    return true;
}

void trace_marks_flush(struct vm *vm)
{
    struct trace_marks *m = vm->marks;
    if (!m)
        return;
    sched_defer_cancel(&m->work); /* no vCPU is left to mark: every round is taken */
    stats_print_taken();
}

void trace_marks_free(struct vm *vm)
{
    if (vm->marks)
        pmm_free(&host_pmm, (uint64_t)vm->marks, vm->marks->pages);
    vm->marks = NULL;
}

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    if (a->size != 1)
        return DEV_NOT_MINE;
    trace_marker(d->vm, v->hw.id, (uint8_t)a->value);
    take_round(d->vm);
    return DEV_DONE;
}

static const struct dev_range port[] = {{TRACE_MARKER_PORT, TRACE_MARKER_PORT}};

const struct device trace_marker_device = {
    .name = "trace-marker", .ports = {port, 1, 0, port_write}, /* reads are unhandled I/O */
};

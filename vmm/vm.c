/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vm.h"

#include <stdarg.h>

#include "drivers/console.h"
#include "lib/format.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/vmm.h"

/*
 * Make every vCPU leave its CPU: halted ones are woken (vcpu_notify sees
 * `stopping`), running ones are kicked, and APs still waiting for a startup
 * IPI never run again, so they retire here. The caller is a live vCPU of
 * this VM (or its timer), so the VM cannot be freed under us.
 */
static void stop_vcpus(struct vm *vm)
{
    for (unsigned i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        uint64_t flags = spin_lock_irqsave(&v->se.lock);
        /*
         * WAIT_SIPI vCPUs hold no timer; STOPPED also turns away any startup
         * IPI. One still leaving its CPU is retired by that CPU (run_one).
         */
        bool retire = v->se.state == SCHED_PARKED && !v->se.on_cpu;
        if (retire)
            sched_set_state(&v->se, SCHED_STOPPED, rdtsc());
        else
            vcpu_notify(v, TRACE_WAKE_STOP, NULL);
        spin_unlock_irqrestore(&v->se.lock, flags);
        if (retire)
            vmm_vcpu_retired(vm);
    }
}

static bool claim_stop(struct vm *vm, int64_t code, const char *reason)
{
    bool expected = false;
    /* The first reason is the true one; later requests are consequences. */
    if (!__atomic_compare_exchange_n(&vm->stopping, &expected, true, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return false;
    vm->exit_code = code;
    vm->stop_reason = reason;
    return true;
}

void vm_request_stop(struct vm *vm, int64_t code, const char *reason)
{
    if (claim_stop(vm, code, reason))
        stop_vcpus(vm);
}

static void vm_vfail(struct vcpu *v, const char *reason, const uint64_t *gpa, const char *fmt,
                     va_list ap)
{
    struct vm *vm = v->vm;
    if (!claim_stop(vm, -1, reason))
        return;
    vsnprintf(vm->stop_detail, sizeof(vm->stop_detail), fmt, ap);
    vm->stop_rip = v->hw.regs.rip;
    if (gpa) {
        vm->stop_address = *gpa;
        vm->stop_has_address = true;
    }
    kprintf("pollux: stopping VM %s (vcpu %u, rip 0x%lx): %s\n", vm->cfg.name, v->hw.id,
            v->hw.regs.rip, vm->stop_detail);
    stop_vcpus(vm);
}

void vm_fail(struct vcpu *v, const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vm_vfail(v, reason, 0, fmt, ap);
    va_end(ap);
}

void vm_fail_access(struct vcpu *v, uint64_t gpa, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vm_vfail(v, "bad-access", &gpa, fmt, ap);
    va_end(ap);
}

#include "vmm/vm.h"

#include <stdarg.h>

#include "drivers/console.h"
#include "lib/format.h"

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
    claim_stop(vm, code, reason);
}

void vm_fail(struct vcpu *v, const char *reason, const char *fmt, ...)
{
    struct vm *vm = v->vm;
    if (!claim_stop(vm, -1, reason))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(vm->stop_detail, sizeof(vm->stop_detail), fmt, ap);
    va_end(ap);
    kprintf("pollux: stopping VM %s (vcpu %u, rip 0x%lx): %s\n", vm->cfg.name, v->id, v->regs.rip,
            vm->stop_detail);
}

void *vm_gpa_ptr(struct vm *vm, uint64_t gpa, uint64_t len)
{
    if (gpa >= vm->cfg.mem || len > vm->cfg.mem - gpa)
        return 0;
    return vm->mem + gpa;
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/hypercall.h"

#include "arch/x86/percpu.h"
#include "vmm/exit/guest_access.h"
#include "vmm/dev/kvm_pv_sched.h"
#include "vmm/dev/vm_devices.h"
#include "vmm/vm.h"

/* pollux's calls share their upper 16 bits; every other number is KVM's. */
static bool is_pollux_call(uint64_t nr)
{
    return nr >> 16 == HC_EXIT >> 16;
}

#ifdef POLLUX_EXIT_COUNTS
static unsigned long exit_counts_to_guest(struct vcpu *v, uint32_t gpa)
{
    /* First: what this call does from here on belongs to the guest's next window. */
    struct exit_counts c;
    exit_counts_read(&c);
    uint32_t *w = vm_gpa_ptr(v->vm, gpa, HC_EXIT_COUNTS_WORDS * sizeof(uint32_t));
    if (!w)
        return HC_EFAULT;
    uint64_t exits = 0;
    for (unsigned r = 0; r < EXIT_REASON_COUNT; r++)
        exits += v->stats.exits[r];
    w[0] = this_cpu()->cpu;
    w[1] = (uint32_t)exits;
    for (unsigned k = 0; k < EXIT_COUNT_KINDS; k++)
        w[2 + k] = (uint32_t)c.n[k];
    return HC_OK;
}
#endif

/* KVM's ABI (kvm_emulate_hypercall): a0-a3 in RBX, RCX, RDX, RSI, all 32-bit outside 64-bit code.
 */
static uint64_t kvm_call(struct vcpu *v, uint64_t nr, unsigned cpl)
{
    const struct guest_regs *r = &v->hw.regs;
    bool op_64_bit = vcpu_mode(v)->code_bits == 64;
    struct kvm_hypercall hc = {nr, {r->rbx, r->rcx, r->rdx, r->rsi}, op_64_bit};
    if (!op_64_bit)
        for (unsigned i = 0; i < 4; i++)
            hc.a[i] = (uint32_t)hc.a[i];
    return kvm_pv_hypercall(v, &hc, cpl);
}

unsigned long vmm_hypercall(struct vcpu *v, unsigned cpl, bool *again)
{
    /* RAX in 64-bit code, EAX elsewhere: the mode matters only when the upper half is set. */
    uint64_t nr = v->hw.regs.rax;
    if ((nr >> 32) && vcpu_mode(v)->code_bits != 64)
        nr = (uint32_t)nr;
    if (!is_pollux_call(nr))
        return kvm_call(v, nr, cpl);
    if (cpl != 0)
        return HC_EPERM;
    uint32_t a = (uint32_t)v->hw.regs.rbx, b = (uint32_t)v->hw.regs.rcx;
    switch (nr) {
    case HC_EXIT:
        vm_request_stop(v->vm, a, "hypercall");
        return HC_OK;
    case HC_PUTS: {
        const char *s = b <= HC_PUTS_MAX ? vm_gpa_ptr(v->vm, a, b) : 0;
        if (!s)
            return HC_EFAULT;
        uint32_t taken = (uint32_t)vm_uart_puts(v->vm, s, b);
        if (taken < b) {
            /* As a REP string instruction interrupted: the registers name the rest. */
            v->hw.regs.rbx += taken;
            v->hw.regs.rcx -= taken;
            *again = true;
        }
        return HC_OK;
    }
    case HC_NOP:
        return HC_OK;
    case HC_HLT_EXITS:
        return v->stats.exits[EXIT_HLT] + v->stats.exits[EXIT_IDLE_HLT];
#ifdef POLLUX_EXIT_COUNTS
    case HC_EXIT_COUNTS:
        return exit_counts_to_guest(v, a);
#endif
    default:
        return HC_ENOSYS;
    }
}

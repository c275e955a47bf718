/* The common exit dispatcher (handlers indexed by enum exit_reason). */
#ifndef POLLUX_VMM_EXITS_H
#define POLLUX_VMM_EXITS_H

#include "vmm/cpuid_cache.h"
#include "vmm/guest_access.h"
#include "vmm/hypercall.h"
#include "vmm/io.h"
#include "vmm/vm.h"

void handle_exit(struct vcpu *v, const struct exit_record *e);

/* The handlers the exit fast path (vmm/fastpath_exit.h) calls directly, without the table. */
void handle_msr_read(struct vcpu *v, const struct exit_record *e);
void handle_msr_write(struct vcpu *v, const struct exit_record *e);
void handle_cr8(struct vcpu *v, const struct exit_record *e);
void handle_npf(struct vcpu *v, const struct exit_record *e);

/* What pollux answers beyond its per-VM table: the per-vCPU bits, or the filter in full. */
void cpuid_for_vcpu(struct vcpu *v, const struct cpuid_answer *a, uint32_t leaf, uint32_t subleaf);

/* CPUID from the VM's table. Inline: the fast path's commonest exit, in the vendor's loop. */
static inline void handle_cpuid(struct vcpu *v, const struct exit_record *e)
{
    uint32_t leaf = (uint32_t)v->regs.rax, subleaf = (uint32_t)v->regs.rcx;
    const struct cpuid_answer *a = cpuid_cache_find(&v->vm->cpuid, leaf, subleaf);
    if (a && !a->needs) { /* the same for every vCPU: most leaves */
        v->regs.rax = a->base[0];
        v->regs.rbx = a->base[1];
        v->regs.rcx = a->base[2];
        v->regs.rdx = a->base[3];
    } else {
        cpuid_for_vcpu(v, a, leaf, subleaf);
    }
    vcpu_skip_instruction(v, e);
}

/* The hypercall, past its instruction. Inline, as handle_cpuid. */
static inline void handle_hypercall(struct vcpu *v, const struct exit_record *e)
{
    if (vcpu_skip_instruction(v, e))
        return;
    v->regs.rax = vmm_hypercall(v, e->hypercall.cpl);
}

/* Port I/O, one value at a time. Inline, as handle_cpuid. */
static inline void handle_io(struct vcpu *v, const struct exit_record *e)
{
    if (e->io.string) {
        vm_fail(v, "bad-state", "string I/O (INS/OUTS) on port 0x%x is not supported", e->io.port);
        return;
    }
    uint32_t mask = e->io.size == 4 ? 0xffffffffu : (1u << (8 * e->io.size)) - 1;
    if (e->io.in) {
        uint32_t value = io_read(v->vm, e->io.port, e->io.size) & mask;
        if (e->io.size == 4)
            v->regs.rax = value; /* a 32-bit write zero-extends */
        else
            v->regs.rax = (v->regs.rax & ~(uint64_t)mask) | value;
    } else {
        io_write(v->vm, e->io.port, e->io.size, (uint32_t)v->regs.rax & mask);
    }
    vcpu_skip_instruction(v, e);
}

#endif

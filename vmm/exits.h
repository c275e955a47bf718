/* The common exit dispatcher (handlers indexed by enum exit_reason). */
#ifndef POLLUX_VMM_EXITS_H
#define POLLUX_VMM_EXITS_H

#include "arch/x86/vectors.h"
#include "vmm/cpuid_cache.h"
#include "vmm/guest_access.h"
#include "vmm/hypercall.h"
#include "vmm/io.h"
#include "vmm/msr.h"
#include "vmm/vm.h"

void handle_exit(struct vcpu *v, const struct exit_record *e);

/* The handlers the exit fast path (vmm/fastpath_exit.h) calls directly, without the table. */
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
    /*
     * By access size, 1, 2 or 4 (up to 8 from a decoder's bits, never from a
     * CPU): the bits it moves, and what of RAX an IN keeps (IN EAX zero-extends).
     */
    static const uint32_t moved[9] = {[1] = 0xff, [2] = 0xffff, [4] = 0xffffffffu};
    static const uint64_t kept[9] = {[1] = ~0xffull, [2] = ~0xffffull};
    if (e->io.string) {
        vm_fail(v, "bad-state", "string I/O (INS/OUTS) on port 0x%x is not supported", e->io.port);
        return;
    }
    unsigned size = e->io.size;
    if (e->io.in)
        v->regs.rax = (v->regs.rax & kept[size]) | (io_read(v->vm, e->io.port, size) & moved[size]);
    else
        io_write(v->vm, e->io.port, size, (uint32_t)v->regs.rax & moved[size]);
    vcpu_skip_instruction(v, e);
}

/* RDMSR. Inline, as handle_cpuid. */
static inline void handle_msr_read(struct vcpu *v, const struct exit_record *e)
{
    uint64_t value;
    if (msr_read(v, (uint32_t)v->regs.rcx, &value)) {
        virt->inject_exception(v, VECTOR_GP, true, 0);
        return;
    }
    v->regs.rax = (uint32_t)value;
    v->regs.rdx = value >> 32;
    vcpu_skip_instruction(v, e);
}

#endif

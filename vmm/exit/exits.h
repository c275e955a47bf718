/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The common exit dispatcher (handlers indexed by enum exit_reason), and
 * EXIT_HANDLERS, the list of the common exits that generates both its
 * table (vmm/exit/exits.c) and the exit fast path's switch (vmm/exit/fastpath_exit.h).
 */
#ifndef POLLUX_VMM_EXIT_EXITS_H
#define POLLUX_VMM_EXIT_EXITS_H

#include "arch/x86/vectors.h"
#include "vmm/exit/cpuid_cache.h"
#include "vmm/exit/guest_access.h"
#include "vmm/exit/hypercall.h"
#include "vmm/exit/io.h"
#include "vmm/exit/msr.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/dev/vlapic_dev.h"
#include "vmm/vm.h"

void handle_exit(struct vcpu *v, const struct exit_record *e);

/*
 * The common exits, written down once. SLOW(reason, handler): the full path
 * calls handler. FAST(reason, handler, when, fast, then): the full path
 * calls handler; the fast path, where `when` holds (v and e in scope),
 * calls fast (inline or extern here: the vendor's loop inlines the fast
 * path) and answers `then` (enum fastpath_result; after_apic_write is
 * vmm/exit/fastpath_exit.h's); where it does not, FASTPATH_NOT_MINE. A reason
 * not listed stops the VM (handle_unknown).
 *
 * HLT: the fast path takes it only when the event that ends it is pending
 * already (the HLT is over, as the CPU would have it, with no halt, poll or
 * scheduler: RIP past it and the full path's entry delivers the event);
 * otherwise the full path halts (vcpu_halt looks again under the lock).
 * The nested page fault: only the vCPU's own xAPIC page's, straight to its
 * local APIC (no device-table lookup); handle_npf finds the others' device.
 */
#define EXIT_HANDLERS(SLOW, FAST)                                                                  \
    SLOW(EXIT_NONE, handle_nothing)                                                                \
    FAST(EXIT_CPUID, handle_cpuid, true, handle_cpuid, FASTPATH_REENTER)                           \
    FAST(EXIT_HLT, handle_hlt, vcpu_has_wake_event(v), handle_hlt_skip, FASTPATH_HANDLED)          \
    SLOW(EXIT_PAUSE, handle_pause)                                                                 \
    FAST(EXIT_IO, handle_io, !e->io.string && !io_may_wait(e), handle_io, FASTPATH_REENTER)        \
    FAST(EXIT_MSR_READ, handle_msr_read, true, handle_msr_read, FASTPATH_REENTER)                  \
    FAST(EXIT_MSR_WRITE, handle_msr_write, true, handle_msr_write, after_apic_write(v))            \
    FAST(EXIT_NESTED_PAGE_FAULT, handle_npf, xapic_page_access(v, e), vlapic_dev_mmio,             \
         e->npf.write ? after_apic_write(v) : FASTPATH_REENTER)                                    \
    FAST(EXIT_HYPERCALL, handle_hypercall, (uint32_t)v->hw.regs.rax == HC_NOP, handle_hypercall,   \
         FASTPATH_REENTER)                                                                         \
    SLOW(EXIT_EXTERNAL_INTERRUPT, handle_nothing) /* taken by the host on the way out */           \
    SLOW(EXIT_NMI, handle_nothing)                                                                 \
    SLOW(EXIT_INTERRUPT_WINDOW, handle_nothing) /* the loop injects before the next entry */       \
    SLOW(EXIT_PREEMPTION_TIMER, handle_nothing) /* the slice check follows every exit */           \
    SLOW(EXIT_IDLE_HLT, handle_hlt)                                                                \
    SLOW(EXIT_SHUTDOWN, handle_shutdown)                                                           \
    SLOW(EXIT_INVD, handle_skip) /* guest memory is write-back: nothing to write back */           \
    SLOW(EXIT_WBINVD, handle_skip)                                                                 \
    SLOW(EXIT_XSETBV, handle_xsetbv)                                                               \
    FAST(EXIT_CR8, handle_cr8, true, handle_cr8,                                                   \
         e->cr8.write ? after_apic_write(v) : FASTPATH_REENTER)                                    \
    SLOW(EXIT_UNDEFINED, handle_undefined)                                                         \
    SLOW(EXIT_ENTRY_FAILED, handle_entry_failed)

/* The handlers the exit fast path (vmm/exit/fastpath_exit.h) calls directly, without the table. */
void handle_msr_write(struct vcpu *v, const struct exit_record *e);
void handle_cr8(struct vcpu *v, const struct exit_record *e);
void handle_npf(struct vcpu *v, const struct exit_record *e);
/*
 * A nested page fault inside v's xAPIC page: decoded here and handed to v's
 * lapic device (vmm/dev/lapic.c) without a lookup, for the fast path and handle_npf.
 */
void vlapic_dev_mmio(struct vcpu *v, const struct exit_record *e);

/* Past the instruction, nothing else (INVD, WBINVD; HLT in the fast path). */
static inline void handle_skip(struct vcpu *v, const struct exit_record *e)
{
    vcpu_skip_instruction(v, e);
}

/* HLT in the fast path, an event pending already: the halt is over before it began. */
static inline void handle_hlt_skip(struct vcpu *v, const struct exit_record *e)
{
    vcpu_kick_consumed(v);
    vcpu_skip_instruction(v, e);
}

/* What pollux answers beyond its per-VM table: the per-vCPU bits, or the filter in full. */
void cpuid_for_vcpu(struct vcpu *v, const struct cpuid_answer *a, uint32_t leaf, uint32_t subleaf);

/* CPUID from the VM's table. Inline: the fast path's commonest exit, in the vendor's loop. */
static inline void handle_cpuid(struct vcpu *v, const struct exit_record *e)
{
    uint32_t leaf = (uint32_t)v->hw.regs.rax, subleaf = (uint32_t)v->hw.regs.rcx;
    const struct cpuid_answer *a = cpuid_cache_find(&v->vm->cpuid, leaf, subleaf);
    if (a && !a->needs) { /* the same for every vCPU: most leaves */
        v->hw.regs.rax = a->base[0];
        v->hw.regs.rbx = a->base[1];
        v->hw.regs.rcx = a->base[2];
        v->hw.regs.rdx = a->base[3];
    } else {
        cpuid_for_vcpu(v, a, leaf, subleaf);
    }
    vcpu_skip_instruction(v, e);
}

/* The hypercall, then past it (KVM's order) unless it waits. Inline, as handle_cpuid. */
static inline void handle_hypercall(struct vcpu *v, const struct exit_record *e)
{
    bool again = false;
    unsigned long ret = vmm_hypercall(v, e->hypercall.cpl, &again);
    if (again) {
        vcpu_wait_console(v);
        return;
    }
    if (vcpu_skip_instruction(v, e))
        return;
    v->hw.regs.rax = ret;
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
    if (e->io.in) {
        v->hw.regs.rax =
            (v->hw.regs.rax & kept[size]) | (io_read(v, e->io.port, size) & moved[size]);
    } else if (!io_write(v, e->io.port, size, (uint32_t)v->hw.regs.rax & moved[size])) {
        vcpu_wait_console(v); /* the OUT runs again after */
        return;
    }
    vcpu_skip_instruction(v, e);
}

/* RDMSR. Inline, as handle_cpuid. */
static inline void handle_msr_read(struct vcpu *v, const struct exit_record *e)
{
    uint64_t value;
    if (msr_read(v, (uint32_t)v->hw.regs.rcx, &value)) {
        virt->inject_exception(&v->hw, VECTOR_GP, true, 0);
        return;
    }
    v->hw.regs.rax = (uint32_t)value;
    v->hw.regs.rdx = value >> 32;
    vcpu_skip_instruction(v, e);
}

#endif

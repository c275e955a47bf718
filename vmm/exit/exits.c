/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The common exit dispatcher: one handler per exit reason, vendor-neutral.
 * Handlers that emulate an instruction advance RIP past it; anything a
 * guest does that pollux cannot honour stops that guest's VM only.
 */
#include "vmm/exit/exits.h"

#include "arch/x86/fpu.h"
#include "arch/x86/guest_regs.h"
#include "arch/x86/lapic.h"
#include "arch/x86/regs.h"
#include "arch/x86/tsc.h"
#include "vmm/exit/cpu_model.h"
#include "vmm/exit/guest_access.h"
#include "vmm/exit/hypercall.h"
#include "vmm/exit/io.h"
#include "vmm/exit/msr.h"
#include "vmm/vcpu/pause.h"
#include "vmm/dev/vm_devices.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/dev/vlapic_dev.h"

typedef void (*exit_handler)(struct vcpu *v, const struct exit_record *e);

static void handle_nothing(struct vcpu *v, const struct exit_record *e)
{
    (void)v;
    (void)e;
}

void cpuid_for_vcpu(struct vcpu *v, const struct cpuid_answer *a, uint32_t leaf, uint32_t subleaf)
{
    struct cpuid_regs r;
    if (a) {
        struct cpuid_vcpu_inputs in = {.vcpu_id = v->hw.id};
        if (a->needs & CPUID_NEEDS_CR4)
            in.guest_cr4 = vcpu_mode(v)->cr4;
        if (a->needs & CPUID_NEEDS_APIC)
            in.apic_enabled = vlapic_enabled(&v->lapic);
        r = cpuid_answer_for(a, &in);
    } else {
        struct cpuid_view view;
        cpu_model_view(&view);
        view.vcpu_id = v->hw.id;
        view.nvcpus = v->vm->nvcpus;
        view.kvm_features = v->vm->kvm_features;
        view.guest_cr4 = vcpu_mode(v)->cr4;
        view.apic_enabled = vlapic_enabled(&v->lapic);
        r = cpuid(leaf, subleaf);
        cpuid_filter(leaf, subleaf, &view, &r);
    }
    v->hw.regs.rax = r.eax;
    v->hw.regs.rbx = r.ebx;
    v->hw.regs.rcx = r.ecx;
    v->hw.regs.rdx = r.edx;
}

static void handle_pause(struct vcpu *v, const struct exit_record *e)
{
    vcpu_skip_instruction(v, e);
    pause_exit(v);
}

static void handle_hlt(struct vcpu *v, const struct exit_record *e)
{
    if (vcpu_skip_instruction(v, e) == 0)
        vcpu_halt(v);
}

void handle_msr_write(struct vcpu *v, const struct exit_record *e)
{
    uint64_t value = ((v->hw.regs.rdx & 0xffffffffu) << 32) | (v->hw.regs.rax & 0xffffffffu);
    if (msr_write(v, (uint32_t)v->hw.regs.rcx, value)) {
        virt->inject_exception(&v->hw, VECTOR_GP, true, 0);
        return;
    }
    vcpu_skip_instruction(v, e);
}

static void handle_xsetbv(struct vcpu *v, const struct exit_record *e)
{
    const struct guest_mode *m = vcpu_mode(v);
    if (!(m->cr4 & CR4_OSXSAVE)) {
        virt->inject_exception(&v->hw, VECTOR_UD, false, 0);
        return;
    }
    uint64_t value = ((v->hw.regs.rdx & 0xffffffffu) << 32) | (v->hw.regs.rax & 0xffffffffu);
    if (m->cpl != 0 || (uint32_t)v->hw.regs.rcx != 0 || !fpu_xcr0_valid(value)) {
        virt->inject_exception(&v->hw, VECTOR_GP, true, 0);
        return;
    }
    fpu_set_guest_xcr0(&v->fpu, value);
    vcpu_skip_instruction(v, e);
}

/*
 * The register and length of a MOV to CR8 whose exit named no register (SVM
 * without decode assists), from its bytes at CS:RIP. False (the VM stopped)
 * when they are not such a MOV.
 */
static bool decode_mov_to_cr8(struct vcpu *v, struct exit_record *e)
{
    uint8_t bytes[INSN_MAX];
    int mode;
    uint64_t la;
    size_t avail = vcpu_fetch_insn(v, bytes, &mode, &la);
    int n = insn_mov_to_cr8(bytes, avail, mode, &e->cr8.gpr);
    if (n < 0) {
        vm_fail(v, "bad-state", "cannot decode the MOV to CR8 at 0x%lx", la);
        return false;
    }
    e->insn_len = (unsigned)n;
    return true;
}

/* CR8 is TPR[7:4] of the guest's local APIC. */
void handle_cr8(struct vcpu *v, const struct exit_record *e)
{
    struct exit_record decoded;
    if (e->cr8.gpr == EXIT_GPR_UNKNOWN) {
        decoded = *e;
        if (!decode_mov_to_cr8(v, &decoded))
            return;
        e = &decoded;
    }
    uint64_t *reg = guest_gpr(&v->hw.regs, e->cr8.gpr);
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    bool fault = e->cr8.write && (*reg >> 4);
    if (!fault) {
        if (e->cr8.write)
            v->lapic.tpr = (uint32_t)(*reg & 0xf) << 4;
        else
            *reg = (v->lapic.tpr >> 4) & 0xf;
    }
    spin_unlock_irqrestore(&v->se.lock, flags);
    if (fault)
        virt->inject_exception(&v->hw, VECTOR_GP, true, 0);
    else
        vcpu_skip_instruction(v, e);
}

static void handle_undefined(struct vcpu *v, const struct exit_record *e)
{
    (void)e;
    virt->inject_exception(&v->hw, VECTOR_UD, false, 0);
}

static void handle_shutdown(struct vcpu *v, const struct exit_record *e)
{
    (void)e;
    vm_fail(v, "triple-fault", "triple fault (shutdown)");
}

static void handle_entry_failed(struct vcpu *v, const struct exit_record *e)
{
    vm_fail(v, "bad-state", "%s (0x%lx)", e->fail.what, e->fail.detail);
}

static void handle_unknown(struct vcpu *v, const struct exit_record *e)
{
    vm_fail(v, "bad-state", "unexpected exit %s (vendor code 0x%lx)", exit_reason_name(e->reason),
            e->vendor_code);
}

/* The table, from the list (vmm/exit/exits.h): every listed reason's full-path handler. */
#define TABLE_SLOW(reason, handler)                   [reason] = handler,
#define TABLE_FAST(reason, handler, when, fast, then) [reason] = handler,
static const exit_handler handlers[EXIT_REASON_COUNT] = {EXIT_HANDLERS(TABLE_SLOW, TABLE_FAST)};
#undef TABLE_SLOW
#undef TABLE_FAST

void handle_exit(struct vcpu *v, const struct exit_record *e)
{
    exit_handler h = (unsigned)e->reason < EXIT_REASON_COUNT ? handlers[e->reason] : 0;
    (h ? h : handle_unknown)(v, e);
}

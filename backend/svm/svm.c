/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * AMD SVM backend behind the vendor seam (arch/x86/virt.h): enabling SVM on
 * each CPU, entering and leaving the guest (the exit path, kept in this one
 * file), and the ops table. The other files hold one concept each: vCPU
 * life and reset (svm_vcpu.c), nested paging (npt.c), guest control state
 * (svm_state.c), MSRs (svm_msr.c), events (svm_events.c), exit decoding
 * (svm_exit.c), and the pure rules of V_IRQ (svm_intr.c) and of ASIDs and
 * the pause filter (svm_sched.c).
 */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/exit_floor.h"
#include "arch/x86/mm.h"
#include "arch/x86/pagetable.h"
#include "arch/x86/percpu.h"
#include "arch/x86/vectors.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcb.h"
#include "backend/backend.h"
#include "backend/svm/npt.h"
#include "backend/svm/svm_backend.h"
#include "backend/svm/svm_events.h"
#include "backend/svm/svm_exit.h"
#include "backend/svm/svm_intr.h"
#include "backend/svm/svm_msr.h"
#include "backend/svm/svm_sched.h"
#include "backend/svm/svm_state.h"
#include "backend/svm/svm_vcpu.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/string.h"
#include "vmm/exit/fastpath_exit.h"
#include "vmm/vm.h"

struct svm_setup svm_setup = {.hlt_mode = HLT_INTERCEPT_PLAIN, .virq_check = SVM_VIRQ_UNPROBED};

/*
 * Only the entry and exit read these: file statics, whose address never
 * escapes, so the exit path may read them after its stores through pointers.
 */
static bool has_nrips;

/* ------------------------------------------------------------ enable */

/*
 * One VMRUN of a guest that runs STI; NOP; HLT from IF=0, with V_IRQ pending
 * at V_INTR_PRIO prio and V_TPR tpr and the VINTR intercept on: the CPU
 * exits VINTR if it would deliver the virtual interrupt once STI's shadow
 * ends, else HLT. (Starting from IF=1 would test less than pollux needs:
 * Bochs 2.7 does not look at a V_IRQ set at VMRUN until the guest changes
 * IF or CR8.) Nested paging and paging off: host-physical addresses.
 */
static bool virq_delivers(struct svm_cpu *c, struct vmcb *vmcb, uint64_t code, uint64_t rflags,
                          unsigned prio, unsigned tpr)
{
    memset(vmcb, 0, sizeof(*vmcb));
    vmcb->intercept_misc1 = SVM_INTERCEPT_INTR | SVM_INTERCEPT_NMI | SVM_INTERCEPT_VINTR |
                            SVM_INTERCEPT_HLT | SVM_INTERCEPT_SHUTDOWN;
    vmcb->intercept_misc2 = SVM_INTERCEPT_VMRUN;
    vmcb->iopm_base_pa = svm_setup.iopm_pa;
    vmcb->msrpm_base_pa = svm_setup.msrpm_pa;
    vmcb->asid = 1;
    vmcb->tlb_control = SVM_TLB_FLUSH_ALL;
    vmcb->vintr = SVM_VINTR_MASKING | SVM_VINTR_V_IRQ | ((uint64_t)prio << SVM_VINTR_PRIO_SHIFT) |
                  tpr | (0x80ull << SVM_VINTR_VECTOR_SHIFT);
    svm_vmcb_flat_protected(vmcb);
    svm_vmcb_reset_state(vmcb);
    vmcb->rflags = rflags;
    vmcb->rip = code;
    struct guest_regs regs = {0};
    uint64_t flags = irq_save();
    clgi();
    svm_vmrun(&regs, (uint64_t)vmcb, c->host_vmcb_pa);
    stgi();
    irq_restore(flags);
    return (uint32_t)vmcb->exit_code == SVM_EXIT_VINTR;
}

/* How this CPU compares V_INTR_PRIO with V_TPR (svm_intr.h); the ASIDs are not in use yet. */
static enum svm_virq_check probe_virq(struct svm_cpu *c)
{
    struct vmcb *vmcb = page_alloc_zeroed(1);
    uint8_t *code = page_alloc_zeroed(1);
    enum svm_virq_check r = SVM_VIRQ_UNPROBED;
    /* The probe guest runs in 32-bit protected mode: its code must lie below 4 GiB. */
    if (vmcb && code && (uint64_t)code < (1ull << 32) - PAGE_SIZE) {
        code[0] = 0xfb; /* STI */
        code[1] = 0x90; /* NOP */
        code[2] = 0xf4; /* HLT */
        bool above = virq_delivers(c, vmcb, (uint64_t)code, 0x2, 3, 2);
        bool equal = virq_delivers(c, vmcb, (uint64_t)code, 0x2, 2, 2);
        r = svm_virq_classify(above, equal);
        /* NOP; HLT with IF=1 at VMRUN: is a V_IRQ pending at entry delivered at once? */
        virt_features.virq_at_entry =
            above && virq_delivers(c, vmcb, (uint64_t)code + 1, 0x2 | RFLAGS_IF, 3, 2);
    }
    if (vmcb)
        pmm_free(&host_pmm, (uint64_t)vmcb, 1);
    if (code)
        pmm_free(&host_pmm, (uint64_t)code, 1);
    return r;
}

static int svm_cpu_enable(char *err, size_t errlen)
{
    struct percpu *p = this_cpu();
    struct svm_cpu *c = page_alloc_zeroed(1);
    void *hsave = page_alloc_zeroed(1);
    void *host_vmcb = page_alloc_zeroed(1);
    if (!c || !hsave || !host_vmcb) {
        snprintf(err, errlen, "out of memory for SVM host state");
        return -1;
    }
    bool first = !svm_setup.iopm_pa;
    if (first) {
        /* One all-ones bitmap pair for every VM: every port and MSR exits. */
        uint8_t *iopm = page_alloc_zeroed(SVM_IOPM_PAGES);
        uint8_t *msrpm = page_alloc_zeroed(SVM_MSRPM_PAGES);
        if (!iopm || !msrpm) {
            snprintf(err, errlen, "out of memory for the SVM permission maps");
            return -1;
        }
        memset(iopm, 0xff, SVM_IOPM_PAGES * PAGE_SIZE);
        memset(msrpm, 0xff, SVM_MSRPM_PAGES * PAGE_SIZE);
        svm_setup.msrpm_pa = (uint64_t)msrpm;
        has_nrips = virt_features.nrips;
        __atomic_store_n(&svm_setup.iopm_pa, (uint64_t)iopm, __ATOMIC_RELEASE);
    }
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SVME);
    if (!(rdmsr(MSR_EFER) & EFER_SVME)) {
        snprintf(err, errlen, "EFER.SVME does not stick");
        return -1;
    }
    c->hsave_pa = (uint64_t)hsave;
    c->host_vmcb_pa = (uint64_t)host_vmcb;
    c->asids = svm_asid_cpu_init(virt_features.svm_asids);
    c->host_cr0 = read_cr0();
    wrmsr(MSR_VM_HSAVE_PA, c->hsave_pa);
    p->virt = c;
    if (first) {
        svm_setup.virq_check = probe_virq(c);
        virt_features.virq = svm_virq_check_name(svm_setup.virq_check);
        kprintf("pollux: V_IRQ priority check: %s, %s at entry; pending interrupts %s\n",
                virt_features.virq, virt_features.virq_at_entry ? "taken" : "not taken",
                svm_setup.virq_check == SVM_VIRQ_NONE ? "injected at entry only"
                : virt_features.virq_at_entry
                    ? "offered through V_IRQ"
                    : "offered through V_IRQ when the guest cannot take them at entry");
    }
    return 0;
}

/* ------------------------------------------------------------ entry and exit */

static void assign_asid(struct svm_vcpu *s, struct svm_cpu *c, unsigned cpu)
{
    if (svm_asid_current(&s->asid, &c->asids, cpu))
        return;
    struct svm_asid_entry e = svm_asid_assign(&s->asid, &c->asids, cpu);
    if (e.fresh) {
        s->vmcb->asid = s->asid.asid;
        s->vmcb->tlb_control = e.tlb_control;
    }
    if (e.clear_clean)
        s->vmcb->clean_bits = 0;
}

/*
 * QEMU 7.2's #VMEXIT can leave the guest's CR0 in the host (the proof is in
 * docs/robustness.md, "Nested paging off after a #VMEXIT"). do_vmexit loads
 * the host's CR0 while EFER and CR4 are still the guest's, and
 * cpu_x86_update_cr0 returns early, storing nothing, when that EFER has LME
 * and that CR4 lacks PAE: a guest between setting EFER.LME and turning
 * paging on. The host then runs with CR0.PG clear in QEMU's model, which
 * pollux's identity map hides, and the next VMRUN here saves that CR0 as the
 * host's and walks the nested page table as "no paging": every guest on this
 * CPU from then on reads and writes host-physical memory as its own. A real
 * CPU loads CR0, CR4 and EFER together. So after an exit from that guest
 * state, CR0 is checked and put back (a CR0 write, which also flushes the
 * TLB the skipped CR3 load did not). Two loads and a branch on every exit;
 * a read of CR0 only at a mode switch, where it is a no-op elsewhere.
 */
static inline __attribute__((always_inline)) void svm_keep_host_cr0(struct svm_cpu *c,
                                                                    const struct vmcb *vmcb)
{
    if (__builtin_expect((vmcb->efer & EFER_LME) && !(vmcb->cr0 & CR0_PG), 0) &&
        read_cr0() != c->host_cr0) {
        write_cr0(c->host_cr0);
        if (c->cr0_restores++ == 0)
            kprintf("pollux: cpu %u: a #VMEXIT left the guest's CR0 in the host (QEMU 7.2, "
                    "docs/robustness.md); restored\n",
                    this_cpu()->cpu);
    }
}

#ifdef POLLUX_EXIT_FLOOR
/* One of the floor's operations (arch/x86/exit_floor.h), done: the guest goes on at once. */
static bool floor_exit(struct vcpu *v, struct vmcb *vmcb)
{
    switch ((uint32_t)vmcb->exit_code) {
    case SVM_EXIT_CPUID:
        if ((uint32_t)vmcb->rax != FLOOR_CPUID_LEAF)
            return false;
        floor_cpuid(&v->hw.regs, 0x68747541u, 0x69746e65u, 0x444d4163u); /* AuthenticAMD */
        vmcb->rax = v->hw.regs.rax;
        vmcb->rip += 2;
        return true;
    case SVM_EXIT_VMMCALL:
        if ((uint32_t)vmcb->rax != FLOOR_HC_NOP)
            return false;
        vmcb->rax = 0;
        vmcb->rip += 3;
        return true;
    case SVM_EXIT_IOIO:
        if ((uint16_t)(vmcb->exit_info1 >> 16) != FLOOR_PORT || !(vmcb->exit_info1 & SVM_IOIO_IN))
            return false;
        vmcb->rax = (vmcb->rax & ~0xffull) | FLOOR_PORT_VALUE;
        vmcb->rip = vmcb->exit_info2;
        return true;
    case SVM_EXIT_MSR:
        if (vmcb->exit_info1 || (uint32_t)v->hw.regs.rcx != FLOOR_MSR)
            return false;
        vmcb->rax = (uint32_t)FLOOR_MSR_VALUE;
        v->hw.regs.rdx = FLOOR_MSR_VALUE >> 32;
        vmcb->rip += 2;
        return true;
    default:
        return false;
    }
}

/*
 * The floor's round trips, in a frame of their own: the floor's cost stays
 * its own, whatever the real exit path around it (inlined twice into
 * svm_vcpu_run) becomes.
 */
static __attribute__((noinline)) void floor_loop(struct svm_cpu *c, struct vcpu *v,
                                                 struct vmcb *vmcb, uint64_t host_vmcb_pa)
{
    while (floor_exit(v, vmcb)) {
        svm_vmrun(&v->hw.regs, (uint64_t)vmcb, host_vmcb_pa);
        svm_keep_host_cr0(c, vmcb);
    }
}
#endif

/*
 * One VMRUN of v and what its exit needs before anyone looks at it: the
 * registers back in v->hw.regs, the V_IRQ and V_TPR bookkeeping, pollux's own
 * NMI-window exits (IRET, the single step) turned into EXIT_NONE, e decoded.
 * GIF is clear around it; the guest's SPEC_CTRL is in force only inside.
 * Inline twice in svm_vcpu_run: the first entry, and the fast path's
 * re-entries (reentry), which skip what only a full entry can need.
 */
static inline __attribute__((always_inline)) void
svm_enter_exit(struct svm_cpu *c, struct vcpu *v, struct svm_vcpu *s, uint64_t host_vmcb_pa,
               struct exit_record *e, bool reentry)
{
    struct vmcb *vmcb = s->vmcb;
    vmcb->rax = v->hw.regs.rax;
    vmcb->rsp = v->hw.regs.rsp;
    vmcb->rip = v->hw.regs.rip;
    vmcb->rflags = v->hw.regs.rflags;
    /*
     * CR8 is TPR[7:4] of the guest's local APIC. MOV CR8 reads and writes
     * V_TPR without an exit, so V_TPR carries the TPR in and a changed V_TPR
     * carries it back: the xAPIC register, the x2APIC MSR and CR8 stay one
     * value. Only this vCPU changes its TPR, on its own CPU.
     */
    uint64_t v_tpr = (v->lapic.tpr >> 4) & SVM_VINTR_V_TPR;
    vmcb->vintr = (vmcb->vintr & ~SVM_VINTR_V_TPR) | v_tpr;

    guest_msrs_enter(&v->msrs);
    irq_enable(); /* GIF is clear: host interrupts wait for the exit (INTR) */
    svm_vmrun(&v->hw.regs, (uint64_t)vmcb, host_vmcb_pa);
    svm_keep_host_cr0(c, vmcb);
#ifdef POLLUX_EXIT_FLOOR
    floor_loop(c, v, vmcb, host_vmcb_pa);
#endif
    irq_disable();
    guest_msrs_exit(&v->msrs);

    /*
     * A re-entry (reentry) follows a plain entry (svm_entry_is_plain): no ASID
     * flush asked, nothing injected or offered, no NMI-window step. What
     * only those need is skipped after it.
     */
    if (!reentry)
        vmcb->tlb_control = 0;
    /* Nothing offered and nothing interrupted (the common case): nothing to look at. */
    if ((!reentry && s->offered >= 0) || (vmcb->exit_int_info & SVM_EVTINJ_VALID)) {
        struct svm_vintr_exit vx =
            svm_vintr_after_exit(s->offered, vmcb->vintr, vmcb->exit_int_info);
        bool offered = s->offered >= 0;
        s->offered = vx.still_offered;
        s->reinject = vx.reinject;
        if (offered) {
            uint64_t flags = spin_lock_irqsave(&v->se.lock);
            vcpu_offer_end(v, vx.taken);
            spin_unlock_irqrestore(&v->se.lock, flags);
        }
    }
    if ((vmcb->vintr & SVM_VINTR_V_TPR) != v_tpr) {
        uint64_t flags = spin_lock_irqsave(&v->se.lock);
        v->lapic.tpr = (uint32_t)(vmcb->vintr & SVM_VINTR_V_TPR) << 4;
        spin_unlock_irqrestore(&v->se.lock, flags);
    }
    v->hw.regs.rax = vmcb->rax;
    v->hw.regs.rsp = vmcb->rsp;
    v->hw.regs.rip = vmcb->rip;
    v->hw.regs.rflags = vmcb->rflags;
    if (!reentry)
        vmcb->event_inj = 0;
    if (s->iret_seen && vmcb->rip != s->iret_rip) {
        s->iret_seen = false;
        s->nmi_masked = false; /* the handler's IRET has completed */
    }
    if (!reentry && s->nmi_step && (uint32_t)vmcb->exit_code == SVM_EXIT_EXCP_BASE + VECTOR_DB) {
        s->nmi_step = false;
        vmcb->intercept_exceptions &= ~(1u << VECTOR_DB);
        if (s->nmi_step_guest_tf) {
            /* The guest's own single step: its #DB, with the DR6 the CPU wrote. */
            svm_inject_exception(&v->hw, VECTOR_DB, false, 0);
        } else {
            vmcb->dr6 &= ~DR6_BS;
            if (s->nmi_step_restore_tf)
                v->hw.regs.rflags &= ~(uint64_t)RFLAGS_TF;
        }
        *e = (struct exit_record){
            .reason = EXIT_NONE, .vendor_code = vmcb->exit_code, .insn_kind = -1};
        return;
    }
    if ((uint32_t)vmcb->exit_code == SVM_EXIT_IRET) {
        vmcb->intercept_misc1 &= ~SVM_INTERCEPT_IRET;
        s->iret_seen = true;
        s->iret_rip = vmcb->rip;
        *e = (struct exit_record){
            .reason = EXIT_NONE, .vendor_code = SVM_EXIT_IRET, .insn_kind = -1};
        return;
    }
    svm_decode_exit(vmcb, has_nrips, e);
    if (e->reason == EXIT_ENTRY_FAILED) {
        const char *why = svm_check_controls(vmcb, virt_features.npt, virt_features.flush_by_asid,
                                             virt_features.phys_bits);
        if (why)
            e->fail.what = why;
    }
}

static enum fastpath_result svm_vcpu_run(struct virt_vcpu *hw, struct exit_record *e)
{
    struct vcpu *v = vcpu_of(hw);
    struct percpu *p = this_cpu();
    struct svm_cpu *c = p->virt;
    struct svm_vcpu *s = svm(&v->hw);
    struct vmcb *vmcb = s->vmcb;

    assign_asid(s, c, p->cpu);
    if (!(vmcb->event_inj & SVM_EVTINJ_VALID) && (s->reinject & SVM_EVTINJ_VALID))
        vmcb->event_inj = s->reinject;
    s->reinject = 0;
    clgi();
    /*
     * The fast path re-enters only after an exit that left nothing to inject,
     * offer or re-inject (svm_entry_is_plain), on this CPU: the entry work above
     * has nothing to do for it.
     */
    const uint64_t host_vmcb_pa = c->host_vmcb_pa;
    /* V_IRQ set at this entry (a vector or the window's); a fast-path re-entry has none. */
    s->virq_at_entry = vmcb->vintr & SVM_VINTR_V_IRQ;
    svm_enter_exit(c, v, s, host_vmcb_pa, e, false);
    enum fastpath_result r;
    while ((r = fastpath_exit(v, e)) == FASTPATH_REENTER) {
        if (!svm_entry_is_plain(s)) {
            r = FASTPATH_HANDLED;
            break;
        }
        fastpath_reentry(v, e);
        svm_enter_exit(c, v, s, host_vmcb_pa, e, true);
    }
    irq_enable();
    stgi(); /* host interrupts that forced the exit are taken here */
    irq_disable();
    return r;
}

/* ------------------------------------------------------------ settings for the next entry */

static void svm_set_hlt_intercept(enum hlt_intercept mode)
{
    svm_setup.hlt_mode = mode;
}

static enum pause_hw svm_pause_hw(void)
{
    return svm_pause_hw_of(&virt_features);
}

static void svm_set_pause_exiting(struct virt_vcpu *v, enum pause_exiting mode, uint32_t window,
                                  uint32_t gap)
{
    struct svm_vcpu *s = svm(v);
    s->pause_mode = mode;
    s->pause_window = window;
    s->pause_gap = gap;
    svm_apply_pause(s);
}

static void svm_set_tsc_offset(struct virt_vcpu *v)
{
    svm(v)->vmcb->tsc_offset = v->tsc_offset;
}

/*
 * VMRUN loads the guest's CR2 from the VMCB (APM vol. 2, "VMRUN"), but
 * Bochs's does not (SvmEnterLoadCheckGuestState reads the field and never
 * sets CR2), so there a vCPU would run on with the CR2 of the one before it
 * on this CPU. The CPU's CR2 is put right when a vCPU takes the CPU; its
 * exits keep it there, and #VMEXIT saves it. On hardware VMRUN does the same.
 */
static void svm_vcpu_load(struct virt_vcpu *v)
{
    load_guest_cr2(svm(v)->vmcb->cr2);
}

static void svm_vcpu_unload(struct virt_vcpu *v)
{
    svm(v)->asid.cpu = -1; /* a new ASID, clean bits cleared, on the next CPU */
}

/*
 * TLB_CONTROL 3 flushes this guest's ASID at the next VMRUN (APM vol. 2,
 * "TLB Control"; needs FlushByASID); without it, a new ASID (KVM's
 * svm_flush_tlb_current does the same).
 */
static void svm_flush_guest_tlb(struct virt_vcpu *v)
{
    struct svm_vcpu *s = svm(v);
    uint8_t control = svm_flush_tlb_control(&virt_features);
    if (control != SVM_TLB_FLUSH_NEW_ASID)
        s->vmcb->tlb_control = control;
    else
        s->asid.generation = 0; /* matches no CPU's generation: a fresh ASID at entry */
}

static bool svm_set_preemption_timer(struct virt_vcpu *v, uint64_t tsc_deadline)
{
    (void)v;
    (void)tsc_deadline;
    return false;
}

const struct virt_ops svm_ops = {
    .name = "svm",
    .cpu_enable = svm_cpu_enable,
    .vm_init = svm_vm_init,
    .vm_map = svm_vm_map,
    .vm_destroy = svm_vm_destroy,
    .vcpu_create = svm_vcpu_create,
    .vcpu_destroy = svm_vcpu_destroy,
    .vcpu_reset_protected = svm_vcpu_reset_protected,
    .vcpu_run = svm_vcpu_run,
    .inject_exception = svm_inject_exception,
    .get_mode = svm_get_mode,
    .get_code_mode = svm_get_code_mode,
    .end_emulated_instruction = svm_end_emulated_instruction,
    .msr_read = svm_msr_read,
    .msr_write = svm_msr_write,
    .set_hlt_intercept = svm_set_hlt_intercept,
    .pause_hw = svm_pause_hw,
    .set_pause_exiting = svm_set_pause_exiting,
    .set_tsc_offset = svm_set_tsc_offset,
    .set_preemption_timer = svm_set_preemption_timer,
    .interrupt_allowed = svm_interrupt_allowed,
    .in_interrupt_shadow = svm_in_interrupt_shadow,
    .inject_interrupt = svm_inject_interrupt,
    .set_interrupt_window = svm_set_interrupt_window,
    .offer_interrupt = svm_offer_interrupt,
    .update_cr8_intercept = svm_update_cr8_intercept,
    .nmi_allowed = svm_nmi_allowed,
    .nmi_in_service = svm_nmi_in_service,
    .inject_nmi = svm_inject_nmi,
    .set_nmi_window = svm_set_nmi_window,
    .vcpu_reset_real = svm_vcpu_reset_real,
    .vcpu_load = svm_vcpu_load,
    .vcpu_unload = svm_vcpu_unload,
    .flush_guest_tlb = svm_flush_guest_tlb,
    .unload_to_move = false,
    .pause_backstop = true,
};

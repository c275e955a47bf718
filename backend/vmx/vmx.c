/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Intel VT-x backend behind the vendor seam (arch/x86/virt.h): enabling VMX
 * on each CPU, entering and leaving the guest (the exit path, kept in this
 * one file), and the ops table. The other vmx_*.c files hold one concept
 * each: the current VMCS, VM and vCPU life, guest control state, MSRs,
 * events, entry failures.
 */
#include "backend/vmx/vmx.h"

#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/exit_floor.h"
#include "arch/x86/mm.h"
#include "arch/x86/percpu.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/tsc.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcs.h"
#include "backend/backend.h"
#include "backend/vmx/vmx_backend.h"
#include "backend/vmx/vmx_controls.h"
#include "backend/vmx/vmx_entry_error.h"
#include "backend/vmx/vmx_events.h"
#include "backend/vmx/vmx_exit.h"
#include "backend/vmx/vmx_insn.h"
#include "backend/vmx/vmx_msr.h"
#include "backend/vmx/vmx_state.h"
#include "backend/vmx/vmx_timer.h"
#include "backend/vmx/vmx_vcpu.h"
#include "backend/vmx/vmx_vmcs.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/string.h"
#include "vmm/exit/fastpath_exit.h"
#include "vmm/vm.h"

#define HOST_IRQ_BACKSTOP_MS 1 /* see prepare_entry */

struct vmx_setup vmx;
static uint64_t backstop_tsc;     /* HOST_IRQ_BACKSTOP_MS in TSC ticks */
static uint64_t backstop_setting; /* the same as a preemption timer value; TIMER_OFF without it */
static struct spinlock setup_lock;
static int setup_state; /* 0 not yet, 1 done, -1 failed (setup_err says why) */
static char setup_err[160];

/* ------------------------------------------------------------ enable */

static void read_caps(struct vmx_caps *c)
{
    memset(c, 0, sizeof(*c));
    c->basic = rdmsr(MSR_VMX_BASIC);
    c->pin = rdmsr(MSR_VMX_PINBASED);
    c->proc = rdmsr(MSR_VMX_PROCBASED);
    c->exit = rdmsr(MSR_VMX_EXIT);
    c->entry = rdmsr(MSR_VMX_ENTRY);
    if (c->basic & VMX_BASIC_TRUE_CTLS) {
        c->true_pin = rdmsr(MSR_VMX_TRUE_PINBASED);
        c->true_proc = rdmsr(MSR_VMX_TRUE_PROCBASED);
        c->true_exit = rdmsr(MSR_VMX_TRUE_EXIT);
        c->true_entry = rdmsr(MSR_VMX_TRUE_ENTRY);
    }
    /* These MSRs exist only when the capability bits say so (#GP otherwise). */
    if ((c->proc >> 32) & PROC_SECONDARY) {
        c->proc2 = rdmsr(MSR_VMX_PROCBASED2);
        if ((c->proc2 >> 32) & (PROC2_EPT | PROC2_VPID))
            c->ept_vpid = rdmsr(MSR_VMX_EPT_VPID_CAP);
    }
    c->misc = rdmsr(MSR_VMX_MISC);
    c->cr0_fixed0 = rdmsr(MSR_VMX_CR0_FIXED0);
    c->cr0_fixed1 = rdmsr(MSR_VMX_CR0_FIXED1);
    c->cr4_fixed0 = rdmsr(MSR_VMX_CR4_FIXED0);
    c->cr4_fixed1 = rdmsr(MSR_VMX_CR4_FIXED1);
    bool sizes = cpuid(0x80000000, 0).eax >= 0x80000008;
    c->phys_bits = sizes ? cpuid(0x80000008, 0).eax & 0xff : 36;
    c->vaddr_bits = sizes ? (cpuid(0x80000008, 0).eax >> 8) & 0xff : 48;
}

/* Once, on the first CPU: capabilities, controls and the shared bitmaps. */
static int setup_once(char *err, size_t errlen)
{
    read_caps(&vmx.caps);
    if (vmx_derive_controls(&vmx.caps, &vmx.ctls, err, errlen))
        return -1;
    vmx.cr0_mask = vmx_cr0_mask(&vmx.caps);
    vmx.cr4_mask = vmx_cr4_mask(&vmx.caps);
    backstop_tsc = tsc_khz * HOST_IRQ_BACKSTOP_MS;
    backstop_setting = TIMER_OFF;
    if (vmx.ctls.available & VMX_OPT_PREEMPTION_TIMER)
        backstop_setting = vmx_timer_value(vmx_timer_left(0, 0, backstop_tsc),
                                           vmx.caps.misc & VMX_MISC_TIMER_RATE);

    /* One set of all-ones bitmaps for every VM: every port and every MSR access exits. */
    uint8_t *io = page_alloc_zeroed(2), *msr = page_alloc_zeroed(1);
    if (!io || !msr) {
        snprintf(err, errlen, "out of memory for the VMX bitmaps");
        return -1;
    }
    memset(io, 0xff, 2 * PAGE_SIZE);
    memset(msr, 0xff, PAGE_SIZE);
    vmx.io_bitmap_pa = (uint64_t)io;
    vmx.msr_bitmap_pa = (uint64_t)msr;

    char missing[160] = "";
    size_t used = 0;
    for (unsigned bit = 1; bit & VMX_OPT_ALL; bit <<= 1)
        if ((vmx.ctls.missing & bit) && used < sizeof(missing))
            used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%s",
                                     used ? ", " : "", vmx_optional_name(bit));
    kprintf("pollux: vmx: VMCS revision 0x%lx, PAUSE %s, preemption timer %s; unavailable: %s\n",
            (unsigned long)(vmx.caps.basic & VMX_BASIC_REVISION),
            (vmx.ctls.available & VMX_OPT_PLE)             ? "loop exiting (PLE)"
            : (vmx.ctls.available & VMX_OPT_PAUSE_EXITING) ? "exiting"
                                                           : "not intercepted",
            (vmx.ctls.available & VMX_OPT_PREEMPTION_TIMER) ? "yes" : "no",
            missing[0] ? missing : "nothing");
    return 0;
}

static int vmx_cpu_enable(char *err, size_t errlen)
{
    spin_lock(&setup_lock);
    if (!setup_state)
        setup_state = setup_once(setup_err, sizeof(setup_err)) ? -1 : 1;
    spin_unlock(&setup_lock);
    if (setup_state < 0) {
        snprintf(err, errlen, "%s", setup_err);
        return -1;
    }

    uint64_t fc = rdmsr(MSR_FEATURE_CONTROL);
    if (!(fc & FEATURE_CTL_LOCKED)) {
        wrmsr(MSR_FEATURE_CONTROL, fc | FEATURE_CTL_LOCKED | FEATURE_CTL_VMXON);
    } else if (!(fc & FEATURE_CTL_VMXON)) {
        snprintf(err, errlen,
                 "IA32_FEATURE_CONTROL is locked with VMXON outside SMX disabled (firmware "
                 "setting)");
        return -1;
    }
    struct vmx_cpu *c = page_alloc_zeroed(1);
    uint32_t *region = page_alloc_zeroed(1);
    if (!c || !region) {
        snprintf(err, errlen, "out of memory for the VMXON region");
        goto fail;
    }
    region[0] = (uint32_t)(vmx.caps.basic & VMX_BASIC_REVISION);
    write_cr0((read_cr0() | vmx.caps.cr0_fixed0) & vmx.caps.cr0_fixed1);
    write_cr4((read_cr4() | vmx.caps.cr4_fixed0) & vmx.caps.cr4_fixed1);
    if (!vmxon((uint64_t)region)) {
        snprintf(err, errlen, "VMXON failed (CR0 0x%lx, CR4 0x%lx)", (unsigned long)read_cr0(),
                 (unsigned long)read_cr4());
        goto fail;
    }
    for (unsigned i = 0; i < VMX_SYSCALL_MSRS; i++)
        c->host_syscall[i] = rdmsr(vmx_syscall_msrs[i]);
    c->vmxon_region = region;
    this_cpu()->virt = c;
    return 0;
fail:
    if (c)
        pmm_free(&host_pmm, (uint64_t)c, 1);
    if (region)
        pmm_free(&host_pmm, (uint64_t)region, 1);
    return -1;
}

/* ------------------------------------------------------------ entry and exit */

/* Arm (a value) or disarm (TIMER_OFF) the timer; VMCS current. */
static void apply_timer(struct vmx_vcpu *s, uint64_t setting)
{
    uint32_t pin = s->pin;
    if (setting != TIMER_OFF) {
        pin |= PIN_PREEMPTION_TIMER;
        if (setting != s->vmcs_timer) {
            vmwrite(VMCS_PREEMPTION_TIMER, setting);
            s->vmcs_timer = setting;
        }
    }
    if (pin != s->vmcs_pin)
        vmwrite(VMCS_PIN_CONTROLS, s->vmcs_pin = pin);
    s->timer_setting = setting;
}

/*
 * The preemption timer for an entry now. Bochs 2.7 evaluates interrupt
 * masking at VM entry as if still in root mode: a guest entered with IF=0
 * takes no external-interrupt exit until it executes CLI, STI, POPF or IRET.
 * The timer then bounds how long a host interrupt (timer, kick IPI) can wait:
 * with no deadline of its own that is the same value at every entry, which
 * the VMCS keeps (vmx_timer.h), so such an entry reads no TSC and writes
 * nothing. Without a deadline the setting depends on RFLAGS.IF alone, so it
 * holds while IF is what it was computed for (timer_if).
 */
static __attribute__((noinline)) void recompute_timer(struct vcpu *v, struct vmx_vcpu *s)
{
    uint64_t guest_if = v->hw.regs.rflags & RFLAGS_IF;
    uint64_t setting = guest_if ? TIMER_OFF : backstop_setting;
    if (s->timer_deadline)
        setting = vmx_timer_value(
            vmx_timer_left(s->timer_deadline, rdtsc(), setting != TIMER_OFF ? backstop_tsc : 0),
            vmx.caps.misc & VMX_MISC_TIMER_RATE);
    if (setting != s->timer_setting)
        apply_timer(s, setting);
    s->timer_if = s->timer_deadline ? TIMER_RECOMPUTE : guest_if;
}

static inline void sync_timer(struct vcpu *v, struct vmx_vcpu *s)
{
    if ((v->hw.regs.rflags & RFLAGS_IF) != s->timer_if)
        recompute_timer(v, s);
}

/* The controls vmm/ or an exit's handler changed (controls_changed); VMCS current. */
static __attribute__((noinline)) void write_changed_controls(struct vmx_vcpu *s)
{
    if (s->proc != s->vmcs_proc)
        vmwrite(VMCS_PROC_CONTROLS, s->vmcs_proc = s->proc);
    if (s->proc2 != s->vmcs_proc2)
        vmwrite(VMCS_PROC2_CONTROLS, s->vmcs_proc2 = s->proc2);
    if (s->entry != s->vmcs_entry)
        vmwrite(VMCS_ENTRY_CONTROLS, s->vmcs_entry = s->entry);
    if (s->tsc_offset != s->vmcs_tsc_offset)
        vmwrite(VMCS_TSC_OFFSET, s->vmcs_tsc_offset = s->tsc_offset);
    if (s->ple_window != s->vmcs_ple_window)
        vmwrite(VMCS_PLE_WINDOW, s->vmcs_ple_window = s->ple_window);
    if (s->ple_gap != s->vmcs_ple_gap)
        vmwrite(VMCS_PLE_GAP, s->vmcs_ple_gap = s->ple_gap);
}

/*
 * The settings any entry applies, the fast path's included: the preemption
 * timer and the controls an exit's handler may have changed (a WRMSR of the
 * TSC changes every vCPU's offset). VMCS current, interrupts off.
 */
static inline void sync_controls(struct vcpu *v, struct vmx_vcpu *s)
{
    sync_timer(v, s);
    /* The exchange orders the flag before the fields: a change made after it stays flagged. */
    if (__atomic_load_n(&s->controls_changed, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&s->controls_changed, false, __ATOMIC_ACQUIRE))
        write_changed_controls(s);
}

/* Apply what changed since the last entry; VMCS current, interrupts off. */
static void prepare_entry(struct vcpu *v, struct vmx_vcpu *s)
{
    struct vmx_vm *x = v->vm->hw.arch;
    uint64_t generation = __atomic_load_n(&x->generation, __ATOMIC_ACQUIRE);
    if (s->ept_generation != generation) {
        invept(vmx.ctls.invept_type, x->eptp);
        s->ept_generation = generation;
    }
    if (s->flush_vpid) {
        /* Without VPID every entry and exit flushes VPID 0's translations anyway. */
        if (s->vpid)
            invvpid(vmx.ctls.invvpid_type, s->vpid);
        s->flush_vpid = false;
    }
    sync_controls(v, s);
    vmwrite(VMCS_GUEST_RIP, v->hw.regs.rip);
    vmwrite(VMCS_GUEST_RSP, s->vmcs_rsp = v->hw.regs.rsp);
    vmwrite(VMCS_GUEST_RFLAGS, v->hw.regs.rflags);
    /* An event vmm/ injects now wins over the interrupted one, as on SVM. */
    if (!s->event_injected && (s->reinject & INTR_INFO_VALID)) {
        unsigned type = (s->reinject & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT;
        vmwrite(VMCS_ENTRY_INTR_INFO, s->reinject);
        if (s->reinject & INTR_INFO_ERROR)
            vmwrite(VMCS_ENTRY_ERROR_CODE, s->reinject_error);
        if (type == INTR_TYPE_SW_INT || type == INTR_TYPE_PRIV_SW || type == INTR_TYPE_SW_EXCEPT)
            vmwrite(VMCS_ENTRY_INSN_LEN, s->reinject_len);
    }
    s->reinject = 0;
}

#ifdef POLLUX_EXIT_FLOOR
/* One of the floor's operations (arch/x86/exit_floor.h), done: the guest goes on at once. */
static bool floor_exit(struct vcpu *v)
{
    struct guest_regs *r = &v->hw.regs;
    uint64_t len;
    switch ((uint32_t)vmread(VMCS_EXIT_REASON)) {
    case VMX_EXIT_CPUID:
        if ((uint32_t)r->rax != FLOOR_CPUID_LEAF)
            return false;
        floor_cpuid(r, 0x756e6547u, 0x49656e69u, 0x6c65746eu); /* GenuineIntel */
        len = 2;
        break;
    case VMX_EXIT_VMCALL:
        if ((uint32_t)r->rax != FLOOR_HC_NOP)
            return false;
        r->rax = 0;
        len = 3;
        break;
    case VMX_EXIT_IO: {
        uint64_t q = vmread(VMCS_EXIT_QUALIFICATION);
        if ((uint16_t)(q >> 16) != FLOOR_PORT || !(q & (1u << 3))) /* bit 3: IN */
            return false;
        r->rax = (r->rax & ~0xffull) | FLOOR_PORT_VALUE;
        len = vmread(VMCS_EXIT_INSN_LEN);
        break;
    }
    case VMX_EXIT_RDMSR:
        if ((uint32_t)r->rcx != FLOOR_MSR)
            return false;
        r->rax = (uint32_t)FLOOR_MSR_VALUE;
        r->rdx = FLOOR_MSR_VALUE >> 32;
        len = 2;
        break;
    default:
        return false;
    }
    vmwrite(VMCS_GUEST_RIP, vmread(VMCS_GUEST_RIP) + len);
    return true;
}

/*
 * After an exit: the floor's operations answered and the guest entered again
 * until another exit comes. Out of line, so the floor's loop is compiled on
 * its own, whatever the real exit path around it becomes.
 */
static __attribute__((noinline)) int floor_loop(struct vcpu *v, struct vmx_vcpu *s)
{
    int rc = 0;
    while (!rc && floor_exit(v))
        rc = vmx_enter(&v->hw.regs, true, &s->vmcs_host_rsp);
    return rc;
}
#endif

/* Host interrupts that forced the exit (timer, kick IPI) are taken here. */
static inline void take_host_interrupts(void)
{
    __asm__ volatile("sti; nop; cli" ::: "memory");
}

/* RSP into v->hw.regs, also kept to write back only if changed. */
static inline void read_exit_rsp(struct vcpu *v, struct vmx_vcpu *s)
{
    v->hw.regs.rsp = s->vmcs_rsp = vmread_nofail(VMCS_GUEST_RSP);
    s->rsp_unread = false;
}

/* RIP and RFLAGS into v->hw.regs; RFLAGS also kept to write back only if changed. */
static inline void read_exit_rip_rflags(struct vcpu *v, struct vmx_vcpu *s)
{
    v->hw.regs.rip = vmread_nofail(VMCS_GUEST_RIP);
    v->hw.regs.rflags = s->exit_rflags = vmread_nofail(VMCS_GUEST_RFLAGS);
}

/*
 * Every exit but an instruction's (vmx_instruction_exit): an interrupted
 * event kept for re-injection, NMIs, CR accesses pollux emulates itself
 * turned into EXIT_NONE, the preemption timer, entry failures.
 */
static __attribute__((noinline)) void other_exit(struct vcpu *v, struct vmx_vcpu *s,
                                                 uint32_t reason, struct exit_record *e)
{
    struct vmx_exit_info xi = {.reason = reason};
    uint32_t basic = reason & 0xffff;
    if (basic == VMX_EXIT_EXCEPTION_NMI || basic == VMX_EXIT_EXTINT)
        xi.intr_info = (uint32_t)vmread(VMCS_EXIT_INTR_INFO);
    /* The exit consumed a host NMI: hand it to the host's handler. */
    if (basic == VMX_EXIT_EXCEPTION_NMI &&
        ((xi.intr_info & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT) == INTR_TYPE_NMI)
        __asm__ volatile("int $2");
    take_host_interrupts();
    /* Read only for the exits whose qualification pollux uses: one VMREAD fewer on the rest. */
    if ((reason & VMX_EXIT_ENTRY_FAILURE) || basic == VMX_EXIT_IO || basic == VMX_EXIT_CR_ACCESS ||
        basic == VMX_EXIT_EPT_VIOLATION)
        xi.qualification = vmread(VMCS_EXIT_QUALIFICATION);
    if (reason & VMX_EXIT_ENTRY_FAILURE) {
        /* No guest state was loaded, and the launch state is as it was. */
        vmx_entry_failure(s, &xi, e);
        return;
    }
    s->launched = true;
    xi.insn_len = (uint32_t)vmread(VMCS_EXIT_INSN_LEN);
    if (basic == VMX_EXIT_EPT_VIOLATION || basic == VMX_EXIT_EPT_MISCONFIG)
        xi.guest_phys = vmread(VMCS_GUEST_PHYS_ADDR);

    read_exit_rip_rflags(v, s);
    read_exit_rsp(v, s);
    uint32_t idt = (uint32_t)vmread(VMCS_IDT_VECTORING_INFO);
    if (idt & INTR_INFO_VALID) {
        unsigned type = (idt & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT;
        s->reinject = idt & (INTR_INFO_VALID | INTR_INFO_ERROR | INTR_INFO_TYPE | INTR_INFO_VECTOR);
        if (idt & INTR_INFO_ERROR)
            s->reinject_error = (uint32_t)vmread(VMCS_IDT_VECTORING_ERROR);
        if (type == INTR_TYPE_SW_INT || type == INTR_TYPE_PRIV_SW || type == INTR_TYPE_SW_EXCEPT)
            s->reinject_len = xi.insn_len;
    } else if ((basic == VMX_EXIT_EPT_VIOLATION && (xi.qualification & EPT_QUAL_NMI_UNBLOCK)) ||
               (basic == VMX_EXIT_EXCEPTION_NMI && (xi.intr_info & INTR_INFO_NMI_UNBLOCK))) {
        /* A faulting IRET had unblocked NMIs: block them again for when it is retried. */
        vmwrite(VMCS_GUEST_INTERRUPTIBILITY,
                vmread(VMCS_GUEST_INTERRUPTIBILITY) | INTERRUPTIBILITY_NMI);
    }

    if (basic == VMX_EXIT_CR_ACCESS) {
        struct vmx_cr_access a;
        vmx_decode_cr_access(xi.qualification, &a);
        if (a.cr == 8 && (a.type == CR_MOV_TO || a.type == CR_MOV_FROM)) {
            *e = (struct exit_record){.reason = EXIT_CR8,
                                      .vendor_code = xi.reason,
                                      .insn_kind = -1,
                                      .insn_len = xi.insn_len};
            e->cr8.write = a.type == CR_MOV_TO;
            e->cr8.gpr = (uint8_t)a.gpr;
            return;
        }
    }
    if (basic == VMX_EXIT_CR_ACCESS &&
        vmx_emulate_cr_access(&v->hw, s, xi.qualification, xi.insn_len)) {
        *e = (struct exit_record){.reason = EXIT_NONE, .vendor_code = xi.reason, .insn_kind = -1};
        return;
    }
    if (basic == VMX_EXIT_NMI_WINDOW)
        set_proc_bit(s, PROC_NMI_WINDOW, false);
    vmx_decode_exit(&xi, e, s->msg, sizeof(s->msg));
    if (e->reason == EXIT_PREEMPTION_TIMER) {
        if (s->timer_deadline && rdtsc() >= s->timer_deadline)
            s->timer_deadline = 0; /* one-shot: vmm/ re-arms it if it wants another */
        else
            e->reason = EXIT_NONE; /* the backstop, or early by the timer's granularity */
    }
}

/*
 * One entry of v and what its exit needs before anyone looks at it: the
 * registers back in v->hw.regs and e decoded. An instruction's exit, the common
 * case, needs nothing else (vmx_instruction_exit): one branch on the exit
 * reason leads to the rest (other_exit). full_path: prepare_entry's entry,
 * which may deliver an event vmm/ injected and be the VMCS's first
 * (VMLAUNCH); the fast path's re-entries are plain (vmx_entry_is_plain)
 * VMRESUMEs, after an exit that left the VMCS launched.
 */
static inline __attribute__((always_inline)) void
vmx_enter_exit(struct vcpu *v, struct vmx_vcpu *s, struct exit_record *e, bool full_path)
{
    /*
     * Entered with host IF=0: a host interrupt that arrives while the guest
     * runs makes it exit (external-interrupt exiting, whatever the host's or
     * guest's IF) and, without "acknowledge interrupt on exit", stays
     * pending in the local APIC until take_host_interrupts.
     */
    guest_msrs_enter(&v->msrs);
    int rc = vmx_enter(&v->hw.regs, s->launched, &s->vmcs_host_rsp);
#ifdef POLLUX_EXIT_FLOOR
    if (!rc)
        rc = floor_loop(v, s);
#endif
    guest_msrs_exit(&v->msrs);

    if (full_path)
        s->event_injected = false;
    if (__builtin_expect(rc != 0, 0)) {
        take_host_interrupts();
        vmx_entry_vmfail(s, rc, e);
        return;
    }
    uint32_t reason = (uint32_t)vmread_nofail(VMCS_EXIT_REASON);
    const struct vmx_insn_exit *insn = vmx_instruction_exit(reason);
    if (!insn) {
        other_exit(v, s, reason, e);
        return;
    }
    take_host_interrupts();
    if (full_path)
        s->launched = true;
    read_exit_rip_rflags(v, s);
    /* No handler of an instruction's exit in the fast path uses RSP (arch/x86/virt.h). */
    s->rsp_unread = true;
    vmx_decode_instruction_exit(insn, reason, (uint32_t)vmread_nofail(VMCS_EXIT_INSN_LEN), e);
    if (reason == VMX_EXIT_IO)
        vmx_decode_io(vmread_nofail(VMCS_EXIT_QUALIFICATION), e);
    else if (reason == VMX_EXIT_VMCALL)
        e->hypercall.cpl = vmx_guest_cpl();
}

/*
 * The entry after an exit the fast path handled, with nothing to inject or
 * re-inject (entry_is_plain), on the same CPU: no TLB flush can be due, and
 * RSP and RFLAGS are written back only if the handler changed them.
 */
static void reenter_prepare(struct vcpu *v, struct vmx_vcpu *s)
{
    sync_controls(v, s);
    vmwrite_nofail(VMCS_GUEST_RIP, v->hw.regs.rip);
    if (v->hw.regs.rsp != s->vmcs_rsp)
        vmwrite_nofail(VMCS_GUEST_RSP, s->vmcs_rsp = v->hw.regs.rsp);
    if (v->hw.regs.rflags != s->exit_rflags)
        vmwrite_nofail(VMCS_GUEST_RFLAGS, v->hw.regs.rflags);
}

/* vmx_vcpu_run's first entry cannot happen: the VMCS is still active on another CPU. */
static __attribute__((noinline, cold)) void vmcs_stuck_elsewhere(struct vmx_vcpu *s,
                                                                 struct exit_record *e)
{
    *e = (struct exit_record){.reason = EXIT_ENTRY_FAILED, .insn_kind = -1};
    snprintf(s->msg, sizeof(s->msg),
             "vCPU moved from CPU %d to CPU %u without vmx_vcpu_unload on the old CPU", s->last_cpu,
             this_cpu()->cpu);
    e->fail.what = s->msg;
    e->fail.detail = (uint64_t)s->last_cpu;
}

/*
 * fastpath_exit has one call site, so that it is inlined into the loop (a
 * call and a second frame per exit otherwise); the failed load reaches it as
 * an exit that was never entered.
 */
static enum fastpath_result vmx_vcpu_run(struct virt_vcpu *hw, struct exit_record *e)
{
    struct vcpu *v = vcpu_of(hw);
    struct vmx_vcpu *s = v->hw.arch;
    if (vmcs_load(s)) {
        prepare_entry(v, s);
        vmx_enter_exit(v, s, e, true);
    } else {
        vmcs_stuck_elsewhere(s, e);
    }
    enum fastpath_result r;
    while ((r = fastpath_exit(v, e)) == FASTPATH_REENTER && vmx_entry_is_plain(s)) {
        fastpath_reentry(v, e);
        reenter_prepare(v, s);
        vmx_enter_exit(v, s, e, false);
    }
    /* vmm/ may use every register from here on. */
    if (s->rsp_unread)
        read_exit_rsp(v, s);
    return r == FASTPATH_REENTER ? FASTPATH_HANDLED : r;
}

static void vmx_vcpu_load(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    s->on_cpu = true;
    load_guest_cr2(s->cr2);
    vmx_syscall_msrs_enter(s);
}

static void vmx_vcpu_put(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    vmx_syscall_msrs_leave(s);
    s->cr2 = read_cr2();
    s->on_cpu = false;
}

/* ------------------------------------------------------------ settings for the next entry */

static enum pause_hw vmx_pause_hw(void)
{
    return vmx_pause_hw_of(vmx.ctls.available);
}

/* Without PLE the window fields do not exist: they are never written (prepare_entry). */
static void vmx_set_pause_exiting(struct virt_vcpu *v, enum pause_exiting mode, uint32_t window,
                                  uint32_t gap)
{
    struct vmx_vcpu *s = v->arch;
    s->pause_mode = mode;
    vmx_pause_controls(vmx.ctls.available, mode, &s->proc, &s->proc2);
    if (vmx.ctls.available & VMX_OPT_PLE) {
        s->ple_window = window;
        s->ple_gap = gap;
    }
    controls_changed(s);
}

/* INVVPID at the next entry (prepare_entry); without VPID every entry flushes anyway. */
static void vmx_flush_guest_tlb(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    s->flush_vpid = true;
}

static void vmx_set_tsc_offset(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    s->tsc_offset = v->tsc_offset;
    controls_changed(s);
}

static bool vmx_set_preemption_timer(struct virt_vcpu *v, uint64_t tsc_deadline)
{
    struct vmx_vcpu *s = v->arch;
    if (!(vmx.ctls.available & VMX_OPT_PREEMPTION_TIMER))
        return false;
    s->timer_deadline = tsc_deadline;
    s->timer_if = TIMER_RECOMPUTE;
    return true;
}

const struct virt_ops vmx_ops = {
    .name = "vmx",
    .cpu_enable = vmx_cpu_enable,
    .vm_init = vmx_vm_init,
    .vm_map = vmx_vm_map,
    .vm_destroy = vmx_vm_destroy,
    .vcpu_create = vmx_vcpu_create,
    .vcpu_destroy = vmx_vcpu_destroy,
    .vcpu_reset_protected = vmx_vcpu_reset_protected,
    .vcpu_run = vmx_vcpu_run,
    .vcpu_load = vmx_vcpu_load,
    .vcpu_put = vmx_vcpu_put,
    .inject_exception = vmx_inject_exception,
    .get_mode = vmx_get_mode,
    .end_emulated_instruction = vmx_end_emulated_instruction,
    .msr_read = vmx_msr_read,
    .msr_write = vmx_msr_write,
    .pause_hw = vmx_pause_hw,
    .set_pause_exiting = vmx_set_pause_exiting,
    .set_tsc_offset = vmx_set_tsc_offset,
    .set_preemption_timer = vmx_set_preemption_timer,
    .interrupt_allowed = vmx_interrupt_allowed,
    .in_interrupt_shadow = vmx_in_interrupt_shadow,
    .inject_interrupt = vmx_inject_interrupt,
    .set_interrupt_window = vmx_set_interrupt_window,
    .nmi_allowed = vmx_nmi_allowed,
    .nmi_in_service = vmx_nmi_in_service,
    .inject_nmi = vmx_inject_nmi,
    .set_nmi_window = vmx_set_nmi_window,
    .vcpu_reset_real = vmx_vcpu_reset_real,
    .vcpu_unload = vmx_vcpu_unload,
    .flush_guest_tlb = vmx_flush_guest_tlb,
    .unload_to_move = true,
};

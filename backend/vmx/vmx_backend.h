/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the VMX backend's files share; vmm/ sees none of it, only
 * arch/x86/virt.h. The state kept per host CPU, per vCPU and per VM, what
 * setup found once for all of them (vmx.c), and the entry stub (vmentry.S).
 */
#ifndef POLLUX_BACKEND_VMX_VMX_BACKEND_H
#define POLLUX_BACKEND_VMX_VMX_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/pagetable.h"
#include "arch/x86/percpu.h"
#include "arch/x86/pmm.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcs.h"
#include "backend/vmx/vmx_controls.h"

#define VMX_FAIL_INVALID   1 /* vmx_enter: CF, no current VMCS */
#define VMX_FAIL_VALID     2 /* vmx_enter: ZF, see the VM-instruction error field */
#define VMX_SYSCALL_MSRS   5 /* vmx_syscall_msrs (vmx_msr.h) */
#define VMX_SLOT_KERNEL_GS 4

/* Segment fields are found by index: encoding of ES + 2 * enum vmx_seg. */
_Static_assert(VMCS_GUEST_TR_SEL == VMCS_GUEST_ES_SEL + 2 * SEG_TR &&
                   VMCS_GUEST_LDTR_LIMIT == VMCS_GUEST_ES_LIMIT + 2 * SEG_LDTR &&
                   VMCS_GUEST_CS_AR == VMCS_GUEST_ES_AR + 2 * SEG_CS &&
                   VMCS_GUEST_GS_BASE == VMCS_GUEST_ES_BASE + 2 * SEG_GS,
               "VMCS segment field layout");

/*
 * vmentry.S: enter the guest of the current VMCS (VMLAUNCH when launched is
 * 0, else VMRESUME); 0 once it exited, VMX_FAIL_* when the instruction failed.
 * HOST_RSP is written only when it differs from *host_rsp (then updated).
 */
int vmx_enter(struct guest_regs *regs, uint64_t launched, uint64_t *host_rsp);
void vmx_exit_stub(void);

/* Per host CPU. */
struct vmx_cpu {
    void *vmxon_region;
    /*
     * The VMCS that VMPTRLD made current here, 0 after its VMCLEAR. An
     * address, not a vCPU: a VMCS leaked by vmx_vcpu_destroy is never reused,
     * whereas its vCPU's memory is.
     */
    uint64_t current_vmcs;
    uint64_t host_syscall[VMX_SYSCALL_MSRS];
};

struct vmx_vcpu {
    uint32_t *vmcs;
    int last_cpu;  /* the CPU the VMCS is active on, -1 once cleared */
    bool launched; /* VMLAUNCH succeeded since the last VMCLEAR: VMRESUME next */
    uint16_t vpid;
    /*
     * Controls as pollux wants them, and as the VMCS holds them. Whoever
     * changes proc, proc2, entry, tsc_offset or the PLE fields calls
     * controls_changed; the preemption timer's pin bit is the entry's own
     * business (timer_setting), never set in pin.
     */
    uint32_t pin, proc, proc2, entry;
    uint32_t vmcs_pin, vmcs_proc, vmcs_proc2, vmcs_entry;
    uint64_t tsc_offset, vmcs_tsc_offset;
    bool controls_changed;
    /* set_pause_exiting's request, applied again after every reset. */
    enum pause_exiting pause_mode;
    uint32_t ple_gap, ple_window, vmcs_ple_gap, vmcs_ple_window;
    uint64_t vmcs_timer;             /* the preemption timer value the VMCS holds; TIMER_UNKNOWN */
    uint64_t timer_setting;          /* the last entry's: its value, TIMER_OFF or TIMER_UNKNOWN */
    uint64_t cr0_shadow, cr4_shadow; /* read shadows: only pollux writes them */
    uint64_t timer_deadline;         /* host TSC; 0 = disarmed */
    /*
     * The entry's timer setting stands while RFLAGS.IF is this (0 or
     * RFLAGS_IF); TIMER_RECOMPUTE while a deadline is armed (its value is
     * worked out from the TSC at every entry) or the setting is unknown.
     */
    uint64_t timer_if;
    uint64_t ept_generation; /* of the VM's EPT, as last flushed on last_cpu */
    bool flush_vpid;         /* guest paging changed behind the CPU's back (emulated MOV CR) */
    bool event_injected;     /* vmm/ filled VM_ENTRY_INTR_INFO for the next entry */
    /* An event whose delivery the last exit interrupted (IDT-vectoring information). */
    uint32_t reinject, reinject_error, reinject_len;
    uint64_t syscall[VMX_SYSCALL_MSRS];
    bool syscall_live; /* the guest may use them: they are switched for it */
    bool on_cpu;       /* between vcpu_load and vcpu_put */
    /*
     * The guest's CR2, which VMX leaves in the CPU across entries and exits
     * (it is no VMCS field): in the CPU between vcpu_load and vcpu_put, here
     * otherwise. The host never writes CR2 and takes no page fault it
     * survives, so only a change of vCPU on the CPU has to switch it.
     */
    uint64_t cr2;
    bool syscall_in_cpu; /* the CPU holds its SYSCALL MSRs (vmx_msr.h) */
    /*
     * RSP as the VMCS holds it while v->regs.rsp is that value; RFLAGS as read
     * at the last exit. Each is written back at a re-entry only if changed.
     * rsp_unread: the last exit left RSP in the VMCS alone (vmx_vcpu_run
     * reads it before vmm/ may use it); v->regs.rsp is then the value at the
     * entry, still equal to vmcs_rsp, so nothing is written back.
     */
    uint64_t vmcs_rsp, exit_rflags;
    bool rsp_unread;
    uint64_t vmcs_host_rsp; /* HOST_RSP as the VMCS holds it (vmentry.S); 0 unknown */
    char msg[256];          /* EXIT_ENTRY_FAILED text */
};

_Static_assert(sizeof(struct vmx_vcpu) <= PAGE_SIZE, "one page per vCPU");

struct vmx_vm {
    struct pagetable ept;
    uint64_t eptp;
    uint64_t generation; /* bumped by every mapping change */
};

/* What setup found and made, once, for every CPU and vCPU (vmx.c). */
struct vmx_setup {
    struct vmx_caps caps;
    struct vmx_controls ctls;
    uint64_t io_bitmap_pa, msr_bitmap_pa; /* every VM's: all ones, every port and MSR exits */
    uint64_t cr0_mask, cr4_mask;          /* the bits the host owns (CR0/CR4 guest/host masks) */
};

extern struct vmx_setup vmx;

/* Preemption timer settings beside the 32-bit values (vmx_vcpu.vmcs_timer, timer_setting). */
#define TIMER_OFF       (1ull << 32) /* disarmed */
#define TIMER_UNKNOWN   UINT64_MAX   /* not known: the next entry writes what it wants */
#define TIMER_RECOMPUTE 1ull         /* vmx_vcpu.timer_if: neither 0 nor RFLAGS_IF */

/*
 * The next entry compares the wanted controls with the VMCS's. Release: a
 * vCPU on another CPU (a TSC offset set for the whole VM) sees the new value
 * once it sees the flag.
 */
static inline void controls_changed(struct vmx_vcpu *s)
{
    __atomic_store_n(&s->controls_changed, true, __ATOMIC_RELEASE);
}

static inline void set_proc_bit(struct vmx_vcpu *s, uint32_t bit, bool on)
{
    uint32_t proc = on ? s->proc | bit : s->proc & ~bit;
    if (proc != s->proc) {
        s->proc = proc;
        controls_changed(s);
    }
}

static inline struct vmx_cpu *cpu_state(void)
{
    return this_cpu()->virt;
}

#endif

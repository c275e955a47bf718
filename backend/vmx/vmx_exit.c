/* SPDX-License-Identifier: GPL-2.0-only */
#include "backend/vmx/vmx_exit.h"

#include "arch/x86/insn.h"
#include "arch/x86/vmcs.h"
#include "lib/format.h"
#include "lib/string.h"

const struct vmx_insn_exit vmx_insn_exits[VMX_INSN_EXIT_REASONS] = {
    [VMX_EXIT_CPUID] = {EXIT_CPUID, INSN_CPUID},
    [VMX_EXIT_HLT] = {EXIT_HLT, INSN_HLT},
    [VMX_EXIT_INVD] = {EXIT_INVD, INSN_INVD},
    [VMX_EXIT_VMCALL] = {EXIT_HYPERCALL, INSN_VMCALL},
    [VMX_EXIT_RDMSR] = {EXIT_MSR_READ, INSN_RDMSR},
    [VMX_EXIT_WRMSR] = {EXIT_MSR_WRITE, INSN_WRMSR},
    /* Unconditional PAUSE exiting and PAUSE-loop exiting alike. */
    [VMX_EXIT_PAUSE] = {EXIT_PAUSE, INSN_PAUSE},
    [VMX_EXIT_WBINVD] = {EXIT_WBINVD, INSN_WBINVD},
    [VMX_EXIT_XSETBV] = {EXIT_XSETBV, INSN_XSETBV},
    [VMX_EXIT_IO] = {EXIT_IO, -1},
    /* Refused instructions: the guest sees #UD, as on a CPU without them. */
    [VMX_EXIT_MWAIT] = {EXIT_UNDEFINED, INSN_MWAIT},
    [VMX_EXIT_MONITOR] = {EXIT_UNDEFINED, INSN_MONITOR},
    [VMX_EXIT_VMCLEAR] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMLAUNCH] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMPTRLD] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMPTRST] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMREAD] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMRESUME] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMWRITE] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMXOFF] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMXON] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_INVEPT] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_INVVPID] = {EXIT_UNDEFINED, -1},
    [VMX_EXIT_VMFUNC] = {EXIT_UNDEFINED, -1},
};

static void decode_entry_failure(const struct vmx_exit_info *x, uint32_t basic,
                                 struct exit_record *e, char *msg, size_t msglen)
{
    const char *what = basic == VMX_EXIT_BAD_GUEST      ? "invalid guest state"
                       : basic == VMX_EXIT_BAD_MSR_LOAD ? "MSR loading"
                                                        : "machine-check event";
    e->reason = EXIT_ENTRY_FAILED;
    e->fail.detail = x->qualification;
    if (x->failed_check)
        snprintf(msg, msglen, "VM entry failed: %s: %s", what, x->failed_check);
    else
        snprintf(msg, msglen, "VM entry failed: %s (qualification %lu)", what,
                 (unsigned long)x->qualification);
    e->fail.what = msg;
}

void vmx_decode_exit(const struct vmx_exit_info *x, struct exit_record *e, char *msg, size_t msglen)
{
    /* A store per field, not memset: its REP STOSB retires once per byte under emulation. */
    *e = (struct exit_record){.vendor_code = x->reason, .insn_kind = -1};
    uint32_t basic = x->reason & 0xffff;

    if (x->reason & VMX_EXIT_ENTRY_FAILURE) {
        decode_entry_failure(x, basic, e, msg, msglen);
        return;
    }
    const struct vmx_insn_exit *insn = vmx_instruction_exit(basic);
    if (insn) {
        vmx_decode_instruction_exit(insn, x->reason, x->insn_len, e);
        if (basic == VMX_EXIT_IO)
            vmx_decode_io(x->qualification, e);
        return;
    }

    switch (basic) {
    case VMX_EXIT_EXCEPTION_NMI:
        /* With an empty exception bitmap only NMIs exit here. */
        if ((x->intr_info & INTR_INFO_VALID) &&
            ((x->intr_info & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT) == INTR_TYPE_NMI)
            e->reason = EXIT_NMI;
        else
            e->reason = EXIT_UNKNOWN;
        break;
    case VMX_EXIT_EXTINT:
        e->reason = EXIT_EXTERNAL_INTERRUPT;
        break;
    case VMX_EXIT_TRIPLE_FAULT:
        e->reason = EXIT_SHUTDOWN;
        break;
    case VMX_EXIT_INIT:
        e->reason = EXIT_INIT;
        break;
    case VMX_EXIT_SIPI:
        e->reason = EXIT_SIPI;
        break;
    case VMX_EXIT_INTR_WINDOW:
        e->reason = EXIT_INTERRUPT_WINDOW;
        break;
    case VMX_EXIT_NMI_WINDOW:
        /* vmm/ injects pending NMIs before every entry; nothing else to do. */
        e->reason = EXIT_NONE;
        break;
    case VMX_EXIT_PREEMPTION:
        e->reason = EXIT_PREEMPTION_TIMER;
        break;
    case VMX_EXIT_EPT_VIOLATION:
        e->reason = EXIT_NESTED_PAGE_FAULT;
        e->npf.gpa = x->guest_phys;
        e->npf.write = x->qualification & EPT_QUAL_WRITE;
        e->npf.fetch = x->qualification & EPT_QUAL_FETCH;
        e->npf.present = x->qualification & EPT_QUAL_PERMS;
        break;
    default:
        e->reason = EXIT_UNKNOWN;
        break;
    }
}

void vmx_decode_cr_access(uint64_t q, struct vmx_cr_access *a)
{
    a->cr = q & CR_QUAL_NUMBER;
    a->type = (enum vmx_cr_access_type)((q >> CR_QUAL_TYPE_SHIFT) & 3);
    a->gpr = (q >> CR_QUAL_REG_SHIFT) & 0xf;
    a->lmsw_source = (uint16_t)(q >> CR_QUAL_LMSW_SHIFT);
}

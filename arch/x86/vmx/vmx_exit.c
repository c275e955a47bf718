#include "arch/x86/vmx/vmx_exit.h"

#include "arch/x86/vmx/vmcs.h"
#include "lib/format.h"
#include "lib/string.h"
#include "vmm/insn.h"

#define NO_INSN (-2) /* not an instruction exit */

/*
 * The common reason and instruction kind of an instruction exit; kind -1 for
 * instructions vmm/ need not decode (it has the length) and NO_INSN for
 * exits that are not instructions at all.
 */
static int instruction_exit(uint32_t basic, enum exit_reason *reason)
{
    switch (basic) {
    case VMX_EXIT_CPUID:
        *reason = EXIT_CPUID;
        return INSN_CPUID;
    case VMX_EXIT_HLT:
        *reason = EXIT_HLT;
        return INSN_HLT;
    case VMX_EXIT_INVD:
        *reason = EXIT_INVD;
        return INSN_INVD;
    case VMX_EXIT_VMCALL:
        *reason = EXIT_HYPERCALL;
        return INSN_VMCALL;
    case VMX_EXIT_RDMSR:
        *reason = EXIT_MSR_READ;
        return INSN_RDMSR;
    case VMX_EXIT_WRMSR:
        *reason = EXIT_MSR_WRITE;
        return INSN_WRMSR;
    case VMX_EXIT_PAUSE: /* unconditional PAUSE exiting and PAUSE-loop exiting alike */
        *reason = EXIT_PAUSE;
        return INSN_PAUSE;
    case VMX_EXIT_WBINVD:
        *reason = EXIT_WBINVD;
        return INSN_WBINVD;
    case VMX_EXIT_XSETBV:
        *reason = EXIT_XSETBV;
        return INSN_XSETBV;
    case VMX_EXIT_IO:
        *reason = EXIT_IO;
        return -1;
    /* Refused instructions: the guest sees #UD, as on a CPU without them. */
    case VMX_EXIT_MWAIT:
        *reason = EXIT_UNDEFINED;
        return INSN_MWAIT;
    case VMX_EXIT_MONITOR:
        *reason = EXIT_UNDEFINED;
        return INSN_MONITOR;
    case VMX_EXIT_VMCLEAR:
    case VMX_EXIT_VMLAUNCH:
    case VMX_EXIT_VMPTRLD:
    case VMX_EXIT_VMPTRST:
    case VMX_EXIT_VMREAD:
    case VMX_EXIT_VMRESUME:
    case VMX_EXIT_VMWRITE:
    case VMX_EXIT_VMXOFF:
    case VMX_EXIT_VMXON:
    case VMX_EXIT_INVEPT:
    case VMX_EXIT_INVVPID:
    case VMX_EXIT_VMFUNC:
        *reason = EXIT_UNDEFINED;
        return -1;
    default:
        return NO_INSN;
    }
}

static void decode_io(uint64_t q, struct exit_record *e)
{
    e->io.port = (uint16_t)(q >> 16);
    e->io.size = (uint8_t)((q & IO_QUAL_SIZE) + 1); /* 0, 1, 3: 1, 2, 4 bytes */
    e->io.in = q & IO_QUAL_IN;
    e->io.string = q & IO_QUAL_STRING;
    e->io.rep = q & IO_QUAL_REP;
}

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
    enum exit_reason reason = EXIT_UNKNOWN;
    int kind = instruction_exit(basic, &reason);
    if (kind != NO_INSN) {
        e->reason = reason;
        e->insn_kind = kind;
        if (x->insn_len >= 1 && x->insn_len <= 15)
            e->insn_len = x->insn_len;
        if (basic == VMX_EXIT_IO)
            decode_io(x->qualification, e);
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

#include "arch/x86/svm/svm_exit.h"

#include "lib/string.h"
#include "vmm/insn.h"

/* Exits that refuse an instruction: the guest sees #UD, as on a CPU without it. */
static int undefined_kind(uint32_t code)
{
    switch (code) {
    case SVM_EXIT_VMRUN:
        return INSN_VMRUN;
    case SVM_EXIT_VMLOAD:
        return INSN_VMLOAD;
    case SVM_EXIT_VMSAVE:
        return INSN_VMSAVE;
    case SVM_EXIT_STGI:
        return INSN_STGI;
    case SVM_EXIT_CLGI:
        return INSN_CLGI;
    case SVM_EXIT_SKINIT:
        return INSN_SKINIT;
    case SVM_EXIT_MONITOR:
        return INSN_MONITOR;
    case SVM_EXIT_MWAIT:
        return INSN_MWAIT;
    case SVM_EXIT_RDPRU:
        return INSN_RDPRU;
    case SVM_EXIT_INVLPGA:
        return INSN_INVLPGA;
    default:
        return -1;
    }
}

void svm_decode_exit(const struct vmcb *vmcb, bool nrips, struct exit_record *e)
{
    /* A store per field, not memset: its REP STOSB retires once per byte under emulation. */
    *e = (struct exit_record){0};
    uint32_t code = (uint32_t)vmcb->exit_code;
    e->vendor_code = vmcb->exit_code;
    e->insn_kind = -1;
    if (nrips && vmcb->next_rip > vmcb->rip && vmcb->next_rip - vmcb->rip <= 15)
        e->insn_len = (unsigned)(vmcb->next_rip - vmcb->rip);

    switch (code) {
    case SVM_EXIT_CPUID:
        e->reason = EXIT_CPUID;
        e->insn_kind = INSN_CPUID;
        break;
    case SVM_EXIT_HLT:
        e->reason = EXIT_HLT;
        e->insn_kind = INSN_HLT;
        break;
    case SVM_EXIT_IDLE_HLT:
        e->reason = EXIT_IDLE_HLT;
        e->insn_kind = INSN_HLT;
        break;
    case SVM_EXIT_PAUSE:
        e->reason = EXIT_PAUSE;
        e->insn_kind = INSN_PAUSE;
        break;
    case SVM_EXIT_IOIO: {
        uint64_t info = vmcb->exit_info1;
        e->reason = EXIT_IO;
        e->io.port = (uint16_t)(info >> 16);
        e->io.in = info & SVM_IOIO_IN;
        e->io.string = info & SVM_IOIO_STR;
        e->io.rep = info & SVM_IOIO_REP;
        e->io.size = (info & SVM_IOIO_SZ32) ? 4 : (info & SVM_IOIO_SZ16) ? 2 : 1;
        /* EXITINFO2 holds the next RIP even without NRIPS. */
        if (vmcb->exit_info2 > vmcb->rip && vmcb->exit_info2 - vmcb->rip <= 15)
            e->insn_len = (unsigned)(vmcb->exit_info2 - vmcb->rip);
        break;
    }
    case SVM_EXIT_MSR:
        e->reason = vmcb->exit_info1 ? EXIT_MSR_WRITE : EXIT_MSR_READ;
        e->insn_kind = vmcb->exit_info1 ? INSN_WRMSR : INSN_RDMSR;
        break;
    case SVM_EXIT_NPF:
        e->reason = EXIT_NESTED_PAGE_FAULT;
        e->npf.gpa = vmcb->exit_info2;
        e->npf.present = vmcb->exit_info1 & 1;
        e->npf.write = vmcb->exit_info1 & 2;
        e->npf.fetch = vmcb->exit_info1 & 16;
        break;
    case SVM_EXIT_VMMCALL:
        e->reason = EXIT_HYPERCALL;
        e->insn_kind = INSN_VMMCALL;
        break;
    case SVM_EXIT_INTR:
        e->reason = EXIT_EXTERNAL_INTERRUPT;
        break;
    case SVM_EXIT_NMI:
        e->reason = EXIT_NMI;
        break;
    case SVM_EXIT_VINTR:
        e->reason = EXIT_INTERRUPT_WINDOW;
        break;
    case SVM_EXIT_SHUTDOWN:
        e->reason = EXIT_SHUTDOWN;
        break;
    case SVM_EXIT_INIT:
        e->reason = EXIT_INIT;
        break;
    case SVM_EXIT_INVD:
        e->reason = EXIT_INVD;
        e->insn_kind = INSN_INVD;
        break;
    case SVM_EXIT_WBINVD:
        e->reason = EXIT_WBINVD;
        e->insn_kind = INSN_WBINVD;
        break;
    case SVM_EXIT_XSETBV:
        e->reason = EXIT_XSETBV;
        e->insn_kind = INSN_XSETBV;
        break;
    case SVM_EXIT_INVALID:
        e->reason = EXIT_ENTRY_FAILED;
        e->fail.what = "VMRUN rejected the VMCB (VMEXIT_INVALID)";
        e->fail.detail = vmcb->exit_code;
        break;
    default:
        e->insn_kind = undefined_kind(code);
        e->reason = e->insn_kind >= 0 ? EXIT_UNDEFINED : EXIT_UNKNOWN;
        break;
    }
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/svm/svm_exit.h"

#include "arch/x86/insn.h"

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

void svm_decode_other(const struct vmcb *vmcb, struct exit_record *e)
{
    uint32_t code = (uint32_t)vmcb->exit_code;
    e->insn_kind = -1;
    switch (code) {
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
    case SVM_EXIT_WRITE_CR8:
        /* Intercepted only while the TPR holds a vector back (svm_update_cr8_intercept). */
        e->reason = EXIT_CR8;
        e->cr8.write = true;
        e->cr8.gpr = vmcb->exit_info1 & SVM_CR_EXIT_VALID
                         ? (uint8_t)(vmcb->exit_info1 & SVM_CR_EXIT_GPR)
                         : EXIT_GPR_UNKNOWN;
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

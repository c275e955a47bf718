/* SPDX-License-Identifier: GPL-2.0-only */
#include "backend/svm/svm_exit.h"

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

/* The map at pa, pages long, lies below 2^phys_bits (KVM's nested_svm_check_bitmap_pa). */
static bool map_reachable(uint64_t pa, unsigned pages, unsigned phys_bits)
{
    uint64_t last = (pa & ~0xfffull) + (uint64_t)pages * 4096 - 1;
    return phys_bits >= 64 || !(last >> phys_bits);
}

const char *svm_check_controls(const struct vmcb *vmcb, bool npt, bool flush_by_asid,
                               unsigned phys_bits)
{
    if (!(vmcb->intercept_misc2 & SVM_INTERCEPT_VMRUN))
        return "VMRUN rejected the VMCB: the VMRUN intercept is clear";
    if (!vmcb->asid)
        return "VMRUN rejected the VMCB: ASID 0, the host's";
    if ((vmcb->np_enable & 1) && !npt)
        return "VMRUN rejected the VMCB: nested paging on where CPUID offers none";
    if (!map_reachable(vmcb->msrpm_base_pa, SVM_MSRPM_PAGES, phys_bits))
        return "VMRUN rejected the VMCB: the MSR permission map lies beyond MAXPHYADDR";
    if (!map_reachable(vmcb->iopm_base_pa, SVM_IOPM_PAGES, phys_bits))
        return "VMRUN rejected the VMCB: the I/O permission map lies beyond MAXPHYADDR";
    switch (vmcb->tlb_control) {
    case 0:
    case SVM_TLB_FLUSH_ALL:
        return 0;
    case SVM_TLB_FLUSH_ASID:
    case SVM_TLB_FLUSH_ASID_LOCAL:
        if (flush_by_asid)
            return 0;
        return "VMRUN rejected the VMCB: TLB_CONTROL flushes by ASID where CPUID offers no "
               "FlushByASID";
    default:
        return "VMRUN rejected the VMCB: TLB_CONTROL has no such value";
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

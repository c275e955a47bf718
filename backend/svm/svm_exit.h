/* SPDX-License-Identifier: GPL-2.0-only */
/* Decoding a #VMEXIT into the common exit record; pure, so unit tests run it. */
#ifndef POLLUX_BACKEND_SVM_SVM_EXIT_H
#define POLLUX_BACKEND_SVM_SVM_EXIT_H

#include <stdbool.h>

#include "arch/x86/virt.h"
#include "arch/x86/vmcb.h"

#include "arch/x86/insn.h"

/*
 * The VMCB control checks a VMRUN must pass where pollux is itself a guest
 * of KVM (its __nested_vmcb_check_controls and nested_svm_check_tlb_ctl),
 * most of which hardware and the emulators make too: NULL when they pass,
 * else the rule broken. npt, flush_by_asid: what CPUID 8000_000A offers;
 * phys_bits: MAXPHYADDR. Used to name the cause of a VMEXIT_INVALID.
 */
const char *svm_check_controls(const struct vmcb *vmcb, bool npt, bool flush_by_asid,
                               unsigned phys_bits);

/* svm_decode_exit's rare exits (out of line): reason, insn_kind and their fields. */
void svm_decode_other(const struct vmcb *vmcb, struct exit_record *e);

/*
 * Fill e from the VMCB's exit fields. insn_len comes from nRIP when the CPU
 * has NRIPS, from EXITINFO2 (the next RIP) for IOIO, and is 0 otherwise,
 * with insn_kind telling vmm/ which instruction to decode. Only the union
 * member of e's reason is written. Inline: every exit runs it, and the fast
 * path's exits are the first cases.
 */
static inline void svm_decode_exit(const struct vmcb *vmcb, bool nrips, struct exit_record *e)
{
    uint32_t code = (uint32_t)vmcb->exit_code;
    e->vendor_code = vmcb->exit_code;
    e->insn_len = 0;
    /* nRIP - RIP in 1..15 (the unsigned wrap rejects nRIP <= RIP). */
    if (nrips && vmcb->next_rip - vmcb->rip - 1 < 15)
        e->insn_len = (unsigned)(vmcb->next_rip - vmcb->rip);
    switch (code) {
    case SVM_EXIT_CPUID:
        e->reason = EXIT_CPUID;
        e->insn_kind = INSN_CPUID;
        return;
    case SVM_EXIT_VMMCALL:
        e->reason = EXIT_HYPERCALL;
        e->insn_kind = INSN_VMMCALL;
        e->hypercall.cpl = vmcb->cpl;
        return;
    case SVM_EXIT_MSR:
        e->reason = vmcb->exit_info1 ? EXIT_MSR_WRITE : EXIT_MSR_READ;
        e->insn_kind = vmcb->exit_info1 ? INSN_WRMSR : INSN_RDMSR;
        return;
    case SVM_EXIT_IOIO: {
        uint64_t info = vmcb->exit_info1;
        e->reason = EXIT_IO;
        e->insn_kind = -1;
        e->io.port = (uint16_t)(info >> 16);
        e->io.in = info & SVM_IOIO_IN;
        e->io.string = info & SVM_IOIO_STR;
        /* SZ8, SZ16, SZ32 are bits 4, 5, 6: the one set, shifted down, is the size. */
        e->io.size = (uint8_t)((info >> 4) & 7);
        /* EXITINFO2 holds the next RIP even without NRIPS. */
        if (vmcb->exit_info2 - vmcb->rip - 1 < 15)
            e->insn_len = (unsigned)(vmcb->exit_info2 - vmcb->rip);
        return;
    }
    case SVM_EXIT_NPF:
        e->reason = EXIT_NESTED_PAGE_FAULT;
        e->insn_kind = -1;
        e->npf.gpa = vmcb->exit_info2;
        e->npf.present = vmcb->exit_info1 & 1;
        e->npf.write = vmcb->exit_info1 & 2;
        e->npf.fetch = vmcb->exit_info1 & 16;
        return;
    default:
        svm_decode_other(vmcb, e);
        return;
    }
}

#endif

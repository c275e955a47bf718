/* SPDX-License-Identifier: GPL-2.0-only */
/* Decoding a VM exit into the common exit record; pure, so unit tests run it. */
#ifndef POLLUX_BACKEND_VMX_VMX_EXIT_H
#define POLLUX_BACKEND_VMX_VMX_EXIT_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/virt.h"
#include "arch/x86/vmcs.h"

/* The exit-information fields, as read from the VMCS. */
struct vmx_exit_info {
    uint32_t reason; /* exit-reason field: basic reason in 15:0, bit 31 = entry failure */
    uint64_t qualification;
    uint32_t intr_info;       /* VM-exit interruption information (reasons 0 and 1) */
    uint32_t insn_len;        /* VM-exit instruction length */
    uint64_t guest_phys;      /* guest-physical address (EPT exits) */
    const char *failed_check; /* entry failures: the software check that fails, or NULL */
};

/*
 * The exits of instructions, by basic exit reason: the common reason and the
 * instruction's kind (-1 for those vmm/ need not decode: it has the length).
 * reason is EXIT_NONE for the exits that are not an instruction's.
 */
struct vmx_insn_exit {
    uint8_t reason; /* enum exit_reason */
    int8_t kind;    /* enum insn_kind, or -1 */
};

#define VMX_INSN_EXIT_REASONS 64

extern const struct vmx_insn_exit vmx_insn_exits[VMX_INSN_EXIT_REASONS];

/*
 * The instruction whose exit the exit-reason field names; NULL for every
 * other exit, and for any flag in the upper bits (an entry failure above all).
 * No instruction exit happens while an event is being delivered (its
 * IDT-vectoring information is never valid, SDM 27.2.4) or reports NMI
 * unblocking: such an exit needs only the length, and the qualification for
 * I/O.
 */
static inline const struct vmx_insn_exit *vmx_instruction_exit(uint32_t reason)
{
    if (reason >= VMX_INSN_EXIT_REASONS || vmx_insn_exits[reason].reason == EXIT_NONE)
        return 0;
    return &vmx_insn_exits[reason];
}

/*
 * Fill e for an instruction exit. Only the fields the exit has are written
 * (as SVM's decode does): of the union, the member of the record's reason
 * alone means anything. The caller adds the port's fields for I/O
 * (vmx_decode_io) and the hypercall's CPL, each behind its own test of the
 * exit reason.
 */
static inline void vmx_decode_instruction_exit(const struct vmx_insn_exit *insn, uint32_t reason,
                                               uint32_t insn_len, struct exit_record *e)
{
    e->reason = (enum exit_reason)insn->reason;
    e->vendor_code = reason;
    e->insn_kind = insn->kind;
    e->insn_len = insn_len >= 1 && insn_len <= 15 ? insn_len : 0;
}

/* The port, size and kind of an I/O exit, from its qualification. */
static inline void vmx_decode_io(uint64_t qualification, struct exit_record *e)
{
    e->io.port = (uint16_t)(qualification >> 16);
    e->io.size = (uint8_t)((qualification & IO_QUAL_SIZE) + 1); /* 0, 1, 3: 1, 2, 4 bytes */
    e->io.in = qualification & IO_QUAL_IN;
    e->io.string = qualification & IO_QUAL_STRING;
}

/*
 * Fill e. Instruction exits always carry insn_len (VMX reports it for every
 * one of them). For entry failures, fail.what names the failed check, built
 * in msg (which must outlive e).
 */
void vmx_decode_exit(const struct vmx_exit_info *x, struct exit_record *e, char *msg,
                     size_t msglen);

/* Control-register access qualification (exit reason 28). */
enum vmx_cr_access_type { CR_MOV_TO = 0, CR_MOV_FROM = 1, CR_CLTS = 2, CR_LMSW = 3 };

struct vmx_cr_access {
    unsigned cr;
    enum vmx_cr_access_type type;
    unsigned gpr;         /* 0 RAX, 1 RCX, 2 RDX, 3 RBX, 4 RSP, 5 RBP, 6 RSI, 7 RDI, 8-15 R8-R15 */
    uint16_t lmsw_source; /* LMSW operand */
};

void vmx_decode_cr_access(uint64_t qualification, struct vmx_cr_access *a);

#endif

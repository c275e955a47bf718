/* Decoding a VM exit into the common exit record; pure, so unit tests run it. */
#ifndef POLLUX_ARCH_X86_VMX_VMX_EXIT_H
#define POLLUX_ARCH_X86_VMX_VMX_EXIT_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/virt.h"

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

/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading guest memory by linear address, through the guest's own page tables. */
#ifndef POLLUX_VMM_EXIT_GUEST_ACCESS_H
#define POLLUX_VMM_EXIT_GUEST_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/insn.h"
#include "vmm/vm.h"

/*
 * The guest's mode at this exit, read from the VMCB/VMCS on first use. Each
 * exit forgets it (vcpu_mode_forget), and so does whatever changes it while
 * the exit is handled (an EFER write).
 */
static inline const struct guest_mode *vcpu_mode(struct vcpu *v)
{
    if (!v->exit_mode_read) {
        virt->get_mode(&v->hw, &v->exit_mode);
        v->exit_mode_read = true;
    }
    return &v->exit_mode;
}

static inline void vcpu_mode_forget(struct vcpu *v)
{
    v->exit_mode_read = false;
}

/* Copy len bytes at linear address la (page crossings handled). 0 or a gpt_result. */
int guest_read_linear(struct vcpu *v, uint64_t la, void *buf, size_t len);

/*
 * Copy the instruction bytes at the guest's CS:RIP into bytes (fewer than
 * INSN_MAX near the end of readable memory). Returns how many were read (0:
 * none), with the code-segment size and the linear address.
 */
size_t vcpu_fetch_insn(struct vcpu *v, uint8_t bytes[INSN_MAX], int *code_bits, uint64_t *la);

/*
 * Complete an emulated instruction of len bytes: RIP moves past it, its
 * interrupt shadow ends, and a guest with RFLAGS.TF set gets the single-step
 * #DB that follows it.
 */
static inline void vcpu_advance(struct vcpu *v, unsigned len)
{
    v->hw.regs.rip += len;
    virt->end_emulated_instruction(&v->hw);
}

/* vcpu_skip_instruction when the exit gave no length (vmm/exit/guest_access.c). */
int vcpu_skip_unreported(struct vcpu *v, const struct exit_record *e);

/*
 * Advance RIP past the instruction that caused the exit (vcpu_advance). Without a length from the
 * CPU, the bytes at RIP are decoded and must be the instruction the exit names. Returns -1 (and
 * stops the VM) when that fails. Inline: with NRIPS or on VMX the handler moves RIP itself.
 */
static inline int vcpu_skip_instruction(struct vcpu *v, const struct exit_record *e)
{
    if (!e->insn_len)
        return vcpu_skip_unreported(v, e);
    vcpu_advance(v, e->insn_len);
    return 0;
}

#endif

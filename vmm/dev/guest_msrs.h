/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The MSRs pollux keeps for each vCPU itself, because neither the VMCB nor
 * the VMCS holds them: IA32_TSC_AUX (read by RDTSCP and RDPID), IA32_XSS
 * (XSAVES), IA32_PKRS (supervisor protection keys), IA32_SPEC_CTRL, and
 * IA32_MISC_ENABLE; IA32_PRED_CMD is a command (an IBPB on the host). Each
 * exists only where the guest's CPUID offers its feature (vmm/exit/cpuid.h).
 * Also the one rule every MSR that holds a linear address shares (all of
 * them the vendor's): the value must be canonical, for 57-bit addresses where
 * LA57 is offered.
 *
 * The rules are pure (host unit tests); guest_msrs_load, _enter and _exit
 * put the values in the CPU. The host uses none of TSC_AUX, XSS or PKRS
 * (its CR4.PKS is clear), so those are loaded when a vCPU takes a CPU and
 * when it writes them, never restored. SPEC_CTRL governs the host too: the
 * guest's value is in force only from entry to exit.
 */
#ifndef POLLUX_VMM_DEV_GUEST_MSRS_H
#define POLLUX_VMM_DEV_GUEST_MSRS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/virt.h"
#include "vmm/exit/cpuid.h"

#define MSR_SPEC_CTRL   0x48
#define MSR_PRED_CMD    0x49
#define MSR_MISC_ENABLE 0x1a0
#define MSR_PKRS        0x6e1
#define MSR_XSS         0xda0
#define MSR_TSC_AUX     0xc0000103

/*
 * IA32_MISC_ENABLE as KVM models it: fast strings on, branch trace store
 * and PEBS unavailable (bits 11 and 12, which a write may not change), bit 7
 * (performance monitoring available) ignored on writes, the rest stored.
 */
#define MISC_ENABLE_RESET 0x1801ull

struct guest_msrs {
    uint64_t tsc_aux, xss, pkrs, spec_ctrl, misc_enable;
};

/* The power-on values. */
void guest_msrs_reset(struct guest_msrs *m);

/* The MSRs these rules keep a value for (a feature may still disown one). */
static inline bool guest_msrs_kept(uint32_t index)
{
    switch (index) { /* a switch: a few compares, not one per MSR */
    case MSR_SPEC_CTRL:
    case MSR_PRED_CMD:
    case MSR_MISC_ENABLE:
    case MSR_PKRS:
    case MSR_XSS:
    case MSR_TSC_AUX:
        return true;
    default:
        return false;
    }
}

/*
 * RDMSR/WRMSR of index under the features f: MSR_NOT_MINE for MSRs these
 * rules do not own (or whose feature is not offered), MSR_FAULT for #GP. A
 * write to IA32_PRED_CMD that asks for a barrier sets *ibpb.
 */
enum msr_result guest_msrs_read(const struct guest_features *f, const struct guest_msrs *m,
                                uint32_t index, uint64_t *value);
enum msr_result guest_msrs_write(const struct guest_features *f, struct guest_msrs *m,
                                 uint32_t index, uint64_t value, bool *ibpb);

/* Canonical for the guest's linear-address width (57 bits with LA57, else 48). */
bool guest_canonical(const struct guest_features *f, uint64_t address);

/* May MSR index take value? False only for an MSR that holds a linear address and a value
 * not canonical. */
bool guest_msr_canonical(const struct guest_features *f, uint32_t index, uint64_t value);

/* The host's IA32_SPEC_CTRL, which guest_msrs_exit restores; read at boot. */
extern uint64_t host_spec_ctrl;

/* Load the vCPU's TSC_AUX, XSS and PKRS into this CPU (those the guest has). */
void guest_msrs_load(const struct guest_msrs *m);

/* Just before entering the guest and just after it exits: SPEC_CTRL, only when it differs. */
static inline void guest_msrs_enter(const struct guest_msrs *m)
{
    if (m->spec_ctrl != host_spec_ctrl)
        wrmsr(MSR_SPEC_CTRL, m->spec_ctrl);
}

static inline void guest_msrs_exit(const struct guest_msrs *m)
{
    if (m->spec_ctrl != host_spec_ctrl)
        wrmsr(MSR_SPEC_CTRL, host_spec_ctrl);
}

#endif

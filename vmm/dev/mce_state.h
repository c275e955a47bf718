/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Machine-check MSRs as KVM models them (arch/x86/kvm/x86.c, get_msr_mce and
 * set_msr_mce), per vCPU, so that a kernel that reads the machine-check bank
 * at boot finds one (CPUID's MCE and MCA bits say so, docs/cpuid.md). No
 * machine check is ever raised into a guest: the host's are the host's.
 *   IA32_MCG_CAP (0x179): MCE_BANKS banks and MCG_CTL_P, as QEMU's default
 *     for KVM guests; read-only (a write is #GP).
 *   IA32_MCG_STATUS (0x17a): takes any value.
 *   IA32_MCG_CTL (0x17b): 0 or all ones, else #GP.
 *   IA32_MCi_CTL/STATUS/ADDR/MISC (0x400 + 4i ...): CTL 0 or all ones (bit 10,
 *     and bit 0, may be clear: Linux clears bit 10 of bank 4 on AMD K8, and
 *     KVM accepts it), STATUS 0 unless the guest set HWCR.McStatusWrEn
 *     (vmm/dev/pc_msr_state.h), ADDR and MISC anything.
 * Creation sets every CTL to all ones (as QEMU does through KVM_X86_SETUP_MCE)
 * and the rest to 0; INIT keeps them (machine-check state survives a warm
 * reset). Pure rules: host unit tests.
 */
#ifndef POLLUX_VMM_DEV_MCE_STATE_H
#define POLLUX_VMM_DEV_MCE_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/virt.h"

#define MSR_IA32_MCG_CAP    0x179
#define MSR_IA32_MCG_STATUS 0x17a
#define MSR_IA32_MCG_CTL    0x17b
#define MSR_IA32_MC0_CTL    0x400
#define MCE_BANKS           10        /* QEMU's default bank count for KVM guests */
#define MCG_CTL_P           (1u << 8) /* IA32_MCG_CTL exists */
#define MCE_MSR_LAST        (MSR_IA32_MC0_CTL + 4 * MCE_BANKS - 1)

struct mce_msrs {
    uint64_t mcg_status, mcg_ctl;
    uint64_t banks[4 * MCE_BANKS]; /* per bank: CTL, STATUS, ADDR, MISC */
};

void mce_reset(struct mce_msrs *m);
enum msr_result mce_read(const struct mce_msrs *m, uint32_t index, uint64_t *value);
/* status_writable: the guest set HWCR.McStatusWrEn (KVM's can_set_mci_status). */
enum msr_result mce_write(struct mce_msrs *m, uint32_t index, uint64_t value, bool status_writable);

#endif

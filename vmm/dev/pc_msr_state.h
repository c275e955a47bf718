/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MSRs of a PC that a kernel touches at boot and that KVM models, modelled
 * the same way so an unmodified Linux finds what it expects:
 *   MTRRs (CPUID MTRR): MTRRcap 0x508 (8 variable ranges, fixed ranges,
 *   write-combining), MTRRdefType reset to enabled + write-back, the
 *   variable and fixed ranges stored per vCPU. Guest memory is write-back
 *   whatever they say: they exist so that Linux keeps PAT enabled (it
 *   disables PAT when MTRRs are absent).
 *   AMD: HWCR (0xC0010015) stores the bits KVM lets a guest write (18,
 *   McStatusWrEn, and 24, TscFreqSel, which reads 1 as KVM reports it);
 *   SYSCFG (0xC0010010, read by the MTRR code), NB_CFG, TSEG base and mask,
 *   INT_PENDING_MSG (0xC0010055, the E400 check), MMIO_CONF_BASE, DE_CFG
 *   and BU_CFG2 read 0 and ignore writes, as KVM's do, and so do the
 *   performance counters (no PMU is offered).
 * Pure rules: no vCPU, host unit tests.
 */
#ifndef POLLUX_VMM_DEV_PC_MSR_STATE_H
#define POLLUX_VMM_DEV_PC_MSR_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/virt.h"

#define MSR_MTRR_CAP         0xfe
#define MSR_MTRR_DEF_TYPE    0x2ff
#define MSR_MTRR_PHYS_BASE   0x200 /* 0x200 + 2n base, 0x201 + 2n mask */
#define MTRR_VARIABLE        8
#define MTRR_CAP_VALUE       0x508ull /* WC (bit 10), fixed (bit 8), 8 variable */
#define MTRR_DEF_RESET       0x806ull /* E (bit 11), type write-back (6) */
#define MTRR_FIXED_COUNT     11
#define MSR_AMD_SYSCFG       0xc0010010
#define MSR_AMD_HWCR         0xc0010015
#define MSR_AMD_INT_PENDING  0xc0010055
#define MSR_AMD_DE_CFG       0xc0011029
#define HWCR_MC_STATUS_WR_EN (1ull << 18)

struct pc_msrs {
    uint64_t mtrr_def_type;
    uint64_t mtrr_var[2 * MTRR_VARIABLE];
    uint64_t mtrr_fixed[MTRR_FIXED_COUNT];
    uint64_t hwcr;
};

#define MSR_MTRR_FIXED_LAST 0x26f /* the last fixed-range MTRR */

void pc_msrs_reset(struct pc_msrs *m);

/* HWCR.McStatusWrEn: the guest may write non-zero IA32_MCi_STATUS (vmm/dev/mce_state.h). */
static inline bool pc_msrs_mc_status_writable(const struct pc_msrs *m)
{
    return m->hwcr & HWCR_MC_STATUS_WR_EN;
}
enum msr_result pc_msrs_read(const struct pc_msrs *m, uint32_t index, uint64_t *value);
enum msr_result pc_msrs_write(struct pc_msrs *m, uint32_t index, uint64_t value);

#endif

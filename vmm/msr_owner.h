/*
 * Which of vmm/'s MSR keepers holds an MSR, for msr_read: one load from a
 * table instead of each keeper's block check in turn (about 25 instructions
 * for an MSR no keeper holds, such as PAT, which the vendor keeps). The
 * table is built once at boot from the keepers' own checks
 * (vlapic_dev_owns_msr, guest_msrs_kept, pc_msrs_in_range,
 * kvm_pv_msr_in_range), so it cannot disagree with them, for the three
 * blocks MSRs lie in (as SVM's permission map splits them); outside those
 * the checks are asked directly. Whatever no keeper holds
 * (MSR_OWNER_NONE) goes to the vendor, then to msr_read_own.
 */
#ifndef POLLUX_VMM_MSR_OWNER_H
#define POLLUX_VMM_MSR_OWNER_H

#include <stdint.h>

enum msr_owner {
    MSR_OWNER_NONE,
    MSR_OWNER_LAPIC,  /* vmm/vlapic_dev.c */
    MSR_OWNER_GUEST,  /* vmm/guest_msrs.c */
    MSR_OWNER_PC,     /* vmm/pc_msrs.c */
    MSR_OWNER_KVM_PV, /* vmm/kvm_pv.c */
};

#define MSR_OWNER_BLOCKS 3
#define MSR_OWNER_BLOCK_SIZE                                                                       \
    0x2000u /* MSRs 0-0x1fff, 0xc0000000-0xc0001fff, 0xc0010000-0xc0011fff */

extern uint8_t msr_owner_table[MSR_OWNER_BLOCKS][MSR_OWNER_BLOCK_SIZE];

/* Fill the table (at boot, before any vCPU runs). */
void msr_owner_init(void);

/* The keepers' block checks, asked in turn: what the table holds, and the answer outside it. */
enum msr_owner msr_owner_by_checks(uint32_t index);

static inline enum msr_owner msr_owner(uint32_t index)
{
    uint32_t base = index & ~(MSR_OWNER_BLOCK_SIZE - 1),
             offset = index & (MSR_OWNER_BLOCK_SIZE - 1);
    if (base == 0)
        return (enum msr_owner)msr_owner_table[0][offset];
    if (base == 0xc0000000u)
        return (enum msr_owner)msr_owner_table[1][offset];
    if (base == 0xc0010000u)
        return (enum msr_owner)msr_owner_table[2][offset];
    return msr_owner_by_checks(index);
}

#endif

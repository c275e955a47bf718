/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which of vmm/'s MSR keepers holds an MSR, for msr_read and msr_write: one
 * load from a table instead of each keeper's check in turn (RDMSR of an MSR
 * no keeper holds, such as PAT, which the vendor keeps, is a fast-path exit:
 * a search of the device table there would cost it). The table is built
 * once at boot from the keepers' own claims (guest_msrs_kept, and the MSR
 * ranges of the built-in devices, vmm/dev/), so it cannot disagree with
 * them, for the three blocks MSRs lie in (as SVM's permission map splits
 * them); outside those the checks are asked directly. MSR_OWNER_DEVICE
 * sends the access to the VM's device table, which finds the device;
 * whatever no keeper holds (MSR_OWNER_NONE) goes to the vendor, then to
 * msr_read_own.
 */
#ifndef POLLUX_VMM_EXIT_MSR_OWNER_H
#define POLLUX_VMM_EXIT_MSR_OWNER_H

#include <stdint.h>

enum msr_owner {
    MSR_OWNER_NONE,
    MSR_OWNER_DEVICE, /* a device's (vmm/dev/device.h): the local APIC, KVM's, the PC's */
    MSR_OWNER_GUEST,  /* vmm/vcpu/guest_msrs.c */
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

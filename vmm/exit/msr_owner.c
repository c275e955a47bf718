/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/msr_owner.h"

#include "vmm/dev/device.h"
#include "vmm/vcpu/guest_msrs.h"

uint8_t msr_owner_table[MSR_OWNER_BLOCKS][MSR_OWNER_BLOCK_SIZE];

static const uint32_t block_base[MSR_OWNER_BLOCKS] = {0, 0xc0000000u, 0xc0010000u};

/* The blocks do not overlap: the order only sets the cost outside the table. */
enum msr_owner msr_owner_by_checks(uint32_t index)
{
    if (guest_msrs_kept(index))
        return MSR_OWNER_GUEST;
    if (builtin_devices_claim_msr(index))
        return MSR_OWNER_DEVICE;
    return MSR_OWNER_NONE;
}

void msr_owner_init(void)
{
    for (unsigned b = 0; b < MSR_OWNER_BLOCKS; b++)
        for (uint32_t i = 0; i < MSR_OWNER_BLOCK_SIZE; i++)
            msr_owner_table[b][i] = (uint8_t)msr_owner_by_checks(block_base[b] + i);
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/pc_msr_state.h"

#include "lib/string.h"

#define HWCR_TSC_FREQ_SEL  (1ull << 24)
#define MTRR_DEF_WRITABLE  0xcffull /* type, FE, E */
#define MTRR_TYPE_VALID(t) ((t) == 0 || (t) == 1 || (t) == 4 || (t) == 5 || (t) == 6)

static const uint32_t fixed_index[MTRR_FIXED_COUNT] = {0x250, 0x258, 0x259, 0x268, 0x269, 0x26a,
                                                       0x26b, 0x26c, 0x26d, 0x26e, 0x26f};

/* AMD MSRs KVM reads as 0 and lets a guest write to no effect. */
static bool amd_zero_msr(uint32_t index)
{
    if (index - 0xc0010000u <= 7 || index - 0xc0010200u <= 0xb) /* PERF_CTL/CTR, legacy and core */
        return true;
    switch (index) {
    case MSR_AMD_SYSCFG:
    case 0xc001001f: /* NB_CFG */
    case 0xc0010112: /* TSEG base */
    case 0xc0010113: /* TSEG mask */
    case MSR_AMD_INT_PENDING:
    case 0xc0010058: /* MMIO_CONF_BASE */
    case MSR_AMD_DE_CFG:
    case 0xc001102a: /* BU_CFG2 */
        return true;
    default:
        return false;
    }
}

static int fixed_slot(uint32_t index)
{
    if (index < fixed_index[0] || index > fixed_index[MTRR_FIXED_COUNT - 1])
        return -1;
    for (int i = 0; i < MTRR_FIXED_COUNT; i++)
        if (fixed_index[i] == index)
            return i;
    return -1;
}

void pc_msrs_reset(struct pc_msrs *m)
{
    memset(m, 0, sizeof(*m));
    m->mtrr_def_type = MTRR_DEF_RESET;
}

enum msr_result pc_msrs_read(const struct pc_msrs *m, uint32_t index, uint64_t *value)
{
    int slot = fixed_slot(index);
    if (slot >= 0)
        *value = m->mtrr_fixed[slot];
    else if (index >= MSR_MTRR_PHYS_BASE && index < MSR_MTRR_PHYS_BASE + 2 * MTRR_VARIABLE)
        *value = m->mtrr_var[index - MSR_MTRR_PHYS_BASE];
    else if (index == MSR_MTRR_CAP)
        *value = MTRR_CAP_VALUE;
    else if (index == MSR_MTRR_DEF_TYPE)
        *value = m->mtrr_def_type;
    else if (index == MSR_AMD_HWCR)
        *value = m->hwcr | HWCR_TSC_FREQ_SEL;
    else if (amd_zero_msr(index))
        *value = 0;
    else
        return MSR_NOT_MINE;
    return MSR_DONE;
}

/* Every byte of a fixed-range MTRR is a memory type. */
static bool fixed_types_valid(uint64_t value)
{
    for (int i = 0; i < 8; i++) {
        uint64_t t = value >> (8 * i) & 0xff;
        if (!MTRR_TYPE_VALID(t))
            return false;
    }
    return true;
}

enum msr_result pc_msrs_write(struct pc_msrs *m, uint32_t index, uint64_t value)
{
    int slot = fixed_slot(index);
    if (slot >= 0) {
        if (!fixed_types_valid(value))
            return MSR_FAULT;
        m->mtrr_fixed[slot] = value;
        return MSR_DONE;
    }
    if (index >= MSR_MTRR_PHYS_BASE && index < MSR_MTRR_PHYS_BASE + 2 * MTRR_VARIABLE) {
        bool base = !((index - MSR_MTRR_PHYS_BASE) & 1);
        if (base && !MTRR_TYPE_VALID(value & 0xff))
            return MSR_FAULT;
        m->mtrr_var[index - MSR_MTRR_PHYS_BASE] = value;
        return MSR_DONE;
    }
    switch (index) {
    case MSR_MTRR_CAP:
        return MSR_FAULT;
    case MSR_MTRR_DEF_TYPE:
        if ((value & ~MTRR_DEF_WRITABLE) || !MTRR_TYPE_VALID(value & 0xff))
            return MSR_FAULT;
        m->mtrr_def_type = value;
        return MSR_DONE;
    case MSR_AMD_HWCR:
        /* The rest of HWCR is reserved to a guest: #GP, as KVM gives. */
        if (value & ~(HWCR_MC_STATUS_WR_EN | HWCR_TSC_FREQ_SEL))
            return MSR_FAULT;
        m->hwcr = value & HWCR_MC_STATUS_WR_EN;
        return MSR_DONE;
    default:
        return amd_zero_msr(index) ? MSR_DONE : MSR_NOT_MINE;
    }
}

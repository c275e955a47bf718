/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/mce_state.h"

#include "lib/string.h"

/* A CTL value KVM accepts: 0, or all ones except perhaps bits 10 and 0 (see the header). */
static bool ctl_ok(uint64_t value)
{
    return value == 0 || (value | (1u << 10) | 1u) == ~0ull;
}

void mce_reset(struct mce_msrs *m)
{
    memset(m, 0, sizeof(*m));
    m->mcg_ctl = ~0ull;
    for (unsigned b = 0; b < MCE_BANKS; b++)
        m->banks[4 * b] = ~0ull;
}

enum msr_result mce_read(const struct mce_msrs *m, uint32_t index, uint64_t *value)
{
    switch (index) {
    case MSR_IA32_MCG_CAP:
        *value = MCG_CTL_P | MCE_BANKS;
        return MSR_DONE;
    case MSR_IA32_MCG_STATUS:
        *value = m->mcg_status;
        return MSR_DONE;
    case MSR_IA32_MCG_CTL:
        *value = m->mcg_ctl;
        return MSR_DONE;
    }
    if (index < MSR_IA32_MC0_CTL || index > MCE_MSR_LAST)
        return MSR_NOT_MINE;
    *value = m->banks[index - MSR_IA32_MC0_CTL];
    return MSR_DONE;
}

enum msr_result mce_write(struct mce_msrs *m, uint32_t index, uint64_t value, bool status_writable)
{
    switch (index) {
    case MSR_IA32_MCG_CAP:
        return MSR_FAULT;
    case MSR_IA32_MCG_STATUS:
        m->mcg_status = value;
        return MSR_DONE;
    case MSR_IA32_MCG_CTL:
        if (value != 0 && value != ~0ull)
            return MSR_FAULT;
        m->mcg_ctl = value;
        return MSR_DONE;
    }
    if (index < MSR_IA32_MC0_CTL || index > MCE_MSR_LAST)
        return MSR_NOT_MINE;
    unsigned offset = index - MSR_IA32_MC0_CTL;
    if (offset % 4 == 0 && !ctl_ok(value))
        return MSR_FAULT;
    if (offset % 4 == 1 && value && !status_writable)
        return MSR_FAULT;
    m->banks[offset] = value;
    return MSR_DONE;
}

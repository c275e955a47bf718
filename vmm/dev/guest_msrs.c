/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/guest_msrs.h"

#define MISC_ENABLE_EMON         (1ull << 7)
#define MISC_ENABLE_BTS_UNAVAIL  (1ull << 11)
#define MISC_ENABLE_PEBS_UNAVAIL (1ull << 12)
#define PRED_CMD_IBPB            1ull

uint64_t host_spec_ctrl;

void guest_msrs_reset(struct guest_msrs *m)
{
    *m = (struct guest_msrs){.misc_enable = MISC_ENABLE_RESET};
}

bool guest_canonical(const struct guest_features *f, uint64_t address)
{
    unsigned shift = f->la57 ? 64 - 57 : 64 - 48;
    return (uint64_t)((int64_t)(address << shift) >> shift) == address;
}

bool guest_msr_canonical(const struct guest_features *f, uint32_t index, uint64_t value)
{
    bool address = index == MSR_FS_BASE || index == MSR_GS_BASE || index == MSR_KERNEL_GS_BASE ||
                   index == MSR_LSTAR || index == MSR_CSTAR || index == MSR_SYSENTER_ESP ||
                   index == MSR_SYSENTER_EIP;
    return !address || guest_canonical(f, value);
}

enum msr_result guest_msrs_read(const struct guest_features *f, const struct guest_msrs *m,
                                uint32_t index, uint64_t *value)
{
    switch (index) {
    case MSR_TSC_AUX:
        if (!f->tsc_aux)
            return MSR_NOT_MINE;
        *value = m->tsc_aux;
        return MSR_DONE;
    case MSR_XSS:
        if (!f->xsaves)
            return MSR_NOT_MINE;
        *value = m->xss;
        return MSR_DONE;
    case MSR_PKRS:
        if (!f->pks)
            return MSR_NOT_MINE;
        *value = m->pkrs;
        return MSR_DONE;
    case MSR_SPEC_CTRL:
        if (!f->spec_ctrl)
            return MSR_NOT_MINE;
        *value = m->spec_ctrl;
        return MSR_DONE;
    case MSR_PRED_CMD: /* write-only */
        return f->ibpb ? MSR_FAULT : MSR_NOT_MINE;
    case MSR_MISC_ENABLE:
        *value = m->misc_enable;
        return MSR_DONE;
    default:
        return MSR_NOT_MINE;
    }
}

static enum msr_result write_misc_enable(struct guest_msrs *m, uint64_t value)
{
    const uint64_t fixed = MISC_ENABLE_BTS_UNAVAIL | MISC_ENABLE_PEBS_UNAVAIL;
    if ((value ^ m->misc_enable) & fixed)
        return MSR_FAULT;
    m->misc_enable = (value & ~MISC_ENABLE_EMON) | (m->misc_enable & MISC_ENABLE_EMON);
    return MSR_DONE;
}

enum msr_result guest_msrs_write(const struct guest_features *f, struct guest_msrs *m,
                                 uint32_t index, uint64_t value, bool *ibpb)
{
    *ibpb = false;
    switch (index) {
    case MSR_TSC_AUX:
        if (!f->tsc_aux)
            return MSR_NOT_MINE;
        /* Bits 63:32 are reserved: Intel faults, AMD ignores them. */
        if (value >> 32 && !f->amd)
            return MSR_FAULT;
        m->tsc_aux = (uint32_t)value;
        return MSR_DONE;
    case MSR_XSS:
        if (!f->xsaves)
            return MSR_NOT_MINE;
        /* CPUID 0xD.1 ECX/EDX offer no supervisor state component. */
        if (value)
            return MSR_FAULT;
        m->xss = value;
        return MSR_DONE;
    case MSR_PKRS:
        if (!f->pks)
            return MSR_NOT_MINE;
        if (value >> 32)
            return MSR_FAULT;
        m->pkrs = value;
        return MSR_DONE;
    case MSR_SPEC_CTRL:
        if (!f->spec_ctrl)
            return MSR_NOT_MINE;
        if (value & ~f->spec_ctrl)
            return MSR_FAULT;
        m->spec_ctrl = value;
        return MSR_DONE;
    case MSR_PRED_CMD:
        if (!f->ibpb)
            return MSR_NOT_MINE;
        if (value & ~PRED_CMD_IBPB)
            return MSR_FAULT;
        *ibpb = value & PRED_CMD_IBPB;
        return MSR_DONE;
    case MSR_MISC_ENABLE:
        return write_misc_enable(m, value);
    default:
        return MSR_NOT_MINE;
    }
}

#ifndef HOST_TEST
void guest_msrs_load(const struct guest_msrs *m)
{
    if (guest_features.tsc_aux)
        wrmsr(MSR_TSC_AUX, m->tsc_aux);
    if (guest_features.xsaves)
        wrmsr(MSR_XSS, m->xss);
    if (guest_features.pks)
        wrmsr(MSR_PKRS, m->pkrs);
}
#endif

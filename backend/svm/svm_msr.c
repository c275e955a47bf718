/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest MSRs the backend keeps (svm_msr.h). */
#include "backend/svm/svm_msr.h"

#include "arch/x86/cpu.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcb.h"
#include "backend/svm/svm_backend.h"

extern uint32_t boot_efer_nxe;

static bool pat_valid(uint64_t pat)
{
    for (int i = 0; i < 8; i++) {
        uint8_t t = (pat >> (8 * i)) & 0xff;
        if (t == 2 || t == 3 || t > 7)
            return false;
    }
    return true;
}

/* The MSRs whose guest copies VMRUN/VMLOAD switch from the VMCB. */
static uint64_t *vmcb_msr(struct vmcb *vmcb, uint32_t index)
{
    switch (index) {
    case MSR_STAR:
        return &vmcb->star;
    case MSR_LSTAR:
        return &vmcb->lstar;
    case MSR_CSTAR:
        return &vmcb->cstar;
    case MSR_SFMASK:
        return &vmcb->sfmask;
    case MSR_KERNEL_GS_BASE:
        return &vmcb->kernel_gs_base;
    case MSR_FS_BASE:
        return &vmcb->fs.base;
    case MSR_GS_BASE:
        return &vmcb->gs.base;
    case MSR_SYSENTER_CS:
        return &vmcb->sysenter_cs;
    case MSR_SYSENTER_ESP:
        return &vmcb->sysenter_esp;
    case MSR_SYSENTER_EIP:
        return &vmcb->sysenter_eip;
    case MSR_PAT:
        return &vmcb->g_pat;
    default:
        return 0;
    }
}

enum msr_result svm_msr_read(struct virt_vcpu *v, uint32_t index, uint64_t *value)
{
    struct vmcb *vmcb = svm(v)->vmcb;
    if (index == MSR_EFER) {
        *value = vmcb->efer & ~(uint64_t)EFER_SVME;
        return MSR_DONE;
    }
    uint64_t *field = vmcb_msr(vmcb, index);
    if (!field)
        return MSR_NOT_MINE;
    *value = *field;
    return MSR_DONE;
}

enum msr_result svm_msr_write(struct virt_vcpu *v, uint32_t index, uint64_t value)
{
    struct vmcb *vmcb = svm(v)->vmcb;
    if (index == MSR_EFER) {
        uint64_t allowed = EFER_SCE | EFER_LME | EFER_LMA | (boot_efer_nxe ? EFER_NXE : 0);
        if (value & ~allowed)
            return MSR_FAULT;
        /* LME may not change while paging is on; LMA is the CPU's to set. */
        if ((vmcb->cr0 & CR0_PG) && ((value ^ vmcb->efer) & EFER_LME))
            return MSR_FAULT;
        vmcb->efer = (value & ~(uint64_t)EFER_LMA) | (vmcb->efer & EFER_LMA) | EFER_SVME;
        return MSR_DONE;
    }
    uint64_t *field = vmcb_msr(vmcb, index);
    if (!field)
        return MSR_NOT_MINE;
    if (index == MSR_PAT && !pat_valid(value))
        return MSR_FAULT;
    *field = (index == MSR_SFMASK || index == MSR_SYSENTER_CS) ? (uint32_t)value : value;
    return MSR_DONE;
}

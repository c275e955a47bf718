/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest MSRs the backend keeps (vmx_msr.h). */
#include "backend/vmx/vmx_msr.h"

#include "arch/x86/virt.h"
#include "backend/vmx/vmx_check.h"
#include "backend/vmx/vmx_insn.h"
#include "backend/vmx/vmx_state.h"
#include "backend/vmx/vmx_vmcs.h"

const uint32_t vmx_syscall_msrs[VMX_SYSCALL_MSRS] = {MSR_STAR, MSR_SFMASK, MSR_LSTAR, MSR_CSTAR,
                                                     MSR_KERNEL_GS_BASE};

static int syscall_slot(uint32_t index)
{
    for (int i = 0; i < VMX_SYSCALL_MSRS; i++)
        if (vmx_syscall_msrs[i] == index)
            return i;
    return -1;
}

/* The MSRs whose guest copies live in VMCS guest-state fields. */
static uint32_t vmcs_msr_field(uint32_t index)
{
    switch (index) {
    case MSR_PAT:
        return VMCS_GUEST_PAT;
    case MSR_FS_BASE:
        return VMCS_GUEST_FS_BASE;
    case MSR_GS_BASE:
        return VMCS_GUEST_GS_BASE;
    case MSR_SYSENTER_CS:
        return VMCS_GUEST_SYSENTER_CS;
    case MSR_SYSENTER_ESP:
        return VMCS_GUEST_SYSENTER_ESP;
    case MSR_SYSENTER_EIP:
        return VMCS_GUEST_SYSENTER_EIP;
    default:
        return 0;
    }
}

enum msr_result vmx_msr_read(struct virt_vcpu *v, uint32_t index, uint64_t *value)
{
    struct vmx_vcpu *s = loaded(v);
    uint32_t field = index == MSR_EFER ? VMCS_GUEST_EFER : vmcs_msr_field(index);
    if (field) {
        *value = vmread(field);
        return MSR_DONE;
    }
    int slot = syscall_slot(index);
    if (slot < 0)
        return MSR_NOT_MINE;
    /* SWAPGS changes KERNEL_GS_BASE without an exit; the others change only by WRMSR. */
    if (slot == VMX_SLOT_KERNEL_GS && s->syscall_in_cpu)
        s->syscall[slot] = rdmsr(MSR_KERNEL_GS_BASE);
    *value = s->syscall[slot];
    return MSR_DONE;
}

enum msr_result vmx_msr_write(struct virt_vcpu *v, uint32_t index, uint64_t value)
{
    struct vmx_vcpu *s = loaded(v);
    if (index == MSR_EFER) {
        uint64_t allowed = EFER_SCE | EFER_LME | EFER_LMA | (virt_features.nx ? EFER_NXE : 0);
        uint64_t efer = vmread(VMCS_GUEST_EFER);
        if (value & ~allowed)
            return MSR_FAULT;
        /* LME may not change while paging is on; LMA follows CR0.PG (vmx_emulate_cr_access). */
        if ((vmx_guest_cr0(s) & CR0_PG) && ((value ^ efer) & EFER_LME))
            return MSR_FAULT;
        vmwrite(VMCS_GUEST_EFER, (value & ~EFER_LMA) | (efer & EFER_LMA));
        return MSR_DONE;
    }
    if (index == MSR_PAT && !vmx_pat_valid(value))
        return MSR_FAULT;
    if (index == MSR_SYSENTER_CS || index == MSR_SFMASK)
        value = (uint32_t)value;
    uint32_t field = vmcs_msr_field(index);
    if (field) {
        vmwrite(field, value);
        return MSR_DONE;
    }
    int slot = syscall_slot(index);
    if (slot < 0)
        return MSR_NOT_MINE;
    s->syscall[slot] = value;
    if (s->syscall_in_cpu)
        wrmsr(index, value);
    else if (value)
        vmx_syscall_msrs_go_live(s);
    return MSR_DONE;
}

static void syscall_msrs_load(const uint64_t *values)
{
    for (unsigned i = 0; i < VMX_SYSCALL_MSRS; i++)
        wrmsr(vmx_syscall_msrs[i], values[i]);
}

void vmx_syscall_msrs_enter(struct vmx_vcpu *s)
{
    if (s->syscall_live && s->on_cpu && !s->syscall_in_cpu) {
        syscall_msrs_load(s->syscall);
        s->syscall_in_cpu = true;
    }
}

void vmx_syscall_msrs_leave(struct vmx_vcpu *s)
{
    if (!s->syscall_in_cpu)
        return;
    s->syscall[VMX_SLOT_KERNEL_GS] = rdmsr(MSR_KERNEL_GS_BASE);
    syscall_msrs_load(cpu_state()->host_syscall);
    s->syscall_in_cpu = false;
}

void vmx_syscall_msrs_go_live(struct vmx_vcpu *s)
{
    s->syscall_live = true;
    vmx_syscall_msrs_enter(s);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* The current VMCS of each CPU (vmx_vmcs.h). */
#include "backend/vmx/vmx_vmcs.h"

#include "arch/x86/cpu.h"
#include "arch/x86/panic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/virt.h"
#include "backend/vmx/vmx.h"
#include "backend/vmx/vmx_insn.h"
#include "drivers/console.h"

void vmx_field_error(const char *insn, uint32_t field)
{
    kprintf("pollux: vmx: %s of VMCS field 0x%04x failed\n", insn, field);
}

/* The host state of this CPU: written whenever a VMCS becomes active here. */
static void write_host(const struct percpu *p)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) idtr;
    __asm__ volatile("sidt %0" : "=m"(idtr));
    vmwrite(VMCS_HOST_CR0, read_cr0());
    vmwrite(VMCS_HOST_CR3, read_cr3());
    vmwrite(VMCS_HOST_CR4, read_cr4());
    vmwrite(VMCS_HOST_CS_SEL, GDT_KERNEL_CODE);
    vmwrite(VMCS_HOST_SS_SEL, GDT_KERNEL_DATA);
    vmwrite(VMCS_HOST_DS_SEL, GDT_KERNEL_DATA);
    vmwrite(VMCS_HOST_ES_SEL, GDT_KERNEL_DATA);
    vmwrite(VMCS_HOST_FS_SEL, 0);
    vmwrite(VMCS_HOST_GS_SEL, 0);
    vmwrite(VMCS_HOST_TR_SEL, GDT_TSS);
    vmwrite(VMCS_HOST_FS_BASE, 0);
    vmwrite(VMCS_HOST_GS_BASE, (uint64_t)p);
    vmwrite(VMCS_HOST_TR_BASE, (uint64_t)&p->tss);
    vmwrite(VMCS_HOST_GDTR_BASE, (uint64_t)p->gdt);
    vmwrite(VMCS_HOST_IDTR_BASE, idtr.base);
    vmwrite(VMCS_HOST_SYSENTER_CS, 0);
    vmwrite(VMCS_HOST_SYSENTER_ESP, 0);
    vmwrite(VMCS_HOST_SYSENTER_EIP, 0);
    vmwrite(VMCS_HOST_EFER, rdmsr(MSR_EFER));
    vmwrite(VMCS_HOST_PAT, rdmsr(MSR_PAT));
    vmwrite(VMCS_HOST_RIP, (uint64_t)vmx_exit_stub);
}

bool vmx_vmcs_switch(struct vmx_vcpu *s, struct percpu *p, struct vmx_cpu *c)
{
    enum vmx_load_action act = vmx_load_action(false, s->last_cpu, p->cpu);
    if (act == VMX_LOAD_REFUSE)
        return false;
    if (!vmptrld((uint64_t)s->vmcs))
        panic("vmx: VMPTRLD of VMCS 0x%lx failed", (unsigned long)(uint64_t)s->vmcs);
    c->current_vmcs = (uint64_t)s->vmcs;
    if (act == VMX_LOAD_FRESH) {
        s->last_cpu = (int)p->cpu;
        write_host(p);
        /* This CPU may cache translations of an earlier user of this EPT root or VPID. */
        s->ept_generation = 0;
        s->flush_vpid = true;
    }
    return true;
}

void vmx_vmcs_clear(struct vmx_vcpu *s)
{
    struct vmx_cpu *c = cpu_state();
    if (!vmclear((uint64_t)s->vmcs))
        panic("vmx: VMCLEAR of VMCS 0x%lx failed", (unsigned long)(uint64_t)s->vmcs);
    if (c->current_vmcs == (uint64_t)s->vmcs)
        c->current_vmcs = 0;
    s->launched = false;
    s->last_cpu = -1;
}

struct vmx_vcpu *vmx_load_or_panic(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    struct percpu *p = this_cpu();
    if (!vmx_vmcs_switch(s, p, p->virt))
        panic("vmx: vCPU %u's VMCS is active on CPU %d, not on CPU %u (no vmx_vcpu_unload)", v->id,
              s->last_cpu, p->cpu);
    return s;
}

void vmx_vcpu_unload(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    if (s->last_cpu < 0)
        return;
    if (s->last_cpu != (int)this_cpu()->cpu)
        panic("vmx_vcpu_unload on CPU %u for a vCPU active on CPU %d", this_cpu()->cpu,
              s->last_cpu);
    vmx_vmcs_clear(s);
}

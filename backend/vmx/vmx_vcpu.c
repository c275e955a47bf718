/* SPDX-License-Identifier: GPL-2.0-only */
/* VMs and vCPUs: creation, reset, destruction (vmx_vcpu.h). */
#include "backend/vmx/vmx_vcpu.h"

#include "arch/x86/mm.h"
#include "arch/x86/pagetable.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/virt.h"
#include "backend/vmx/ept.h"
#include "backend/vmx/vmx_backend.h"
#include "backend/vmx/vmx_insn.h"
#include "backend/vmx/vmx_msr.h"
#include "backend/vmx/vmx_vmcs.h"
#include "drivers/console.h"
#include "lib/string.h"

#define VPID_COUNT   65536
#define PAGES(bytes) (((bytes) + PAGE_SIZE - 1) / PAGE_SIZE)

static struct spinlock vpid_lock;
static uint64_t vpid_used[VPID_COUNT / 64];

int vmx_vm_init(struct virt_vm *vm)
{
    struct vmx_vm *x = page_alloc_zeroed(PAGES(sizeof(*x)));
    if (!x)
        return -1;
    mm_pagetable_init(&x->ept, &pt_format_ept);
    if (pt_init(&x->ept)) {
        pmm_free(&host_pmm, (uint64_t)x, PAGES(sizeof(*x)));
        return -1;
    }
    x->eptp = ept_pointer(x->ept.root, virt_features.ept_ad);
    /* vCPUs start at generation 0, so each flushes this EPTP on its CPU before it first runs. */
    x->generation = 1;
    vm->arch = x;
    return 0;
}

int vmx_vm_map(struct virt_vm *vm, uint64_t gpa, uint64_t hpa, uint64_t len, unsigned perms)
{
    struct vmx_vm *x = vm->arch;
    int rc = pt_map(&x->ept, gpa, hpa, len, perms, virt_features.ept_2m ? PT_2M : PT_4K);
    /* INVEPT acts on one CPU only: every vCPU flushes on its own CPU before its next entry. */
    __atomic_add_fetch(&x->generation, 1, __ATOMIC_RELEASE);
    return rc;
}

void vmx_vm_destroy(struct virt_vm *vm)
{
    struct vmx_vm *x = vm->arch;
    if (!x)
        return;
    pt_destroy(&x->ept, mm_free_table);
    pmm_free(&host_pmm, (uint64_t)x, PAGES(sizeof(*x)));
    vm->arch = 0;
}

static uint16_t vpid_alloc(void)
{
    uint16_t vpid = 0;
    spin_lock(&vpid_lock);
    for (unsigned i = 1; i < VPID_COUNT && !vpid; i++)
        if (!(vpid_used[i / 64] & (1ull << (i % 64)))) {
            vpid_used[i / 64] |= 1ull << (i % 64);
            vpid = (uint16_t)i;
        }
    spin_unlock(&vpid_lock);
    return vpid;
}

static void vpid_free(uint16_t vpid)
{
    spin_lock(&vpid_lock);
    vpid_used[vpid / 64] &= ~(1ull << (vpid % 64));
    spin_unlock(&vpid_lock);
}

int vmx_vcpu_create(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = page_alloc_zeroed(1);
    uint32_t *vmcs = page_alloc_zeroed(1);
    if (!s || !vmcs)
        goto fail;
    vmcs[0] = (uint32_t)(vmx.caps.basic & VMX_BASIC_REVISION);
    /* VMCLEAR initialises the launch state: the first entry will be a VMLAUNCH. */
    if (!vmclear((uint64_t)vmcs))
        goto fail;
    if ((vmx.ctls.available & VMX_OPT_VPID) && !(s->vpid = vpid_alloc()))
        goto fail;
    s->vmcs = vmcs;
    s->last_cpu = -1;
    v->arch = s;
    return 0;
fail:
    if (s)
        pmm_free(&host_pmm, (uint64_t)s, 1);
    if (vmcs)
        pmm_free(&host_pmm, (uint64_t)vmcs, 1);
    return -1;
}

void vmx_vcpu_destroy(struct virt_vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    if (!s)
        return;
    if (s->last_cpu == (int)this_cpu()->cpu) {
        vmx_vmcs_clear(s);
    } else if (s->last_cpu >= 0) {
        /*
         * Only that CPU can VMCLEAR it (vcpu_unload there), and until then it
         * may write cached VMCS data back: better leak the page than reuse it.
         */
        kprintf("pollux: vmx: vCPU %u of %s destroyed while active on CPU %d (no vcpu_unload "
                "there): VMCS page leaked\n",
                v->id, v->vm->name, s->last_cpu);
        s->vmcs = 0;
    }
    if (s->vmcs)
        pmm_free(&host_pmm, (uint64_t)s->vmcs, 1);
    if (s->vpid)
        vpid_free(s->vpid);
    pmm_free(&host_pmm, (uint64_t)s, 1);
    v->arch = 0;
}

static void write_controls(const struct vmx_control_state *k)
{
    vmwrite(VMCS_PIN_CONTROLS, k->pin);
    vmwrite(VMCS_PROC_CONTROLS, k->proc);
    vmwrite(VMCS_PROC2_CONTROLS, k->proc2);
    vmwrite(VMCS_EXIT_CONTROLS, k->exit);
    vmwrite(VMCS_ENTRY_CONTROLS, k->entry);
    vmwrite(VMCS_EXCEPTION_BITMAP, k->exception_bitmap);
    vmwrite(VMCS_CR3_TARGET_COUNT, k->cr3_target_count);
    vmwrite(VMCS_EXIT_MSR_STORE_COUNT, k->exit_msr_store_count);
    vmwrite(VMCS_EXIT_MSR_LOAD_COUNT, k->exit_msr_load_count);
    vmwrite(VMCS_ENTRY_MSR_LOAD_COUNT, k->entry_msr_load_count);
    vmwrite(VMCS_ENTRY_INTR_INFO, k->entry_intr_info);
    vmwrite(VMCS_ENTRY_ERROR_CODE, k->entry_error_code);
    vmwrite(VMCS_ENTRY_INSN_LEN, k->entry_insn_len);
    vmwrite(VMCS_IO_BITMAP_A, k->io_bitmap_a);
    vmwrite(VMCS_IO_BITMAP_B, k->io_bitmap_b);
    vmwrite(VMCS_MSR_BITMAP, k->msr_bitmap);
    vmwrite(VMCS_EPT_POINTER, k->eptp);
    vmwrite(VMCS_TSC_OFFSET, k->tsc_offset);
    vmwrite(VMCS_CR0_MASK, k->cr0_mask);
    vmwrite(VMCS_CR4_MASK, k->cr4_mask);
    vmwrite(VMCS_CR0_SHADOW, k->cr0_shadow);
    vmwrite(VMCS_CR4_SHADOW, k->cr4_shadow);
    /* Fields of optional features exist only where the CPU has them. */
    if (vmx.ctls.available & VMX_OPT_VPID)
        vmwrite(VMCS_VPID, k->vpid);
    if (vmx.ctls.available & VMX_OPT_PLE) {
        vmwrite(VMCS_PLE_GAP, k->ple_gap);
        vmwrite(VMCS_PLE_WINDOW, k->ple_window);
    }
    if (vmx.ctls.available & VMX_OPT_XSAVES)
        vmwrite(VMCS_XSS_EXIT_BITMAP, 0); /* no XSAVES/XRSTORS component exits */
}

static void write_guest(const struct vmx_guest_state *g)
{
    vmwrite(VMCS_GUEST_CR0, g->cr0);
    vmwrite(VMCS_GUEST_CR3, g->cr3);
    vmwrite(VMCS_GUEST_CR4, g->cr4);
    vmwrite(VMCS_GUEST_DR7, g->dr7);
    vmwrite(VMCS_GUEST_DEBUGCTL, g->debugctl);
    vmwrite(VMCS_GUEST_EFER, g->efer);
    vmwrite(VMCS_GUEST_PAT, g->pat);
    vmwrite(VMCS_GUEST_RSP, g->rsp);
    vmwrite(VMCS_GUEST_RIP, g->rip);
    vmwrite(VMCS_GUEST_RFLAGS, g->rflags);
    vmwrite(VMCS_GUEST_PENDING_DBG, g->pending_dbg);
    vmwrite(VMCS_LINK_POINTER, g->link);
    vmwrite(VMCS_GUEST_SYSENTER_CS, g->sysenter_cs);
    vmwrite(VMCS_GUEST_SYSENTER_ESP, g->sysenter_esp);
    vmwrite(VMCS_GUEST_SYSENTER_EIP, g->sysenter_eip);
    for (unsigned i = 0; i < SEG_COUNT; i++) {
        vmwrite(VMCS_GUEST_ES_SEL + 2 * i, g->seg[i].sel);
        vmwrite(VMCS_GUEST_ES_LIMIT + 2 * i, g->seg[i].limit);
        vmwrite(VMCS_GUEST_ES_AR + 2 * i, g->seg[i].ar);
        vmwrite(VMCS_GUEST_ES_BASE + 2 * i, g->seg[i].base);
    }
    vmwrite(VMCS_GUEST_GDTR_BASE, g->gdtr_base);
    vmwrite(VMCS_GUEST_GDTR_LIMIT, g->gdtr_limit);
    vmwrite(VMCS_GUEST_IDTR_BASE, g->idtr_base);
    vmwrite(VMCS_GUEST_IDTR_LIMIT, g->idtr_limit);
    vmwrite(VMCS_GUEST_INTERRUPTIBILITY, g->interruptibility);
    vmwrite(VMCS_GUEST_ACTIVITY, g->activity);
    for (unsigned i = 0; i < 4; i++)
        vmwrite(VMCS_GUEST_PDPTE0 + 2 * i, g->pdpte[i]);
}

/* Load a reset state (vmx_reset_state*) into the VMCS and the vCPU. */
static void reset_vcpu(struct virt_vcpu *v, struct vmcs_state *st)
{
    struct vmx_vcpu *s = loaded(v);
    struct vmx_vm *x = v->vm->arch;
    st->ctl.io_bitmap_a = vmx.io_bitmap_pa;
    st->ctl.io_bitmap_b = vmx.io_bitmap_pa + PAGE_SIZE;
    st->ctl.msr_bitmap = vmx.msr_bitmap_pa;
    st->ctl.eptp = x->eptp;
    st->ctl.vpid = s->vpid;
    st->ctl.tsc_offset = v->tsc_offset;
    vmx_pause_controls(vmx.ctls.available, s->pause_mode, &st->ctl.proc, &st->ctl.proc2);
    st->ctl.ple_gap = s->vmcs_ple_gap = s->ple_gap;
    st->ctl.ple_window = s->vmcs_ple_window = s->ple_window;
    write_controls(&st->ctl);
    write_guest(&st->guest);

    s->pin = s->vmcs_pin = st->ctl.pin;
    s->proc = s->vmcs_proc = st->ctl.proc;
    s->proc2 = s->vmcs_proc2 = st->ctl.proc2;
    s->entry = s->vmcs_entry = st->ctl.entry;
    s->tsc_offset = s->vmcs_tsc_offset = st->ctl.tsc_offset;
    s->cr0_shadow = st->ctl.cr0_shadow;
    s->cr4_shadow = st->ctl.cr4_shadow;
    s->controls_changed = false;
    s->timer_deadline = 0;
    s->vmcs_timer = TIMER_UNKNOWN;
    s->timer_setting = TIMER_UNKNOWN;
    s->timer_if = TIMER_RECOMPUTE;
    s->event_injected = false;
    s->reinject = 0;
    vmx_syscall_msrs_leave(s);
    memset(s->syscall, 0, sizeof(s->syscall));
    s->syscall_live = false;
    s->cr2 = 0; /* its value at RESET and INIT */
    if (s->on_cpu)
        write_cr2(0);
    v->regs =
        (struct guest_regs){.rip = st->guest.rip, .rsp = st->guest.rsp, .rflags = st->guest.rflags};
    /* Leave the VMCS clear: the vCPU may run on another CPU next. */
    vmx_vmcs_clear(s);
}

void vmx_vcpu_reset_protected(struct virt_vcpu *v, uint32_t entry)
{
    struct vmcs_state st;
    vmx_reset_state(&vmx.caps, &vmx.ctls, entry, &st);
    reset_vcpu(v, &st);
}

void vmx_vcpu_reset_real(struct virt_vcpu *v, uint8_t sipi_vector)
{
    struct vmcs_state st;
    vmx_reset_state_real(&vmx.caps, &vmx.ctls, sipi_vector, &st);
    reset_vcpu(v, &st);
}

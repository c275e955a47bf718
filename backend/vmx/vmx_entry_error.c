/* SPDX-License-Identifier: GPL-2.0-only */
/* Naming why a VM entry failed (vmx_entry_error.h). */
#include "backend/vmx/vmx_entry_error.h"

#include "backend/vmx/vmx_check.h"
#include "backend/vmx/vmx_insn.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/string.h"

static void read_controls(struct vmx_control_state *k)
{
    k->pin = (uint32_t)vmread(VMCS_PIN_CONTROLS);
    k->proc = (uint32_t)vmread(VMCS_PROC_CONTROLS);
    k->proc2 = (uint32_t)vmread(VMCS_PROC2_CONTROLS);
    k->exit = (uint32_t)vmread(VMCS_EXIT_CONTROLS);
    k->entry = (uint32_t)vmread(VMCS_ENTRY_CONTROLS);
    k->exception_bitmap = (uint32_t)vmread(VMCS_EXCEPTION_BITMAP);
    k->cr3_target_count = (uint32_t)vmread(VMCS_CR3_TARGET_COUNT);
    k->exit_msr_store_count = (uint32_t)vmread(VMCS_EXIT_MSR_STORE_COUNT);
    k->exit_msr_load_count = (uint32_t)vmread(VMCS_EXIT_MSR_LOAD_COUNT);
    k->entry_msr_load_count = (uint32_t)vmread(VMCS_ENTRY_MSR_LOAD_COUNT);
    k->entry_intr_info = (uint32_t)vmread(VMCS_ENTRY_INTR_INFO);
    k->entry_error_code = (uint32_t)vmread(VMCS_ENTRY_ERROR_CODE);
    k->entry_insn_len = (uint32_t)vmread(VMCS_ENTRY_INSN_LEN);
    k->io_bitmap_a = vmread(VMCS_IO_BITMAP_A);
    k->io_bitmap_b = vmread(VMCS_IO_BITMAP_B);
    k->msr_bitmap = vmread(VMCS_MSR_BITMAP);
    k->eptp = vmread(VMCS_EPT_POINTER);
    k->tsc_offset = vmread(VMCS_TSC_OFFSET);
    k->cr0_mask = vmread(VMCS_CR0_MASK);
    k->cr4_mask = vmread(VMCS_CR4_MASK);
    k->cr0_shadow = vmread(VMCS_CR0_SHADOW);
    k->cr4_shadow = vmread(VMCS_CR4_SHADOW);
    if (vmx.ctls.available & VMX_OPT_VPID)
        k->vpid = (uint16_t)vmread(VMCS_VPID);
    if (vmx.ctls.available & VMX_OPT_PLE) {
        k->ple_gap = (uint32_t)vmread(VMCS_PLE_GAP);
        k->ple_window = (uint32_t)vmread(VMCS_PLE_WINDOW);
    }
}

static void read_guest(struct vmx_guest_state *g)
{
    g->cr0 = vmread(VMCS_GUEST_CR0);
    g->cr3 = vmread(VMCS_GUEST_CR3);
    g->cr4 = vmread(VMCS_GUEST_CR4);
    g->dr7 = vmread(VMCS_GUEST_DR7);
    g->debugctl = vmread(VMCS_GUEST_DEBUGCTL);
    g->efer = vmread(VMCS_GUEST_EFER);
    g->pat = vmread(VMCS_GUEST_PAT);
    g->rsp = vmread(VMCS_GUEST_RSP);
    g->rip = vmread(VMCS_GUEST_RIP);
    g->rflags = vmread(VMCS_GUEST_RFLAGS);
    g->pending_dbg = vmread(VMCS_GUEST_PENDING_DBG);
    g->link = vmread(VMCS_LINK_POINTER);
    g->sysenter_cs = (uint32_t)vmread(VMCS_GUEST_SYSENTER_CS);
    g->sysenter_esp = vmread(VMCS_GUEST_SYSENTER_ESP);
    g->sysenter_eip = vmread(VMCS_GUEST_SYSENTER_EIP);
    for (unsigned i = 0; i < SEG_COUNT; i++) {
        g->seg[i].sel = (uint16_t)vmread(VMCS_GUEST_ES_SEL + 2 * i);
        g->seg[i].limit = (uint32_t)vmread(VMCS_GUEST_ES_LIMIT + 2 * i);
        g->seg[i].ar = (uint32_t)vmread(VMCS_GUEST_ES_AR + 2 * i);
        g->seg[i].base = vmread(VMCS_GUEST_ES_BASE + 2 * i);
    }
    g->gdtr_base = vmread(VMCS_GUEST_GDTR_BASE);
    g->gdtr_limit = (uint32_t)vmread(VMCS_GUEST_GDTR_LIMIT);
    g->idtr_base = vmread(VMCS_GUEST_IDTR_BASE);
    g->idtr_limit = (uint32_t)vmread(VMCS_GUEST_IDTR_LIMIT);
    g->interruptibility = (uint32_t)vmread(VMCS_GUEST_INTERRUPTIBILITY);
    g->activity = (uint32_t)vmread(VMCS_GUEST_ACTIVITY);
    for (unsigned i = 0; i < 4; i++)
        g->pdpte[i] = vmread(VMCS_GUEST_PDPTE0 + 2 * i);
}

static void read_host(struct vmx_host_state *h)
{
    h->cr0 = vmread(VMCS_HOST_CR0);
    h->cr3 = vmread(VMCS_HOST_CR3);
    h->cr4 = vmread(VMCS_HOST_CR4);
    h->cs = (uint16_t)vmread(VMCS_HOST_CS_SEL);
    h->ss = (uint16_t)vmread(VMCS_HOST_SS_SEL);
    h->ds = (uint16_t)vmread(VMCS_HOST_DS_SEL);
    h->es = (uint16_t)vmread(VMCS_HOST_ES_SEL);
    h->fs = (uint16_t)vmread(VMCS_HOST_FS_SEL);
    h->gs = (uint16_t)vmread(VMCS_HOST_GS_SEL);
    h->tr = (uint16_t)vmread(VMCS_HOST_TR_SEL);
    h->fs_base = vmread(VMCS_HOST_FS_BASE);
    h->gs_base = vmread(VMCS_HOST_GS_BASE);
    h->tr_base = vmread(VMCS_HOST_TR_BASE);
    h->gdtr_base = vmread(VMCS_HOST_GDTR_BASE);
    h->idtr_base = vmread(VMCS_HOST_IDTR_BASE);
    h->sysenter_cs = (uint32_t)vmread(VMCS_HOST_SYSENTER_CS);
    h->sysenter_esp = vmread(VMCS_HOST_SYSENTER_ESP);
    h->sysenter_eip = vmread(VMCS_HOST_SYSENTER_EIP);
    h->efer = vmread(VMCS_HOST_EFER);
    h->pat = vmread(VMCS_HOST_PAT);
    h->rsp = vmread(VMCS_HOST_RSP);
    h->rip = vmread(VMCS_HOST_RIP);
}

static void read_state(struct vmcs_state *s)
{
    memset(s, 0, sizeof(*s));
    read_controls(&s->ctl);
    read_host(&s->host);
    read_guest(&s->guest);
}

static const char *insn_error_name(uint32_t err)
{
    switch (err) {
    case VMXERR_LAUNCH_NOT_CLEAR:
        return "VMLAUNCH with a non-clear VMCS";
    case VMXERR_RESUME_NOT_LAUNCHED:
        return "VMRESUME with a non-launched VMCS";
    case VMXERR_BAD_CONTROLS:
        return "invalid control fields";
    case VMXERR_BAD_HOST:
        return "invalid host-state fields";
    case VMXERR_BAD_EVENT_BLOCKING:
        return "event injection under blocking by MOV SS";
    default:
        return "see the SDM's VM-instruction error numbers";
    }
}

static void dump_segment(const char *name, const struct vmx_segment *g)
{
    kprintf("vmx:   %-4s sel 0x%04x base 0x%lx limit 0x%x ar 0x%x\n", name, g->sel,
            (unsigned long)g->base, g->limit, g->ar);
}

/* The fields VM entry checks, for the console when an entry fails. */
static void dump_vmcs(const struct vmcs_state *st)
{
    static const char *const names[SEG_COUNT] = {"ES", "CS", "SS", "DS", "FS", "GS", "LDTR", "TR"};
    const struct vmx_control_state *k = &st->ctl;
    const struct vmx_host_state *h = &st->host;
    const struct vmx_guest_state *g = &st->guest;
    kprintf("vmx: controls pin 0x%x proc 0x%x proc2 0x%x exit 0x%x entry 0x%x eptp 0x%lx vpid %u\n",
            k->pin, k->proc, k->proc2, k->exit, k->entry, (unsigned long)k->eptp, k->vpid);
    kprintf("vmx: event 0x%x error 0x%x length %u; cr0 mask 0x%lx shadow 0x%lx, cr4 mask 0x%lx "
            "shadow 0x%lx\n",
            k->entry_intr_info, k->entry_error_code, k->entry_insn_len, (unsigned long)k->cr0_mask,
            (unsigned long)k->cr0_shadow, (unsigned long)k->cr4_mask, (unsigned long)k->cr4_shadow);
    kprintf("vmx: guest cr0 0x%lx cr3 0x%lx cr4 0x%lx efer 0x%lx pat 0x%lx dr7 0x%lx\n",
            (unsigned long)g->cr0, (unsigned long)g->cr3, (unsigned long)g->cr4,
            (unsigned long)g->efer, (unsigned long)g->pat, (unsigned long)g->dr7);
    kprintf("vmx: guest rip 0x%lx rsp 0x%lx rflags 0x%lx activity %u interruptibility 0x%x "
            "pending_dbg 0x%lx link 0x%lx\n",
            (unsigned long)g->rip, (unsigned long)g->rsp, (unsigned long)g->rflags, g->activity,
            g->interruptibility, (unsigned long)g->pending_dbg, (unsigned long)g->link);
    for (unsigned i = 0; i < SEG_COUNT; i++)
        dump_segment(names[i], &g->seg[i]);
    kprintf("vmx:   GDTR base 0x%lx limit 0x%x, IDTR base 0x%lx limit 0x%x\n",
            (unsigned long)g->gdtr_base, g->gdtr_limit, (unsigned long)g->idtr_base, g->idtr_limit);
    kprintf("vmx: host cr0 0x%lx cr3 0x%lx cr4 0x%lx efer 0x%lx pat 0x%lx rip 0x%lx rsp 0x%lx\n",
            (unsigned long)h->cr0, (unsigned long)h->cr3, (unsigned long)h->cr4,
            (unsigned long)h->efer, (unsigned long)h->pat, (unsigned long)h->rip,
            (unsigned long)h->rsp);
    kprintf("vmx: host cs 0x%x ss 0x%x ds 0x%x es 0x%x fs 0x%x gs 0x%x tr 0x%x; gs_base 0x%lx "
            "tr_base 0x%lx gdtr 0x%lx idtr 0x%lx\n",
            h->cs, h->ss, h->ds, h->es, h->fs, h->gs, h->tr, (unsigned long)h->gs_base,
            (unsigned long)h->tr_base, (unsigned long)h->gdtr_base, (unsigned long)h->idtr_base);
}

/* VMLAUNCH/VMRESUME itself failed: name the VM-instruction error and the failing check. */
void vmx_entry_vmfail(struct vmx_vcpu *s, int rc, struct exit_record *e)
{
    const char *insn = s->launched ? "VMRESUME" : "VMLAUNCH";
    memset(e, 0, sizeof(*e));
    e->reason = EXIT_ENTRY_FAILED;
    e->insn_kind = -1;
    e->fail.what = s->msg;
    if (rc == VMX_FAIL_INVALID) {
        snprintf(s->msg, sizeof(s->msg), "%s failed: VMfailInvalid (no current VMCS)", insn);
        return;
    }
    uint32_t err = (uint32_t)vmread(VMCS_INSN_ERROR);
    struct vmcs_state st;
    read_state(&st);
    char why[160];
    int bad = err == VMXERR_BAD_CONTROLS ? vmx_check_controls(&vmx.caps, &st, why, sizeof(why))
              : err == VMXERR_BAD_HOST   ? vmx_check_host(&vmx.caps, &st, why, sizeof(why))
                                         : vmx_check_entry(&vmx.caps, &st, why, sizeof(why));
    snprintf(s->msg, sizeof(s->msg), "%s failed: VM-instruction error %u (%s): %s", insn, err,
             insn_error_name(err), bad ? why : "no software check fails");
    e->vendor_code = err;
    e->fail.detail = err;
    kprintf("pollux: vmx: %s\n", s->msg);
    dump_vmcs(&st);
}

/* VM entry failed on the guest state (exit reasons 33, 34, 41): name the failing check. */
void vmx_entry_failure(struct vmx_vcpu *s, struct vmx_exit_info *xi, struct exit_record *e)
{
    struct vmcs_state st;
    char why[160];
    read_state(&st);
    xi->failed_check = vmx_check_guest(&vmx.caps, &st, why, sizeof(why)) ? why : 0;
    vmx_decode_exit(xi, e, s->msg, sizeof(s->msg));
    kprintf("pollux: vmx: %s\n", s->msg);
    dump_vmcs(&st);
}

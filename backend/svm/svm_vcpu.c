/* SPDX-License-Identifier: GPL-2.0-only */
/* vCPUs: creation, reset, destruction (svm_vcpu.h). */
#include "backend/svm/svm_vcpu.h"

#include "arch/x86/mm.h"
#include "arch/x86/pagetable.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmcb.h"
#include "backend/svm/svm_backend.h"
#include "backend/svm/svm_intr.h"
#include "backend/svm/svm_sched.h"
#include "lib/string.h"

int svm_vcpu_create(struct virt_vcpu *v)
{
    struct svm_vcpu *s = page_alloc_zeroed(1);
    struct vmcb *vmcb = page_alloc_zeroed(1);
    if (!s || !vmcb) {
        if (s)
            pmm_free(&host_pmm, (uint64_t)s, 1);
        if (vmcb)
            pmm_free(&host_pmm, (uint64_t)vmcb, 1);
        return -1;
    }
    s->vmcb = vmcb;
    s->asid.cpu = -1;
    v->arch = s;
    return 0;
}

void svm_vcpu_destroy(struct virt_vcpu *v)
{
    struct svm_vcpu *s = svm(v);
    if (!s)
        return;
    pmm_free(&host_pmm, (uint64_t)s->vmcb, 1);
    pmm_free(&host_pmm, (uint64_t)s, 1);
    v->arch = 0;
}

void svm_apply_pause(struct svm_vcpu *s)
{
    struct svm_pause_fields f = svm_pause_filter(s->pause_mode, s->pause_window, s->pause_gap,
                                                 virt_features.pause_filter_thresh);
    struct vmcb *vmcb = s->vmcb;
    if (f.intercept)
        vmcb->intercept_misc1 |= SVM_INTERCEPT_PAUSE;
    else
        vmcb->intercept_misc1 &= ~SVM_INTERCEPT_PAUSE;
    vmcb->pause_filter_count = f.count;
    vmcb->pause_filter_thresh = f.thresh;
}

/* State shared by every reset: intercepts, nested paging, TSC offset, no pending event. */
static struct vmcb *reset_common(struct virt_vcpu *v)
{
    struct svm_vcpu *s = svm(v);
    struct vmcb *vmcb = s->vmcb;
    struct pagetable *npt = v->vm->arch;
    memset(vmcb, 0, sizeof(*vmcb));

    vmcb->intercept_misc1 = SVM_INTERCEPT_INTR | SVM_INTERCEPT_NMI | SVM_INTERCEPT_CPUID |
                            SVM_INTERCEPT_INVD | SVM_INTERCEPT_INVLPGA | SVM_INTERCEPT_IOIO |
                            SVM_INTERCEPT_MSR | SVM_INTERCEPT_SHUTDOWN;
    vmcb->intercept_misc2 = SVM_INTERCEPT_VMRUN | SVM_INTERCEPT_VMMCALL | SVM_INTERCEPT_VMLOAD |
                            SVM_INTERCEPT_VMSAVE | SVM_INTERCEPT_STGI | SVM_INTERCEPT_CLGI |
                            SVM_INTERCEPT_SKINIT | SVM_INTERCEPT_WBINVD | SVM_INTERCEPT_MONITOR |
                            SVM_INTERCEPT_MWAIT | SVM_INTERCEPT_XSETBV | SVM_INTERCEPT_RDPRU;
    struct svm_hlt_bits hlt = svm_hlt_intercept(
        svm_setup.hlt_mode, (struct svm_hlt_bits){vmcb->intercept_misc1, vmcb->intercept_misc3});
    vmcb->intercept_misc1 = hlt.misc1;
    vmcb->intercept_misc3 = hlt.misc3;
    vmcb->iopm_base_pa = svm_setup.iopm_pa;
    vmcb->msrpm_base_pa = svm_setup.msrpm_pa;
    vmcb->tsc_offset = v->tsc_offset;
    /* With V_INTR_MASKING the host's IF, not the guest's, gates physical interrupts. */
    vmcb->vintr = SVM_VINTR_MASKING;
    vmcb->np_enable = 1;
    vmcb->n_cr3 = npt->root;
    svm_apply_pause(s);

    svm_vmcb_reset_state(vmcb);
    set_seg(&vmcb->gdtr, 0, 0, 0xffff);
    set_seg(&vmcb->idtr, 0, 0, 0xffff);
    vmcb->cpl = 0;
    vmcb->cr4 = 0;
    v->regs = (struct guest_regs){.rflags = 0x2};
    s->asid.cpu = -1; /* the VMCB's ASID was just cleared */
    s->reinject = 0;
    s->offered = -1;
    s->nmi_masked = false;
    s->iret_seen = false;
    s->nmi_step = false;
    return vmcb;
}

void svm_vcpu_reset_protected(struct virt_vcpu *v, uint32_t entry)
{
    svm_vmcb_flat_protected(reset_common(v));
    v->regs.rip = entry;
}

void svm_vcpu_reset_real(struct virt_vcpu *v, uint8_t sipi_vector)
{
    struct vmcb *vmcb = reset_common(v);
    set_seg(&vmcb->cs, (uint16_t)(sipi_vector << 8), 0x9b, 0xffff);
    vmcb->cs.base = (uint64_t)sipi_vector << 12;
    set_seg(&vmcb->ds, 0, 0x93, 0xffff);
    vmcb->es = vmcb->ss = vmcb->fs = vmcb->gs = vmcb->ds;
    vmcb->cr0 = 0x10; /* ET; caches on (CD/NW would only slow an emulated guest) */
    v->regs.rip = 0;
}

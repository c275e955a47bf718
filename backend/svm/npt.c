/* SPDX-License-Identifier: GPL-2.0-only */
/* Nested page tables (npt.h). */
#include "backend/svm/npt.h"

#include "arch/x86/mm.h"
#include "arch/x86/pagetable.h"
#include "arch/x86/pmm.h"
#include "arch/x86/virt.h"

extern uint32_t boot_efer_nxe;

int svm_vm_init(struct virt_vm *vm)
{
    struct pagetable *pt = page_alloc_zeroed(1);
    if (!pt)
        return -1;
    mm_pagetable_init(pt, boot_efer_nxe ? &pt_format_x86_nx : &pt_format_x86);
    if (pt_init(pt)) {
        pmm_free(&host_pmm, (uint64_t)pt, 1);
        return -1;
    }
    vm->arch = pt;
    return 0;
}

int svm_vm_map(struct virt_vm *vm, uint64_t gpa, uint64_t hpa, uint64_t len, unsigned perms)
{
    /* Nested page-table accesses count as user accesses: U must be set. */
    return pt_map(vm->arch, gpa, hpa, len, perms | PT_USER, PT_2M);
}

void svm_vm_destroy(struct virt_vm *vm)
{
    struct pagetable *pt = vm->arch;
    if (!pt)
        return;
    pt_destroy(pt, mm_free_table);
    pmm_free(&host_pmm, (uint64_t)pt, 1);
    vm->arch = 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The local APIC as a device of the VM: guest accesses (xAPIC MMIO through
 * nested page faults on the page IA32_APIC_BASE puts it at, 0xFEE00000 at
 * power-on, the x2APIC and TSC-deadline MSRs, IA32_APIC_BASE) and the IPIs
 * its ICR sends to the VM's vCPUs.
 */
#ifndef POLLUX_VMM_DEV_VLAPIC_DEV_H
#define POLLUX_VMM_DEV_VLAPIC_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/vm.h"

#define XAPIC_PAGE_SIZE 0x1000

/*
 * A nested page fault that is a data access (not a fetch) to v's own xAPIC
 * page, wherever its IA32_APIC_BASE put it. Each vCPU's page may be
 * elsewhere, so it is not a claim in the device table: the fast path and
 * handle_npf ask this first, before the table, as KVM asks the local APIC
 * before its MMIO bus (a page moved onto another device's hides it from
 * that vCPU). A page moved into guest RAM never faults: RAM answers there.
 */
static inline bool xapic_page_access(const struct vcpu *v, const struct exit_record *e)
{
    return e->npf.gpa - vlapic_base_address(&v->lapic) < XAPIC_PAGE_SIZE && !e->npf.fetch;
}

/*
 * An IPI from src to one named vCPU, past the ICR (KVM_HC_SEND_IPI,
 * vmm/dev/kvm_pv_sched.c): true if its APIC accepted it (KVM's kvm_apic_set_irq).
 */
bool vlapic_dev_send(struct vcpu *src, struct vcpu *target, const struct vlapic_ipi *ipi);

/* An interrupt message from a device (the I/O APIC) to the local APICs it addresses. */
void vlapic_dev_interrupt(struct vm *vm, const struct vlapic_ipi *msg);

#endif

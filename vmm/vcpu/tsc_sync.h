/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's TSC, as KVM 6.1 keeps it (arch/x86/kvm/x86.c): each vCPU has its
 * own offset (guest TSC = host TSC + offset) and its own IA32_TSC_ADJUST.
 * Writes from the host side go through kvm_synchronize_tsc, which matches
 * them across vCPUs; pollux's only one is a vCPU's creation (KVM's write of
 * 0 in kvm_arch_vcpu_postcreate), which always matches: every vCPU takes the
 * first's offset, so the VM's TSCs all read 0 at its first vCPU's creation.
 * A guest's own WRMSR is never matched (kvm_set_msr_common): IA32_TSC moves
 * its vCPU's offset and TSC_ADJUST by the same step, IA32_TSC_ADJUST moves
 * the offset by its change. Pure: the caller reads the host TSC; vmm.c
 * creates a VM's vCPUs one after another, and a vCPU's writes are its own,
 * on its own CPU.
 */
#ifndef POLLUX_VMM_VCPU_TSC_SYNC_H
#define POLLUX_VMM_VCPU_TSC_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#define MSR_TSC        0x10
#define MSR_TSC_ADJUST 0x3b

/* A VM's: KVM's cur_tsc_offset, for good (no later host-side write). */
struct tsc_sync {
    uint64_t offset;
    bool begun; /* its first vCPU was created */
};

/* A vCPU's creation at host_tsc: its offset (its TSC_ADJUST starts at 0). */
uint64_t tsc_create(struct tsc_sync *s, uint64_t host_tsc);

/*
 * The guest's WRMSR of value to the IA32_TSC of the vCPU whose offset is
 * *offset and IA32_TSC_ADJUST *adjust, at host_tsc.
 */
void tsc_write(uint64_t *offset, uint64_t *adjust, uint64_t value, uint64_t host_tsc);

/* The guest's WRMSR of value to that vCPU's IA32_TSC_ADJUST. */
void tsc_adjust_write(uint64_t *offset, uint64_t *adjust, uint64_t value);

#endif

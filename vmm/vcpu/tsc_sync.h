/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's TSC writes, KVM's way (arch/x86/kvm/x86.c kvm_synchronize_tsc): each
 * vCPU has its own TSC offset, and only a write's own vCPU changes. A write
 * is a synchronization ("matched") when it is a vCPU's creation or lands
 * within one second of where the last write's value has got to since
 * (KVM's last_tsc_write plus the elapsed ticks): the writer then takes the
 * current generation's offset, as if the vCPUs had written at one instant.
 * Any other write gives the writer offset = value - host TSC and begins a
 * new generation that it alone is in. Pure: the caller holds the VM's lock
 * and reads the host TSC.
 */
#ifndef POLLUX_VMM_VCPU_TSC_SYNC_H
#define POLLUX_VMM_VCPU_TSC_SYNC_H

#include <stdbool.h>
#include <stdint.h>

struct tsc_sync {
    uint64_t last_write;    /* KVM's last_tsc_write: the value last written */
    uint64_t last_host_tsc; /* the host TSC at that write (KVM's last_tsc_nsec) */
    uint64_t cur_offset;    /* cur_tsc_offset: the current generation's */
    uint64_t generation;    /* cur_tsc_generation: 0 until the first vCPU is created */
    unsigned nr_matched;    /* nr_vcpus_matched_tsc: those that joined it after its first */
};

/* What one write did to its vCPU. */
struct tsc_write {
    uint64_t offset; /* the vCPU's TSC offset from now on: guest TSC = host TSC + offset */
    bool matched;    /* it joined the current generation; else it began a new one */
};

/*
 * The write of value to the TSC of a vCPU in *vcpu_generation (0: none yet)
 * at host_tsc, or its creation (creating, value 0: KVM's write of 0 at
 * creation); tsc_hz is the TSC's rate, the matching window's width.
 * *vcpu_generation becomes the generation the vCPU is in.
 */
struct tsc_write tsc_synchronize(struct tsc_sync *s, uint64_t *vcpu_generation, uint64_t value,
                                 bool creating, uint64_t host_tsc, uint64_t tsc_hz);

/* Every one of nvcpus vCPUs is in the current generation: KVM keeps its masterclock. */
bool tsc_sync_all_matched(const struct tsc_sync *s, unsigned nvcpus);

#endif

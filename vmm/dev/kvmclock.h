/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual clock (kvmclock), the pvclock ABI: a guest writes the
 * guest-physical address of a per-vCPU pvclock_vcpu_time_info to
 * MSR_KVM_SYSTEM_TIME_NEW (bit 0: enable) and reads time as
 *   system_time + scale(tsc - tsc_timestamp)
 * where scale shifts by tsc_shift, multiplies by tsc_to_system_mul and keeps
 * the upper 32 bits. A VM has one kvmclock: scale(host TSC +
 * vm->tsc_sync.offset), the nanoseconds since its first vCPU's creation
 * (vmm/vcpu/tsc_sync.h). Every vCPU's structure holds system_time 0 and, as
 * tsc_timestamp, its own TSC at that instant, whatever its guest made of its
 * TSC since: all of them read that one clock exactly (KVM's masterclock, one
 * host instant for every vCPU's reference), so the TSC-stable flag is always
 * set. MSR_KVM_WALL_CLOCK_NEW's structure says the wall clock at kvmclock 0
 * was the Unix epoch: pollux keeps no calendar time.
 */
#ifndef POLLUX_VMM_DEV_KVMCLOCK_H
#define POLLUX_VMM_DEV_KVMCLOCK_H

#include <stdint.h>

#define MSR_KVM_WALL_CLOCK_NEW  0x4b564d00u
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01u
#define KVM_SYSTEM_TIME_ENABLE  1u

#define PVCLOCK_TIME_INFO_SIZE  32
#define PVCLOCK_WALL_CLOCK_SIZE 12
#define PVCLOCK_TSC_STABLE_BIT  (1u << 0)

struct pvclock_scale {
    uint32_t mul;
    int8_t shift;
};

/* The multiplier and shift that turn TSC ticks at tsc_khz into nanoseconds. */
struct pvclock_scale pvclock_scale_for(uint64_t tsc_khz);

/* Nanoseconds for delta TSC ticks, as the guest computes them. */
uint64_t pvclock_scale_delta(uint64_t delta, struct pvclock_scale s);

/*
 * The tsc_timestamp of a vCPU whose TSC offset is tsc_offset, in a VM whose
 * kvmclock is scale(host TSC + kvmclock_offset): its TSC at kvmclock 0.
 */
uint64_t pvclock_tsc_timestamp(uint64_t tsc_offset, uint64_t kvmclock_offset);

/*
 * Write a pvclock_vcpu_time_info at p (PVCLOCK_TIME_INFO_SIZE bytes):
 * tsc_timestamp, system_time 0, the scale for a TSC at tsc_khz, the
 * TSC-stable flag; its version goes from *version (even) to *version + 2,
 * odd while the fields change, as the protocol asks.
 */
void pvclock_write_time_info(uint8_t *p, uint32_t *version, uint64_t tsc_khz,
                             uint64_t tsc_timestamp);

/* The wall clock at kvmclock 0 (PVCLOCK_WALL_CLOCK_SIZE bytes at p). */
void pvclock_write_wall_clock(uint8_t *p, uint32_t *version);

#endif

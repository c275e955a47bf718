/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual clock (kvmclock), the pvclock ABI: a guest writes the
 * guest-physical address of a per-vCPU pvclock_vcpu_time_info to
 * MSR_KVM_SYSTEM_TIME_NEW (bit 0: enable) and reads time as
 *   system_time + scale(tsc - tsc_timestamp)
 * where scale shifts by tsc_shift, multiplies by tsc_to_system_mul and keeps
 * the upper 32 bits. pollux gives a VM one TSC (one offset for all its
 * vCPUs), so the same reference serves every vCPU forever: tsc_timestamp 0,
 * system_time 0, kvmclock = nanoseconds of guest TSC since it read 0, and the
 * TSC-stable flag set. MSR_KVM_WALL_CLOCK_NEW's structure says the wall
 * clock at kvmclock 0 was the Unix epoch: pollux keeps no calendar time.
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
 * Write a pvclock_vcpu_time_info at p (PVCLOCK_TIME_INFO_SIZE bytes) for the
 * VM's TSC at tsc_khz; its version goes from *version (even) to *version + 2,
 * odd while the fields change, as the protocol asks.
 */
void pvclock_write_time_info(uint8_t *p, uint32_t *version, uint64_t tsc_khz);

/* The wall clock at kvmclock 0 (PVCLOCK_WALL_CLOCK_SIZE bytes at p). */
void pvclock_write_wall_clock(uint8_t *p, uint32_t *version);

#endif

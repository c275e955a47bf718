/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual clock (kvmclock), the pvclock ABI: a guest writes the
 * guest-physical address of a per-vCPU pvclock_vcpu_time_info to
 * MSR_KVM_SYSTEM_TIME_NEW (bit 0: enable) and reads time as
 *   system_time + scale(tsc - tsc_timestamp)
 * where scale shifts by tsc_shift, multiplies by tsc_to_system_mul and keeps
 * the upper 32 bits. A VM has one kvmclock: scale(host TSC +
 * vm->kvmclock_offset), nanoseconds of its first TSC generation's ticks
 * (vmm/vcpu/tsc_sync.h). Each generation of TSC offsets has a reference for
 * that clock (tsc_timestamp: a guest TSC of the generation, system_time:
 * kvmclock then), the first's 0 and 0; a vCPU's structure carries its
 * generation's, so every vCPU reads the same clock whatever its TSC, and the
 * TSC-stable flag is set while all of them are in one generation (KVM's
 * masterclock). MSR_KVM_WALL_CLOCK_NEW's structure says the wall
 * clock at kvmclock 0 was the Unix epoch: pollux keeps no calendar time.
 */
#ifndef POLLUX_VMM_DEV_KVMCLOCK_H
#define POLLUX_VMM_DEV_KVMCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#define MSR_KVM_WALL_CLOCK_NEW  0x4b564d00u
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01u
#define KVM_SYSTEM_TIME_ENABLE  1u

#define PVCLOCK_TIME_INFO_SIZE  32
#define PVCLOCK_WALL_CLOCK_SIZE 12
#define PVCLOCK_TSC_STABLE_BIT  (1u << 0)

struct pvclock_ref {
    uint64_t tsc_timestamp, system_time;
};

struct pvclock_scale {
    uint32_t mul;
    int8_t shift;
};

/* The multiplier and shift that turn TSC ticks at tsc_khz into nanoseconds. */
struct pvclock_scale pvclock_scale_for(uint64_t tsc_khz);

/* Nanoseconds for delta TSC ticks, as the guest computes them. */
uint64_t pvclock_scale_delta(uint64_t delta, struct pvclock_scale s);

/*
 * The reference of a generation whose TSC offset is offset, taken at host_tsc,
 * for the VM's kvmclock scale(host TSC + kvmclock_offset) with scale s.
 */
struct pvclock_ref pvclock_ref_at(uint64_t host_tsc, uint64_t offset, uint64_t kvmclock_offset,
                                  struct pvclock_scale s);

/*
 * Write a pvclock_vcpu_time_info at p (PVCLOCK_TIME_INFO_SIZE bytes): ref,
 * the scale for a TSC at tsc_khz, the TSC-stable flag if stable; its
 * version goes from *version (even) to *version + 2, odd while the fields
 * change, as the protocol asks.
 */
void pvclock_write_time_info(uint8_t *p, uint32_t *version, uint64_t tsc_khz,
                             struct pvclock_ref ref, bool stable);

/* The wall clock at kvmclock 0 (PVCLOCK_WALL_CLOCK_SIZE bytes at p). */
void pvclock_write_wall_clock(uint8_t *p, uint32_t *version);

#endif

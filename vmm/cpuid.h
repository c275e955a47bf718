/*
 * The CPUID a guest sees: the host's, filtered. Virtualization extensions,
 * monitoring and power-management features pollux does not virtualize are
 * hidden; the hypervisor bit is set; the initial APIC ID and the topology
 * leaves describe the VM's vCPUs; leaves 0x40000000 (signature "pollux")
 * and 0x40000010 (timing) are pollux's own, 0x40000100-0x40000101 are KVM's
 * (vmm/kvm_pv.h), and the rest of 0x40000000-0x4FFFFFFF reads as zeros.
 */
#ifndef POLLUX_VMM_CPUID_H
#define POLLUX_VMM_CPUID_H

#include <stdint.h>

#include "arch/x86/cpu.h"

struct cpuid_view {
    unsigned vcpu_id, nvcpus;
    uint64_t guest_cr4; /* OSXSAVE is reflected from it */
    uint64_t tsc_khz, apic_timer_khz;
    uint64_t xcr0_supported; /* XSAVE components a guest may enable */
};

/* Apply the filter to host values r of (leaf, subleaf). */
void cpuid_filter(uint32_t leaf, uint32_t subleaf, const struct cpuid_view *view,
                  struct cpuid_regs *r);

#endif

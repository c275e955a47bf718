/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The floor build (`make bench` builds it with -DPOLLUX_EXIT_FLOOR; never
 * the default): the least an exit can cost, measured with exitbench on the
 * same emulator as the real path. Each vendor's entry code handles
 * exitbench's four operations itself, right after the exit and with fixed
 * results, and enters the guest again at once; every other exit takes the
 * normal path, so the guest still boots, prints and stops.
 */
#ifndef POLLUX_ARCH_X86_EXIT_FLOOR_H
#define POLLUX_ARCH_X86_EXIT_FLOOR_H

#include <stdint.h>

#include "arch/x86/virt.h"
#include "abi/hypercall.h"

#define FLOOR_CPUID_LEAF 0 /* answered with a fixed maximum leaf and the vendor string */
#define FLOOR_CPUID_MAX  0xdu
#define FLOOR_HC_NOP     HC_NOP /* answered with RAX = 0 */
#define FLOOR_PORT       0x3fdu /* COM1's line status: transmitter empty */
#define FLOOR_PORT_VALUE 0x60u
#define FLOOR_MSR        0x277u /* PAT, answered with its reset value */
#define FLOOR_MSR_VALUE  0x0007040600070406ull

/* CPUID leaf 0 as the vendor's CPU answers it: the runtime picks VMCALL or VMMCALL by it. */
static inline void floor_cpuid(struct guest_regs *r, uint32_t ebx, uint32_t edx, uint32_t ecx)
{
    r->rax = FLOOR_CPUID_MAX;
    r->rbx = ebx;
    r->rcx = ecx;
    r->rdx = edx;
}

#endif

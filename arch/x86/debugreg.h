/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's DR0-DR3 and DR6, which neither VM exit nor #VMEXIT switches
 * (DR7 is in the VMCS/VMCB and comes back as 0x400, so the host never
 * breaks on a guest's breakpoint). The host never uses these registers, so
 * a vCPU's values stay in the CPU while it runs and are swapped only when
 * another vCPU takes the CPU, like the FPU state.
 */
#ifndef POLLUX_ARCH_X86_DEBUGREG_H
#define POLLUX_ARCH_X86_DEBUGREG_H

#include <stdint.h>

struct debug_regs {
    uint64_t dr[4];
    uint64_t dr6;
};

#define DR6_INIT 0xffff0ff0ull
#define DR6_BS   (1ull << 14) /* single step */
#define DR6_B0_3 0xfull       /* breakpoint conditions */

/* A single-step trap's effect on DR6: BS set, the breakpoint bits cleared (as KVM does). */
static inline uint64_t dr6_single_step(uint64_t dr6)
{
    return (dr6 & ~DR6_B0_3) | DR6_BS;
}

static inline uint64_t dr6_read(void)
{
    uint64_t v;
    __asm__ volatile("mov %%db6, %0" : "=r"(v));
    return v;
}

static inline void dr6_write(uint64_t v)
{
    __asm__ volatile("mov %0, %%db6" ::"r"(v));
}

void debugregs_load(const struct debug_regs *d);
void debugregs_save(struct debug_regs *d);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Guest x87/SSE/AVX state. The hypervisor itself never touches these
 * registers (-mgeneral-regs-only), so a vCPU's state stays loaded in the CPU
 * from fpu_guest_enter until fpu_guest_leave, across any number of exits.
 * XSAVE is used where the CPU has it (with the guest's XCR0 in force while
 * the guest runs), FXSAVE otherwise.
 */
#ifndef POLLUX_ARCH_X86_FPU_H
#define POLLUX_ARCH_X86_FPU_H

#include <stdbool.h>
#include <stdint.h>

struct fpu_state {
    uint8_t *area; /* XSAVE/FXSAVE image, 64-byte aligned */
    uint64_t xcr0; /* the guest's XCR0 */
    uint32_t pkru; /* the guest's PKRU, where the CPU has protection keys */
};

/* Per CPU: set CR0/CR4 for FXSAVE/XSAVE and the host's XCR0. */
void fpu_cpu_init(void);

/* Allocate the area, in the architectural initial state. -1 if out of memory. */
int fpu_state_init(struct fpu_state *f);
void fpu_state_free(struct fpu_state *f);

void fpu_guest_enter(struct fpu_state *f);
void fpu_guest_leave(struct fpu_state *f);

/* XCR0 values the guest may set: x87 always, no AVX without SSE, only host-supported bits. */
bool fpu_xcr0_valid(uint64_t xcr0);
/* Change XCR0 while the guest's state is loaded (the XSETBV exit). */
void fpu_set_guest_xcr0(struct fpu_state *f, uint64_t xcr0);
bool fpu_has_xsave(void);
/* The XSAVE area size for every component a guest may enable. */
unsigned fpu_xsave_size(void);
uint64_t fpu_host_xcr0(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/* The AP trampoline's parameter block; layout fixed by arch/x86/trampoline.S. */
#ifndef POLLUX_ARCH_X86_TRAMPOLINE_H
#define POLLUX_ARCH_X86_TRAMPOLINE_H

#include <stdint.h>

struct trampoline_params {
    uint64_t cr3;  /* page tables valid in 32-bit PAE and long mode: below 4 GiB */
    uint64_t efer; /* EFER bits to set (LME, NXE) */
    uint64_t stack;
    uint64_t entry; /* void entry(void *arg) */
    uint64_t arg;
};

extern const char trampoline_start[], trampoline_end[], trampoline_params[];

#endif

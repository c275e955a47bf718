/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The counting build (`make counts`: -DPOLLUX_EXIT_COUNTS, never the
 * default). Under emulation every VMREAD, VMWRITE, VMCB access and MSR
 * access is one tick, on hardware each costs far more, so `make bench`
 * also reports how many of each one exit's round trip makes. They are
 * counted where they happen, not where they are called from, so the
 * counts follow any change to the exit path:
 *
 * - VMREAD and VMWRITE in their helpers (backend/vmx/vmx_insn.h) and the
 *   entry stub's HOST_RSP write (vmentry.S);
 * - RDMSR and WRMSR in their helpers (arch/x86/cpu.h), XSETBV in the FPU's;
 * - VMLOAD and VMSAVE in the SVM entry stub (vmrun.S), which also notes
 *   the VMCB it runs;
 * - VMCB field reads and writes: the counting build compiles backend/svm/
 *   with every load and store reported to a callback (GCC's
 *   -fsanitize=thread), and arch/x86/exit_counts.c counts those that fall
 *   in the VMCB this CPU last ran, one per 8 bytes. These are the loads and
 *   stores of the C code as GCC optimised it; docs/exit_path.md compares
 *   them with the machine code's.
 *
 * The counters are per host CPU, at a fixed offset in struct percpu so the
 * stubs reach them as %gs:EXIT_COUNTS_GS_OFFSET + 8 * kind. A guest reads
 * its CPU's with the HC_EXIT_COUNTS hypercall (vmm/exit/hypercall.h), which also
 * turns the C helpers' counting on: before it, early boot code runs the
 * helpers without a per-CPU block. The default build has none of this: the
 * helpers below are empty and the stubs' macro expands to nothing.
 */
#ifndef POLLUX_ARCH_X86_EXIT_COUNTS_H
#define POLLUX_ARCH_X86_EXIT_COUNTS_H

#include "arch/x86/exit_count.h"

#ifndef __ASSEMBLY__

struct exit_counts {
    uint64_t n[EXIT_COUNT_KINDS];
    uint64_t vmcb; /* host-physical, 0 before the first VMRUN */
};

#ifdef POLLUX_EXIT_COUNTS
/* This CPU's counters, and from now on the C helpers count too. */
void exit_counts_read(struct exit_counts *out);
#endif

#endif /* __ASSEMBLY__ */

#endif

/*
 * The counting build (`make counts`: -DPOLLUX_EXIT_COUNTS, never the
 * default). Under emulation every VMREAD, VMWRITE, VMCB access and MSR
 * access is one tick, on hardware each costs far more, so `make bench`
 * also reports how many of each one exit's round trip makes. They are
 * counted where they happen, not where they are called from, so the
 * counts follow any change to the exit path:
 *
 * - VMREAD and VMWRITE in their helpers (arch/x86/vmx/vmx_insn.h) and the
 *   entry stub's HOST_RSP write (vmentry.S);
 * - RDMSR and WRMSR in their helpers (arch/x86/cpu.h), XSETBV in the FPU's;
 * - VMLOAD and VMSAVE in the SVM entry stub (vmrun.S), which also notes
 *   the VMCB it runs;
 * - VMCB field reads and writes: the counting build compiles arch/x86/svm/
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

#include "abi/hypercall.h" /* the counters' kinds: EXIT_COUNT_* */

/* struct percpu.exit_counts, right after its self pointer. */
#define EXIT_COUNTS_GS_OFFSET 8
/* struct exit_counts.vmcb: the VMCB the CPU last entered (SVM). */
#define EXIT_COUNTS_VMCB_GS_OFFSET (EXIT_COUNTS_GS_OFFSET + 8 * EXIT_COUNT_KINDS)

#ifdef __ASSEMBLY__

/* Only while GS holds the host's base: not between an SVM guest's VMLOAD and the host's. */
#ifdef POLLUX_EXIT_COUNTS
#define EXIT_COUNT(kind)          incq % gs : (EXIT_COUNTS_GS_OFFSET + 8 * (kind))
#define EXIT_COUNTS_NOTE_VMCB(pa) mov pa, % gs : EXIT_COUNTS_VMCB_GS_OFFSET
#else
#define EXIT_COUNT(kind)
#define EXIT_COUNTS_NOTE_VMCB(pa)
#endif

#else

#include <stdbool.h>
#include <stdint.h>

struct exit_counts {
    uint64_t n[EXIT_COUNT_KINDS];
    uint64_t vmcb; /* host-physical, 0 before the first VMRUN */
};

#ifdef POLLUX_EXIT_COUNTS
extern bool exit_counts_on;

/* No memory clobber: the count must not change how the code around it is compiled. */
static inline void exit_count(unsigned kind)
{
    if (__atomic_load_n(&exit_counts_on, __ATOMIC_RELAXED))
        __asm__ volatile("incq %%gs:%c0(,%1,8)" ::"i"(EXIT_COUNTS_GS_OFFSET), "r"((uint64_t)kind)
                         : "cc");
}

/* This CPU's counters, and from now on the C helpers count too. */
void exit_counts_read(struct exit_counts *out);
#else
static inline void exit_count(unsigned kind)
{
    (void)kind;
}
#endif

#endif /* __ASSEMBLY__ */

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-CPU data, reached through GS base (the first field points to itself).
 * Each CPU owns its GDT (it holds that CPU's TSS descriptor), its TSS and
 * its stacks: one kernel stack plus IST stacks for NMI, double fault and
 * machine check, so those run on a known-good stack whatever went wrong.
 * Below every stack lies its guard page, left unmapped: an overflow faults
 * there instead of writing over what lies below (docs/robustness.md).
 */
#ifndef POLLUX_ARCH_X86_PERCPU_H
#define POLLUX_ARCH_X86_PERCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/exit_counts.h"

#define MAX_CPUS 64

#define KERNEL_STACK_SIZE 16384
#define IST_STACK_SIZE    8192

#define GDT_KERNEL_CODE 0x08
#define GDT_KERNEL_DATA 0x10
#define GDT_TSS         0x18
#define GDT_ENTRIES     5

enum ist_index { IST_NMI = 1, IST_DOUBLE_FAULT = 2, IST_MACHINE_CHECK = 3, IST_COUNT = 3 };

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
} __attribute__((packed));

struct percpu {
    struct percpu *self; /* must stay first: this_cpu() reads %gs:0 */
#ifdef POLLUX_EXIT_COUNTS
    struct exit_counts exit_counts; /* at %gs:EXIT_COUNTS_GS_OFFSET, for the entry stubs */
#endif
    unsigned cpu; /* dense index, 0 = boot CPU */
    uint32_t apic_id;
    uint64_t stack_base, stack_top;
    uint64_t ist_base[IST_COUNT]; /* lowest address of each IST stack */
    volatile bool online;
    void *virt; /* the virtualization backend's per-CPU state */
    uint64_t gdt[GDT_ENTRIES] __attribute__((aligned(16)));
    struct tss tss __attribute__((aligned(16)));
};

extern struct percpu *cpus[MAX_CPUS];
extern unsigned cpu_count; /* CPUs brought online, including the boot CPU */

static inline struct percpu *this_cpu(void)
{
    struct percpu *p;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(p));
    return p;
}

/* Load this CPU's GDT, TSS, IDT and GS base. */
void percpu_install(struct percpu *p);

/*
 * Allocate and initialise the per-CPU block and IST stacks for a CPU; the
 * kernel stack too unless one is given (the boot CPU keeps its boot stack,
 * which must be KERNEL_STACK_SIZE bytes, page aligned, above a page of its
 * own for the guard). Each stack's guard page is unmapped. NULL, with why
 * in *why, if memory ran out or a guard page could not be unmapped.
 */
struct percpu *percpu_create(unsigned cpu, uint32_t apic_id, void *stack, const char **why);

/*
 * Which of this CPU's stacks has its guard page at addr: "kernel", "nmi",
 * "double_fault" or "machine_check" (the guard's first byte in *guard);
 * NULL if addr is in none of them.
 */
const char *percpu_guard_hit(const struct percpu *p, uint64_t addr, uint64_t *guard);

/* True if [addr, addr+len) lies inside one of this CPU's stacks. */
bool percpu_on_stack(const struct percpu *p, uint64_t addr, uint64_t len);

#endif

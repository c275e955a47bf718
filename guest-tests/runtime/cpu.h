/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Processor setup for the multiprocessor guests: GDT, IDT, the vCPU count
 * from fw_cfg, AP bring-up with per-CPU stacks, CPU indices, spinlocks.
 * The constants are shared with trampoline.S.
 */
#ifndef POLLUX_GUEST_CPU_H
#define POLLUX_GUEST_CPU_H

#define MAX_CPUS       64
#define AP_STACK_SHIFT 13 /* 8 KiB per AP */
#define AP_STACK_SIZE  (1 << AP_STACK_SHIFT)
#define GDT_CODE       0x08 /* flat 32-bit code */
#define GDT_DATA       0x10 /* flat data */
#define GDT_CODE64     0x18 /* 64-bit code, for a guest that turns on long mode */
#define GDT_ENTRIES    4
/* The AP start page: below 1 MiB (real mode starts there), above the BIOS
 * data area, and not where the image loads. Overwritten by smp_start. */
#define AP_TRAMPOLINE_PAGE 0x8000

#ifndef __ASSEMBLER__

#include "guest-tests/runtime/runtime.h"

/* Page-table entry bits, for a guest that builds its own PAE or 4/5-level tables. */
#define PTE_P   (1ull << 0)
#define PTE_RW  (1ull << 1)
#define PTE_PWT (1ull << 3)
#define PTE_PCD (1ull << 4)
#define PTE_PS  (1ull << 7)

/* The control-register and EFER bits of the way into long mode. */
#define CR0_PG   (1u << 31)
#define CR4_PAE  (1u << 5)
#define MSR_EFER 0xc0000080u
#define EFER_LME (1ull << 8)
#define EFER_LMA (1ull << 10)

#define MSR_APIC_BASE 0x1b

/* Exception vectors. */
#define VECTOR_DB  1
#define VECTOR_NMI 2
#define VECTOR_UD  6
#define VECTOR_GP  13

/* What an __attribute__((interrupt)) handler gets (no privilege change: no ESP, SS). */
struct interrupt_frame {
    uint32_t eip, cs, eflags;
};

/*
 * On the BSP: load the GDT (flat code GDT_CODE, data GDT_DATA) and the IDT,
 * with handlers for the exceptions (print and exit 3) and the spurious
 * vector. Leaves interrupts disabled. smp_start calls it.
 */
void cpu_init(void);

/*
 * Install an interrupt gate, shared by all CPUs (there is one IDT). fn is
 * an __attribute__((interrupt)) function, with or without an error code.
 */
void set_interrupt_handler(uint8_t vector, void *fn);

/* The number of vCPUs fw_cfg reports, or 0 without fw_cfg. */
uint32_t cpu_count(void);

/*
 * Bring up every vCPU: cpu_init, the BSP's local APIC (x2APIC mode on
 * every CPU if x2apic is set and the CPU offers it), timing_init, then
 * INIT-SIPI-SIPI to all others through the trampoline at
 * AP_TRAMPOLINE_PAGE. The BSP is index 0 and the APs follow in APIC ID
 * order, so indices do not depend on which AP arrives first. Each CPU
 * prints "cpu <index> apic <id> online", in index order. Then every AP
 * runs ap_main(index) with interrupts disabled and halts if it returns.
 * Returns the number of CPUs, or 0 after saying why there are not the
 * ones fw_cfg reports (no fw_cfg, a vCPU not online within a second, one
 * too many, two with the same APIC ID).
 */
uint32_t smp_start(bool x2apic, void (*ap_main)(uint32_t index));

/* The number of CPUs smp_start brings up (as it returns, and in ap_main). */
uint32_t smp_cpus(void);
/* This CPU's index. Valid on every CPU once smp_start has numbered them. */
uint32_t this_cpu_index(void);
/* The APIC ID of the CPU with this index. */
uint32_t cpu_apic_id(uint32_t index);

/* This CPU's stack slot: 0 on the BSP, then APs in the order they arrived. */
uint32_t cpu_slot(void);

struct spinlock {
    uint32_t locked;
};

void spin_lock(struct spinlock *l);
bool spin_trylock(struct spinlock *l); /* true: taken */
void spin_unlock(struct spinlock *l);

/* Taken around printf by code that may run on several CPUs at once, so
 * that lines do not interleave. Never print from an interrupt handler. */
extern struct spinlock console_lock;

static inline void cpu_relax(void)
{
    __asm__ volatile("pause" ::: "memory");
}

/*
 * With interrupts disabled: enable them, halt until one is taken, disable
 * them again. STI delays interrupts by one instruction, so one that became
 * pending after the caller last checked its condition wakes HLT instead
 * of running before it and leaving the CPU halted.
 */
static inline void wait_for_interrupt(void)
{
    __asm__ volatile("sti; hlt; cli" ::: "memory");
}

#endif
#endif

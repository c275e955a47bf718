/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interrupt and exception entry. Every vector has a stub (arch/x86/isr.S)
 * that builds a struct trap_frame and calls trap_dispatch(). Exceptions are
 * fatal: they print a register dump and backtrace, emit @panic, stop the
 * other CPUs and power off. Interrupt vectors go to registered handlers.
 */
#ifndef POLLUX_ARCH_X86_TRAP_H
#define POLLUX_ARCH_X86_TRAP_H

#include <stdint.h>

/* Host interrupt vectors. */
#define VECTOR_TIMER    0xf0 /* local APIC timer */
#define VECTOR_KICK     0xf1 /* IPI that only makes a CPU leave guest mode or idle */
#define VECTOR_SPURIOUS 0xff

struct trap_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

typedef void (*irq_handler)(struct trap_frame *f);

void idt_init(void);
void idt_load(void);

/*
 * Install a handler for an interrupt vector (32..255; the handler sends EOI),
 * or for NMIs (2) that are neither a panic's nor the lockup watchdog's.
 */
void irq_register(uint8_t vector, irq_handler h);

void trap_dispatch(struct trap_frame *f);

#endif

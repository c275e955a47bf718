/* SPDX-License-Identifier: GPL-2.0-only */
/* Thin wrappers around x86 instructions; no policy here. */
#ifndef POLLUX_ARCH_X86_CPU_H
#define POLLUX_ARCH_X86_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/exit_count.h"
#include "arch/x86/regs.h"

#define RFLAGS_TF (1u << 8)
#define RFLAGS_IF (1u << 9)
#define RFLAGS_RF (1u << 16)

struct cpuid_regs {
    uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
    struct cpuid_regs r;
    __asm__ volatile("cpuid"
                     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
                     : "a"(leaf), "c"(subleaf));
    return r;
}

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    exit_count(EXIT_COUNT_RDMSR);
    return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" ::"c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
    exit_count(EXIT_COUNT_WRMSR);
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
    __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
    __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

#define DEFINE_CR_ACCESSORS(n)                                                                     \
    static inline uint64_t read_cr##n(void)                                                        \
    {                                                                                              \
        uint64_t v;                                                                                \
        __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v));                                          \
        return v;                                                                                  \
    }                                                                                              \
    static inline void write_cr##n(uint64_t v)                                                     \
    {                                                                                              \
        __asm__ volatile("mov %0, %%cr" #n ::"r"(v) : "memory");                                   \
    }
DEFINE_CR_ACCESSORS(0)
DEFINE_CR_ACCESSORS(2)
DEFINE_CR_ACCESSORS(3)
DEFINE_CR_ACCESSORS(4)
#undef DEFINE_CR_ACCESSORS

/* A vCPU's CR2 into the CPU as it takes the CPU: read first, as KVM does, a write costs more. */
static inline void load_guest_cr2(uint64_t cr2)
{
    if (read_cr2() != cr2)
        write_cr2(cr2);
}

static inline void cpu_relax(void)
{
    __asm__ volatile("pause" ::: "memory");
}

static inline void irq_enable(void)
{
    __asm__ volatile("sti" ::: "memory");
}

static inline void irq_disable(void)
{
    __asm__ volatile("cli" ::: "memory");
}

#ifdef HOST_TEST
/* Host unit tests run in user mode, where CLI faults and nothing interrupts a lock holder. */
static inline uint64_t irq_save(void)
{
    return 0;
}
#else
static inline uint64_t irq_save(void)
{
    uint64_t flags;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(flags)::"memory");
    return flags;
}
#endif

static inline void irq_restore(uint64_t flags)
{
    if (flags & RFLAGS_IF)
        irq_enable();
}

/* Wait for an interrupt with interrupts enabled, atomically (STI's shadow). */
static inline void cpu_idle_wait(void)
{
    __asm__ volatile("sti; hlt" ::: "memory");
}

static inline __attribute__((noreturn)) void cpu_halt_forever(void)
{
    for (;;)
        __asm__ volatile("cli; hlt");
}

#endif

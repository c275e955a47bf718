/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The freestanding runtime shared by the bundled guests: entry, console,
 * printf, port and MSR access, hypercalls and exit. Guests define
 * guest_main(); returning from it exits the VM with the returned code.
 */
#ifndef POLLUX_GUEST_RUNTIME_H
#define POLLUX_GUEST_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/trace_marker.h"

#define COM1_LSR        0x3fd       /* the 16550 line status register of COM1 */
#define MB_BOOT_MAGIC   0x2BADB002u /* EAX at entry from a multiboot1 loader */
#define MB_INFO_CMDLINE (1u << 2)

/* The start of the multiboot1 information block: only what guests read. */
struct mb_info {
    uint32_t flags;
    uint32_t mem_lower;
    uint32_t mem_upper;
    uint32_t boot_device;
    uint32_t cmdline; /* physical address of a NUL-terminated string, if MB_INFO_CMDLINE */
};

/* info is NULL when magic is not MB_BOOT_MAGIC: EBX then means nothing. */
int guest_main(uint32_t magic, const struct mb_info *info);

/* Stop the VM with this exit code (isa-debug-exit port 0xf4). */
_Noreturn void guest_exit(uint32_t code);

/* The 8259s' data ports (their IMRs after initialization). */
#define PIC1_DATA 0x21
#define PIC2_DATA 0xa1
/* The IMRs as the runtime found them at entry (slave << 8 | master), before masking every IRQ. */
extern uint16_t pic_masks_found;

/* COM1 output; lines end with "\n" (the hypervisor buffers by line). */
void serial_putc(char c);
void serial_puts(const char *s);
/* Conversions: %d %u %x %s %c %%, with an optional 0 flag, width and l or ll. */
__attribute__((format(printf, 1, 2))) void printf(const char *fmt, ...);

/* The whole command line ("<image path> <args...>"), or "" without one. */
const char *cmdline(const struct mb_info *info);
/* The command line after its first word and the spaces that follow it. */
const char *cmdline_args(const struct mb_info *info);
/* s after its first word and the spaces that follow it. */
const char *skip_word(const char *s);
/* s starts with the word w (followed by a space or the end). */
bool word_is(const char *s, const char *w);
/* Read the decimal number at the start of s (saturating); false if s does not start with a digit.
 */
bool parse_uint(const char *s, uint32_t *out);
/* The same for 64-bit numbers. */
bool parse_uint64(const char *s, uint64_t *out);
/* The number the arguments start with (def if none), clamped to [min, max]. */
uint32_t arg_uint(const struct mb_info *info, uint32_t def, uint32_t min, uint32_t max);

/* VMMCALL on AMD, VMCALL on Intel: EAX = nr, EBX/ECX/EDX = a/b/c; returns EAX. */
uint32_t hypercall(uint32_t nr, uint32_t a, uint32_t b, uint32_t c);
/* KVM's four-argument form (kvm_hypercall4): a3 goes in ESI. */
uint32_t hypercall4(uint32_t nr, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3);
/* Whether hypercall() uses VMMCALL (an AMD CPU) rather than VMCALL. */
bool hypercall_uses_vmmcall(void);

static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

/* Open (true) or close the VM's trace capture window around a measured phase (trace_window=). */
static inline void trace_mark(bool start)
{
    outb(TRACE_MARKER_PORT, start ? TRACE_MARKER_START : TRACE_MARKER_END);
}

static inline void outw(uint16_t port, uint16_t v)
{
    __asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
    __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

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
    return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

#endif

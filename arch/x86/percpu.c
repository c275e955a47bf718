/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/percpu.h"

#include "arch/x86/cpu.h"
#include "arch/x86/mm.h"
#include "arch/x86/trap.h"
#include "lib/string.h"

struct percpu *cpus[MAX_CPUS];
unsigned cpu_count;

/* Indexed by enum ist_index; 0 is the kernel stack. */
static const char *const stack_names[IST_COUNT + 1] = {"kernel", "nmi", "double_fault",
                                                       "machine_check"};

static uint64_t guard_of(uint64_t stack_base)
{
    return stack_base - PAGE_SIZE;
}

#define NO_MEMORY "out of memory for per-CPU data"
#define NO_GUARD  "a stack's guard page could not be unmapped"

/* A stack of `size` bytes above its guard page, which is unmapped; NULL, with why, if not. */
static void *guarded_stack_alloc(uint64_t size, const char **why)
{
    char *pages = page_alloc_zeroed(size / PAGE_SIZE + 1);
    if (!pages) {
        *why = NO_MEMORY;
        return NULL;
    }
    if (mm_unmap_page(pages)) {
        *why = NO_GUARD;
        return NULL;
    }
    return pages + PAGE_SIZE;
}

struct percpu *percpu_create(unsigned cpu, uint32_t apic_id, void *stack, const char **why)
{
    struct percpu *p = page_alloc_zeroed((sizeof(*p) + PAGE_SIZE - 1) / PAGE_SIZE);
    if (!p) {
        *why = NO_MEMORY;
        return NULL;
    }
    if (!stack) {
        stack = guarded_stack_alloc(KERNEL_STACK_SIZE, why);
    } else if (mm_unmap_page((void *)guard_of((uint64_t)stack))) {
        *why = NO_GUARD;
        stack = NULL;
    }
    if (!stack)
        return NULL;
    p->self = p;
    p->cpu = cpu;
    p->apic_id = apic_id;
    p->stack_base = (uint64_t)stack;
    p->stack_top = p->stack_base + KERNEL_STACK_SIZE;
    for (unsigned i = 0; i < IST_COUNT; i++) {
        void *ist = guarded_stack_alloc(IST_STACK_SIZE, why);
        if (!ist)
            return NULL;
        p->ist_base[i] = (uint64_t)ist;
        p->tss.ist[i] = p->ist_base[i] + IST_STACK_SIZE; /* TSS IST1 is ist[0] */
    }
    p->tss.iomap_base = sizeof(struct tss); /* no I/O bitmap: ring 3 never runs here */

    uint64_t tss = (uint64_t)&p->tss;
    uint64_t limit = sizeof(struct tss) - 1;
    p->gdt[0] = 0;
    p->gdt[1] = 0x00af9a000000ffffull; /* 64-bit code, DPL 0 */
    p->gdt[2] = 0x00cf92000000ffffull; /* data */
    p->gdt[3] = (limit & 0xffff) | ((tss & 0xffffff) << 16) | (0x89ull << 40) |
                (((limit >> 16) & 0xf) << 48) | (((tss >> 24) & 0xff) << 56);
    p->gdt[4] = tss >> 32;
    return p;
}

void percpu_install(struct percpu *p)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) gdtr = {sizeof(p->gdt) - 1, (uint64_t)p->gdt};

    __asm__ volatile("lgdt %0\n\t"
                     "mov %1, %%ds\n\t"
                     "mov %1, %%es\n\t"
                     "mov %1, %%ss\n\t"
                     "pushq %2\n\t"
                     "leaq 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"
                     "lretq\n"
                     "1:\n\t"
                     "ltr %w3"
                     :
                     : "m"(gdtr), "r"((uint64_t)GDT_KERNEL_DATA), "i"(GDT_KERNEL_CODE),
                       "r"((uint64_t)GDT_TSS)
                     : "rax", "memory");
    wrmsr(MSR_GS_BASE, (uint64_t)p);
    idt_load();
}

const char *percpu_guard_hit(const struct percpu *p, uint64_t addr, uint64_t *guard)
{
    for (unsigned i = 0; i <= IST_COUNT; i++) {
        uint64_t g = guard_of(i ? p->ist_base[i - 1] : p->stack_base);
        if (addr >= g && addr < g + PAGE_SIZE) {
            *guard = g;
            return stack_names[i];
        }
    }
    return NULL;
}

bool percpu_on_stack(const struct percpu *p, uint64_t addr, uint64_t len)
{
    if (addr + len < addr)
        return false;
    if (addr >= p->stack_base && addr + len <= p->stack_top)
        return true;
    for (unsigned i = 0; i < IST_COUNT; i++)
        if (addr >= p->ist_base[i] && addr + len <= p->ist_base[i] + IST_STACK_SIZE)
            return true;
    return false;
}

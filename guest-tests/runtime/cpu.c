/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * GDT, IDT, vCPU count, AP bring-up and CPU numbering for the
 * multiprocessor guests.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/timing.h"

#include <stddef.h>

#define FWCFG_SELECTOR  0x510
#define FWCFG_DATA      0x511
#define FWCFG_SIGNATURE 0x0000
#define FWCFG_NB_CPUS   0x0005

#define IDT_ENTRIES       256
#define GATE_INTERRUPT    0x8e00 /* present, DPL 0, 32-bit interrupt gate */
#define ONLINE_TIMEOUT_US 1000000
#define EXIT_EXCEPTION    3

struct pseudo_descriptor {
    uint16_t limit;
    uint32_t base;
} __attribute__((packed));

/* Flat code and data, and 64-bit code (L set, D clear). The accessed bits
 * are preset, so loading a segment does not write to the table.
 * trampoline.S loads it on the APs. */
uint64_t cpu_gdt[GDT_ENTRIES] = {0, 0x00cf9b000000ffffull, 0x00cf93000000ffffull,
                                 0x00af9b000000ffffull};
static uint64_t idt[IDT_ENTRIES];

/* trampoline.S: APs increment ap_arrivals and take the stack it gives them. */
uint8_t ap_stacks[MAX_CPUS - 1][AP_STACK_SIZE] __attribute__((aligned(16)));
uint32_t ap_arrivals;
extern const uint8_t ap_trampoline[], ap_trampoline_end[];
_Noreturn void ap_start(uint32_t slot);

struct spinlock console_lock;

static uint32_t expected; /* vCPUs fw_cfg reports */
static bool want_x2apic;  /* every CPU switches to x2APIC mode */
static void (*ap_hook)(uint32_t index);
static uint32_t registered; /* CPUs that have recorded their APIC ID */
static uint32_t slot_apic[MAX_CPUS];
static uint8_t slot_registered[MAX_CPUS];
static uint32_t slot_index[MAX_CPUS];
static uint32_t index_apic[MAX_CPUS];
static uint32_t numbered;      /* slot_index and index_apic are filled in */
static uint32_t announce_turn; /* the index whose "online" line comes next */

#define EXCEPTION(n)                                                                               \
    __attribute__((interrupt)) static void exception_##n(struct interrupt_frame *f)                \
    {                                                                                              \
        exception(n, f, 0);                                                                        \
    }
#define EXCEPTION_ERR(n)                                                                           \
    __attribute__((interrupt)) static void exception_##n(struct interrupt_frame *f,                \
                                                         unsigned long error)                      \
    {                                                                                              \
        exception(n, f, error);                                                                    \
    }

/*
 * Without a handler a fault becomes a triple fault, which says nothing about its cause. Two CPUs
 * faulting at once print one after the other (exception_lock: the first one's exit may stop the
 * VM before the second prints, but no line is ever mixed with another). The console lock is
 * waited for only a while: this CPU may be the one holding it (a fault inside printf).
 */
static struct spinlock exception_lock;
#define CONSOLE_WAIT_SPINS 1000000u

static _Noreturn void exception(uint32_t vector, const struct interrupt_frame *f,
                                unsigned long error)
{
    uint32_t slot = cpu_slot();
    spin_lock(&exception_lock);
    bool console = false;
    for (uint32_t i = 0; i < CONSOLE_WAIT_SPINS && !(console = spin_trylock(&console_lock)); i++)
        cpu_relax();
    printf("exception %u (error 0x%lx) at eip 0x%x on cpu slot %u\n", vector, error, f->eip, slot);
    if (console)
        spin_unlock(&console_lock);
    guest_exit(EXIT_EXCEPTION);
}

EXCEPTION(0)
EXCEPTION(1)
EXCEPTION(2)
EXCEPTION(3)
EXCEPTION(4)
EXCEPTION(5)
EXCEPTION(6)
EXCEPTION(7)
EXCEPTION_ERR(8)
EXCEPTION(9)
EXCEPTION_ERR(10)
EXCEPTION_ERR(11)
EXCEPTION_ERR(12)
EXCEPTION_ERR(13)
EXCEPTION_ERR(14)
EXCEPTION(16)
EXCEPTION_ERR(17)
EXCEPTION(18)
EXCEPTION(19)
EXCEPTION(20)
EXCEPTION_ERR(21)

static void *const exception_handlers[] = {
    [0] = exception_0,   [1] = exception_1,   [2] = exception_2,   [3] = exception_3,
    [4] = exception_4,   [5] = exception_5,   [6] = exception_6,   [7] = exception_7,
    [8] = exception_8,   [9] = exception_9,   [10] = exception_10, [11] = exception_11,
    [12] = exception_12, [13] = exception_13, [14] = exception_14, [16] = exception_16,
    [17] = exception_17, [18] = exception_18, [19] = exception_19, [20] = exception_20,
    [21] = exception_21,
};

/* A spurious interrupt is not in service, so it takes no EOI (Intel SDM, "Spurious Interrupt"). */
__attribute__((interrupt)) static void spurious_interrupt(struct interrupt_frame *f)
{
    (void)f;
}

void set_interrupt_handler(uint8_t vector, void *fn)
{
    uint32_t a = (uint32_t)fn;
    idt[vector] = (a & 0xffff) | ((uint32_t)GDT_CODE << 16) | ((uint64_t)GATE_INTERRUPT << 32) |
                  ((uint64_t)(a >> 16) << 48);
}

static void load_idt(void)
{
    struct pseudo_descriptor idtr = {sizeof(idt) - 1, (uint32_t)idt};
    __asm__ volatile("lidt %0" : : "m"(idtr));
}

void cpu_init(void)
{
    /* The loader's segments need not be in any GDT we own: reload them all from ours. */
    struct pseudo_descriptor gdtr = {sizeof(cpu_gdt) - 1, (uint32_t)cpu_gdt};
    __asm__ volatile("cli\n\t"
                     "lgdt %0\n\t"
                     "ljmp %1, $1f\n"
                     "1:\n\t"
                     "mov %2, %%ax\n\t"
                     "mov %%ax, %%ds\n\t"
                     "mov %%ax, %%es\n\t"
                     "mov %%ax, %%fs\n\t"
                     "mov %%ax, %%gs\n\t"
                     "mov %%ax, %%ss"
                     :
                     : "m"(gdtr), "i"(GDT_CODE), "i"(GDT_DATA)
                     : "eax", "memory");
    for (uint32_t v = 0; v < sizeof(exception_handlers) / sizeof(exception_handlers[0]); v++)
        if (exception_handlers[v] != NULL)
            set_interrupt_handler((uint8_t)v, exception_handlers[v]);
    set_interrupt_handler(LAPIC_SPURIOUS_VECTOR, spurious_interrupt);
    load_idt();
}

uint32_t cpu_count(void)
{
    outw(FWCFG_SELECTOR, FWCFG_SIGNATURE);
    for (const char *s = "QEMU"; *s != '\0'; s++)
        if (inb(FWCFG_DATA) != (uint8_t)*s)
            return 0;
    outw(FWCFG_SELECTOR, FWCFG_NB_CPUS);
    uint32_t lo = inb(FWCFG_DATA);
    uint32_t hi = inb(FWCFG_DATA);
    return lo | hi << 8;
}

/*
 * The stack pointer tells the CPU: each AP runs on its own ap_stacks entry
 * (interrupt handlers too: there is no privilege change), the BSP on the
 * entry.S stack outside the array. No APIC access, so no VM exit, and it
 * works whatever mode the APIC is in. An AP's ESP never equals the top of
 * its stack in C code (trampoline.S pushes before calling).
 */
uint32_t cpu_slot(void)
{
    uint32_t sp;
    __asm__("mov %%esp, %0" : "=r"(sp));
    uint32_t off = sp - (uint32_t)ap_stacks;
    return off < sizeof(ap_stacks) ? (off >> AP_STACK_SHIFT) + 1 : 0;
}

uint32_t smp_cpus(void)
{
    return expected;
}

uint32_t this_cpu_index(void)
{
    return slot_index[cpu_slot()];
}

uint32_t cpu_apic_id(uint32_t index)
{
    return index_apic[index];
}

void spin_lock(struct spinlock *l)
{
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) != 0)
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED) != 0)
            cpu_relax();
}

bool spin_trylock(struct spinlock *l)
{
    return __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) == 0;
}

void spin_unlock(struct spinlock *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static void register_cpu(uint32_t slot)
{
    slot_apic[slot] = lapic_id();
    __atomic_store_n(&slot_registered[slot], 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&registered, 1, __ATOMIC_RELEASE);
}

/* Each CPU prints its own line, in index order, then waits for all the others' lines. */
static void announce(uint32_t index, uint32_t n)
{
    while (__atomic_load_n(&announce_turn, __ATOMIC_ACQUIRE) != index)
        cpu_relax();
    spin_lock(&console_lock);
    printf("cpu %u apic %u online\n", index, index_apic[index]);
    spin_unlock(&console_lock);
    __atomic_store_n(&announce_turn, index + 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&announce_turn, __ATOMIC_ACQUIRE) != n)
        cpu_relax();
}

_Noreturn void ap_start(uint32_t slot)
{
    load_idt();
    if (want_x2apic)
        switch_to_x2apic();
    lapic_enable();
    /* A CPU beyond fw_cfg's count has no index; smp_start reports it. */
    if (slot < expected) {
        register_cpu(slot);
        while (!__atomic_load_n(&numbered, __ATOMIC_ACQUIRE))
            cpu_relax();
        uint32_t index = slot_index[slot];
        announce(index, expected);
        ap_hook(index);
    }
    for (;;)
        __asm__ volatile("cli; hlt");
}

static void report_missing(void)
{
    printf("vCPU bring-up timed out: %u of %u online after 1 s; online apic ids:",
           __atomic_load_n(&registered, __ATOMIC_ACQUIRE), expected);
    for (uint32_t s = 0; s < expected; s++)
        if (__atomic_load_n(&slot_registered[s], __ATOMIC_ACQUIRE))
            printf(" %u", slot_apic[s]);
    printf("; not seen among 0..%u:", expected - 1);
    for (uint32_t id = 0; id < expected; id++) {
        bool seen = false;
        for (uint32_t s = 0; s < expected; s++)
            seen |= __atomic_load_n(&slot_registered[s], __ATOMIC_ACQUIRE) && slot_apic[s] == id;
        if (!seen)
            printf(" %u", id);
    }
    printf("\n");
}

/* The BSP is index 0, the APs follow by APIC ID. False if two CPUs share an ID. */
static bool number_cpus(uint32_t n)
{
    for (uint32_t s = 0; s < n; s++) {
        uint32_t rank = s == 0 ? 0 : 1;
        for (uint32_t t = 1; t < n; t++) {
            if (t != s && slot_apic[t] == slot_apic[s]) {
                printf("apic id %u is used by two vCPUs\n", slot_apic[s]);
                return false;
            }
            rank += s != 0 && slot_apic[t] < slot_apic[s];
        }
        slot_index[s] = rank;
        index_apic[rank] = slot_apic[s];
    }
    return true;
}

uint32_t smp_start(bool x2apic, void (*ap_main)(uint32_t index))
{
    cpu_init();
    want_x2apic = x2apic && lapic_x2apic_offered();
    if (x2apic)
        printf(want_x2apic ? "x2apic: every vCPU switches to x2APIC mode\n"
                           : "x2apic not offered: staying in xAPIC mode\n");
    if (want_x2apic)
        switch_to_x2apic();
    lapic_enable();
    timing_init();
    printf("timing: tsc %u kHz, apic timer %u kHz (%s)\n", tsc_khz(), apic_timer_khz(),
           timing_source());

    uint32_t n = cpu_count();
    if (n == 0) {
        printf("no fw_cfg: the number of vCPUs is unknown\n");
        return 0;
    }
    if (n > MAX_CPUS) {
        printf("%u vCPUs: at most %u are supported\n", n, MAX_CPUS);
        return 0;
    }
    expected = n;
    ap_hook = ap_main;
    register_cpu(0);

    if (n > 1) {
        volatile uint8_t *page = (volatile uint8_t *)AP_TRAMPOLINE_PAGE;
        for (uint32_t i = 0; i < (uint32_t)(ap_trampoline_end - ap_trampoline); i++)
            page[i] = ap_trampoline[i];
        send_init_sipi_all(AP_TRAMPOLINE_PAGE);
        uint64_t deadline = rdtsc() + us_to_tsc(ONLINE_TIMEOUT_US);
        while (__atomic_load_n(&registered, __ATOMIC_ACQUIRE) < n && rdtsc() < deadline)
            cpu_relax();
        if (__atomic_load_n(&registered, __ATOMIC_ACQUIRE) < n) {
            report_missing();
            return 0;
        }
    }
    uint32_t arrived = __atomic_load_n(&ap_arrivals, __ATOMIC_ACQUIRE) + 1;
    if (arrived != n) {
        printf("%u vCPUs started, but fw_cfg reports %u\n", arrived, n);
        return 0;
    }
    if (!number_cpus(n))
        return 0;
    __atomic_store_n(&numbered, 1, __ATOMIC_RELEASE);
    announce(0, n);
    return n;
}

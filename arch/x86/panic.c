/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/panic.h"

#include <stdarg.h>

#include "arch/x86/cpu.h"
#include "arch/x86/ksyms.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "drivers/console.h"
#include "drivers/power.h"
#include "lib/json.h"
#include "lib/string.h"

#define BACKTRACE_MAX 32

static int panic_cpu = -1;

bool panic_in_progress(void)
{
    return __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE) >= 0;
}

/* GS base is 0 until the boot CPU installs its per-CPU block. */
static unsigned current_cpu(void)
{
    return rdmsr(MSR_GS_BASE) ? this_cpu()->cpu : 0;
}

extern char boot_stack[], boot_stack_top[];

static bool on_some_stack(uint64_t addr, uint64_t len)
{
    if (addr >= (uint64_t)boot_stack && addr + len <= (uint64_t)boot_stack_top)
        return true;
    for (unsigned i = 0; i < MAX_CPUS; i++)
        if (cpus[i] && percpu_on_stack(cpus[i], addr, len))
            return true;
    return false;
}

static void print_addr(const char *prefix, uint64_t addr)
{
    uint64_t off;
    const char *name = ksyms_lookup(addr, &off);
    if (name)
        kprintf("%s0x%016lx <%s+0x%lx>\n", prefix, addr, name, off);
    else
        kprintf("%s0x%016lx\n", prefix, addr);
}

/*
 * Print where it happened, then walk saved-RBP links; stop at anything that
 * is not on a known stack.
 */
static void backtrace(uint64_t rip, uint64_t rbp)
{
    kprintf("backtrace:\n");
    print_addr("  ", rip);
    for (unsigned depth = 0; depth < BACKTRACE_MAX; depth++) {
        if (!rbp || (rbp & 7) || !on_some_stack(rbp, 16))
            return;
        const uint64_t *frame = (const uint64_t *)rbp;
        if (!frame[1])
            return;
        /* The return address points after the call; name the call itself. */
        print_addr("  ", frame[1] - 1);
        if (frame[0] <= rbp)
            return;
        rbp = frame[0];
    }
}

/*
 * The first CPU to get here owns the panic; any other CPU halts. The other
 * CPUs are stopped with an NMI before printing, so the console is ours.
 */
static void panic_begin(unsigned cpu)
{
    int expected = -1;
    if (!__atomic_compare_exchange_n(&panic_cpu, &expected, (int)cpu, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        if (expected == (int)cpu)
            system_poweroff(SHUTDOWN_PANIC); /* faulted while panicking: just stop */
        cpu_halt_forever();
    }
    irq_disable();
    if (lapic_ready())
        lapic_send_nmi_all_but_self();
    console_panic_takeover();
}

/* What the lockup watchdog asked for: which CPU its NMI is for, and why. */
static struct {
    int cpu; /* -1: none */
    unsigned detected_by;
    uint64_t stale_ms;
} lockup = {.cpu = -1};

/* The guard page a stack_overflow panic's fault hit. */
static struct {
    const char *stack; /* percpu_guard_hit's name for it */
    unsigned cpu;      /* whose stack */
    uint64_t guard;
} overflow;

static __attribute__((noreturn)) void panic_end(unsigned cpu, long vector, uint64_t rip,
                                                const char *kind)
{
    char buf[224];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "kind", kind);
    json_u64(&j, "cpu", cpu);
    json_i64(&j, "vector", vector);
    json_hex(&j, "rip", rip);
    if (!strcmp(kind, "lockup")) {
        json_u64(&j, "detected_by", lockup.detected_by);
        json_u64(&j, "stale_ms", lockup.stale_ms);
    }
    if (!strcmp(kind, "stack_overflow")) {
        json_str(&j, "stack", overflow.stack);
        json_u64(&j, "stack_cpu", overflow.cpu);
        json_hex(&j, "guard", overflow.guard);
    }
    console_event("panic", &j);
    system_shutdown(SHUTDOWN_PANIC);
}

static void dump_frame(const struct trap_frame *f)
{
    print_addr("rip ", f->rip);
    kprintf("cs  0x%04lx  ss 0x%04lx  rflags 0x%016lx  rsp 0x%016lx\n", f->cs, f->ss, f->rflags,
            f->rsp);
    kprintf("rax 0x%016lx  rbx 0x%016lx  rcx 0x%016lx  rdx 0x%016lx\n", f->rax, f->rbx, f->rcx,
            f->rdx);
    kprintf("rsi 0x%016lx  rdi 0x%016lx  rbp 0x%016lx  r8  0x%016lx\n", f->rsi, f->rdi, f->rbp,
            f->r8);
    kprintf("r9  0x%016lx  r10 0x%016lx  r11 0x%016lx  r12 0x%016lx\n", f->r9, f->r10, f->r11,
            f->r12);
    kprintf("r13 0x%016lx  r14 0x%016lx  r15 0x%016lx\n", f->r13, f->r14, f->r15);
    kprintf("cr0 0x%016lx  cr2 0x%016lx  cr3 0x%016lx  cr4 0x%016lx\n", read_cr0(), read_cr2(),
            read_cr3(), read_cr4());
    backtrace(f->rip, f->rbp);
}

/*
 * A page fault at a stack's guard page, or the double fault it becomes when
 * the page fault cannot be delivered on the overflowed stack (the #DF runs
 * on its own IST stack), fills in `overflow`. CR2 then holds the address
 * that hit the guard: the push that could not be delivered is below the one
 * that faulted, in the same page.
 */
static bool stack_overflow_hit(const struct trap_frame *f)
{
    if (f->vector != 8 && f->vector != 14)
        return false;
    uint64_t cr2 = read_cr2();
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        const char *stack = cpus[i] ? percpu_guard_hit(cpus[i], cr2, &overflow.guard) : NULL;
        if (stack) {
            overflow.stack = stack;
            overflow.cpu = i;
            return true;
        }
    }
    return false;
}

void panic_trap(struct trap_frame *f)
{
    unsigned cpu = current_cpu();
    panic_begin(cpu);
    if (stack_overflow_hit(f)) {
        kprintf("\n*** pollux panic on cpu %u: stack overflow: %s (vector %lu) at the guard page "
                "0x%lx of cpu %u's %s stack\n",
                cpu, exception_name(f->vector), f->vector, overflow.guard, overflow.cpu,
                overflow.stack);
        dump_frame(f);
        panic_end(cpu, (long)f->vector, f->rip, "stack_overflow");
    }
    kprintf("\n*** pollux panic on cpu %u: %s (vector %lu, error code 0x%lx)\n", cpu,
            exception_name(f->vector), f->vector, f->error);
    dump_frame(f);
    panic_end(cpu, (long)f->vector, f->rip, "exception");
}

void panic_lockup_request(unsigned cpu, unsigned detected_by, uint64_t stale_ms)
{
    lockup.detected_by = detected_by;
    lockup.stale_ms = stale_ms;
    __atomic_store_n(&lockup.cpu, (int)cpu, __ATOMIC_RELEASE);
    lapic_send_nmi(cpus[cpu]->apic_id);
}

bool panic_lockup_nmi(struct trap_frame *f)
{
    unsigned cpu = current_cpu();
    if (__atomic_load_n(&lockup.cpu, __ATOMIC_ACQUIRE) != (int)cpu)
        return false;
    panic_begin(cpu);
    kprintf("\n*** pollux panic on cpu %u: lockup: no heartbeat for %lu ms (seen by cpu %u); "
            "stopped by NMI at:\n",
            cpu, lockup.stale_ms, lockup.detected_by);
    dump_frame(f);
    panic_end(cpu, (long)f->vector, f->rip, "lockup");
}

void panic(const char *fmt, ...)
{
    unsigned cpu = current_cpu();
    panic_begin(cpu);
    va_list ap;
    va_start(ap, fmt);
    kprintf("\n*** pollux panic on cpu %u: ", cpu);
    kvprintf(fmt, ap);
    kprintf("\n");
    va_end(ap);
    uint64_t rip = (uint64_t)__builtin_return_address(0);
    backtrace(rip - 1, *(uint64_t *)__builtin_frame_address(0));
    panic_end(cpu, -1, rip, "software");
}

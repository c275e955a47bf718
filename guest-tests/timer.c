/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Checks that the local APIC timer never fires early, on every vCPU at
 * once: N ticks (argument, default 50) of a 250 Hz periodic timer, then a
 * 2 ms one-shot, then, where offered, a TSC deadline 2 ms ahead and one
 * already passed, whose interrupt must be taken as the WRMSR retires, with
 * the MSR reading 0 after it (SDM 10.5.4.1; "tsc-deadline-past ok"). Tick k
 * must not come before start + k periods, with the period converted from
 * the initial count actually written (so the check has no rounding slack
 * and needs none). Late or coalesced ticks are fine: a host may be busy;
 * the longest wait from one tick to the next is reported (max_gap_us: how
 * long the vCPU went without its timer), and every timer
 * interrupt taken (interrupts), for the hypervisor's count to be compared.
 * Prints one @bench line per vCPU for the periodic timer; exits 0, or 2
 * after printing what fired early (1 if the vCPUs or the timer are
 * missing).
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define TIMER_VECTOR  0x41
#define TICKS_DEFAULT 50u
#define TICKS_MAX     10000000u
#define PERIOD_US     4000u /* 250 Hz */
#define ONESHOT_US    2000u
#define DEADLINE_US   2000u
#define EXIT_EARLY    2
#define EXIT_LATE     4 /* the passed deadline's interrupt was not taken at once */
#define PAST_VECTOR   0x42

/* The first interrupt of a check that came before its time. */
struct early {
    uint32_t tick;   /* 1-based; 0: none came early */
    uint64_t cycles; /* how long before its earliest allowed TSC */
};

enum { PERIODIC, ONESHOT, DEADLINE, CHECKS };
static const char *const check_names[CHECKS] = {"periodic", "oneshot", "tsc-deadline"};

struct vcpu_timer {
    /* Written by the timer interrupt on this vCPU, read by its main code. */
    volatile uint32_t count; /* interrupts so far in the current check */
    volatile uint32_t limit; /* stop the timer at this many */
    int which;               /* the check under way */
    uint64_t start;          /* TSC just before the timer was started */
    uint64_t step;           /* APIC timer input clocks from one tick to the next */
    uint64_t last;           /* TSC at the latest interrupt */
    uint64_t max_gap;        /* periodic: the longest wait for the next tick, in cycles */
    uint32_t interrupts;     /* every timer interrupt taken, counted or not */

    uint64_t periodic_us; /* from the initial count write to tick N */
    struct early early[CHECKS];
};

static uint32_t ticks = TICKS_DEFAULT;
static bool deadline_offered;
static struct vcpu_timer timers[MAX_CPUS];
static uint32_t finished;                      /* vCPUs done with all checks */
static volatile uint32_t past_taken[MAX_CPUS]; /* the passed deadline's interrupts */
static bool past_late[MAX_CPUS];               /* ... not taken by the next instruction */

__attribute__((interrupt)) static void past_interrupt(struct interrupt_frame *f)
{
    (void)f;
    past_taken[this_cpu_index()]++;
    timers[this_cpu_index()].interrupts++; /* a timer interrupt too, for pollux's count */
    lapic_eoi();
}

/* A deadline already passed, with interrupts on: taken before CPUID runs, the MSR then 0. */
static void check_past_deadline(uint32_t me)
{
    __asm__ volatile("sti" ::: "memory");
    lapic_timer_deadline(PAST_VECTOR, rdtsc());
    uint32_t taken = past_taken[me];
    (void)cpuid(0, 0); /* serializing */
    uint64_t msr = rdmsr(MSR_TSC_DEADLINE);
    __asm__ volatile("cli" ::: "memory");
    past_late[me] = taken != 1 || msr != 0;
    if (past_late[me])
        printf("vcpu %u: a passed TSC deadline: %u interrupts at once, the MSR 0x%llx\n", me, taken,
               msr);
}

static void check(struct vcpu_timer *t, int which, uint32_t tick, uint64_t at, uint64_t earliest)
{
    struct early *e = &t->early[which];
    if (e->tick == 0 && at < earliest) {
        e->tick = tick;
        e->cycles = earliest - at;
    }
}

/* Each tick is checked as it comes: a long run keeps no per-tick record. */
__attribute__((interrupt)) static void timer_interrupt(struct interrupt_frame *f)
{
    uint64_t now = rdtsc();
    (void)f;
    struct vcpu_timer *t = &timers[this_cpu_index()];
    t->interrupts++;
    uint32_t n = t->count;
    /* A tick may already be pending when the timer is stopped: it is not counted. */
    if (n < t->limit) {
        if (t->which != DEADLINE) {
            uint64_t earliest = t->start + apic_ticks_to_tsc((uint64_t)(n + 1) * t->step);
            check(t, t->which, n + 1, now, earliest);
            uint64_t since = now - (n ? t->last : t->start);
            if (t->which == PERIODIC && since > t->max_gap)
                t->max_gap = since;
        }
        t->last = now;
        t->count = n + 1;
        if (n + 1 == t->limit)
            lapic_timer_stop();
    }
    lapic_eoi();
}

static void wait_ticks(struct vcpu_timer *t)
{
    while (t->count < t->limit)
        wait_for_interrupt();
}

/* The initial count for us microseconds at *divider 1, or at 16 should that not fit. */
static uint32_t timer_count(uint32_t us, uint32_t *divider)
{
    uint64_t count = div64((uint64_t)apic_timer_khz() * us, 1000);
    *divider = count > UINT32_MAX ? 16 : 1;
    return (uint32_t)div64(count, *divider);
}

/* Start a check of `limit` interrupts; the handler checks the timed ones. */
static void arm(struct vcpu_timer *t, int which, uint32_t limit, uint32_t count, uint32_t divider)
{
    t->which = which;
    t->count = 0;
    t->limit = limit;
    t->step = (uint64_t)count * divider;
    if (which != DEADLINE)
        t->start = lapic_timer_start(which == PERIODIC ? LAPIC_TIMER_PERIODIC : LAPIC_TIMER_ONESHOT,
                                     TIMER_VECTOR, count, divider);
}

static void run_checks(uint32_t me)
{
    struct vcpu_timer *t = &timers[me];
    if (apic_timer_khz() == 0)
        return; /* guest_main reports it */

    uint32_t divider;
    uint32_t count = timer_count(PERIOD_US, &divider);
    arm(t, PERIODIC, ticks, count, divider);
    wait_ticks(t);
    t->periodic_us = tsc_to_us(t->last - t->start);

    count = timer_count(ONESHOT_US, &divider);
    arm(t, ONESHOT, 1, count, divider);
    wait_ticks(t);

    if (deadline_offered) {
        uint64_t deadline = rdtsc() + us_to_tsc(DEADLINE_US);
        arm(t, DEADLINE, 1, 0, 0);
        lapic_timer_deadline(TIMER_VECTOR, deadline);
        wait_ticks(t);
        check(t, DEADLINE, 1, t->last, deadline);
        check_past_deadline(me);
    }
    /* A tick that came after the last one counted is taken too, so all are accounted for. */
    lapic_timer_stop();
    __asm__ volatile("sti; nop; cli" ::: "memory");
    __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
}

/* Print each vCPU's early interrupt in one check; true if there was one. */
static bool report(uint32_t n, int which)
{
    bool any = false;
    for (uint32_t i = 0; i < n; i++) {
        const struct early *e = &timers[i].early[which];
        if (e->tick != 0) {
            printf("vcpu %u: %s interrupt %u came %llu cycles (%llu us) early\n", i,
                   check_names[which], e->tick, e->cycles, tsc_to_us(e->cycles));
            any = true;
        }
    }
    return any;
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    ticks = arg_uint(info, ticks, 1, TICKS_MAX);
    deadline_offered = lapic_tsc_deadline_offered();

    set_interrupt_handler(TIMER_VECTOR, timer_interrupt);
    set_interrupt_handler(PAST_VECTOR, past_interrupt);
    uint32_t n = smp_start(false, run_checks);
    if (n == 0)
        return 1;
    if (apic_timer_khz() == 0) {
        printf("the local APIC timer does not count\n");
        return 1;
    }
    run_checks(0);
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < n)
        cpu_relax();

    /* Printed here rather than by each vCPU, so no serial output disturbs the timing. */
    for (uint32_t i = 0; i < n; i++)
        printf("@bench {\"guest\":\"timer\",\"op\":\"periodic\",\"vcpu\":%u,\"value\":%llu,"
               "\"expected\":%llu,\"iters\":%u,\"max_gap_us\":%llu,\"interrupts\":%u}\n",
               i, timers[i].periodic_us, (uint64_t)ticks * PERIOD_US, ticks,
               tsc_to_us(timers[i].max_gap), timers[i].interrupts);
    bool early = report(n, PERIODIC);
    if (!report(n, ONESHOT))
        printf("oneshot ok\n");
    else
        early = true;
    if (!deadline_offered)
        printf("tsc-deadline not offered\n");
    else if (!report(n, DEADLINE))
        printf("tsc-deadline ok\n");
    else
        early = true;
    bool late = false;
    for (uint32_t i = 0; i < n; i++)
        late = late || past_late[i];
    if (deadline_offered && !late)
        printf("tsc-deadline-past ok\n");
    return early ? EXIT_EARLY : late ? EXIT_LATE : 0;
}

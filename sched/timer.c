/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/timer.h"

#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/tsc.h"
#include "sched/sched.h"

struct timer_queue {
    struct spinlock lock;
    bool tsc_deadline;   /* the APIC timer runs in TSC-deadline mode */
    struct timer *head;  /* sorted by deadline */
    uint64_t programmed; /* deadline the APIC timer is set for, 0 = none */
};

static struct timer_queue queues[MAX_CPUS];

/* Program this CPU's APIC timer for host TSC d (0 = stop). Interrupts off. */
static void apic_timer_set(struct timer_queue *q, uint64_t d)
{
    q->programmed = d;
    if (q->tsc_deadline) {
        lapic_timer_tsc_deadline(d);
        return;
    }
    if (!d) {
        lapic_timer_stop();
        return;
    }
    uint64_t now = rdtsc();
    /* Rounded up: the interrupt must never come before the deadline. */
    uint64_t ahead = d > now ? d - now : 0;
    uint64_t ticks = ahead > (UINT64_MAX - tsc_khz) / lapic_timer_khz
                         ? UINT64_MAX
                         : (ahead * lapic_timer_khz + tsc_khz - 1) / tsc_khz;
    if (!ticks)
        ticks = 1;
    /* A far deadline is reached in steps: the CPU reprograms after each interrupt. */
    if (ticks > 0xffffffffu)
        ticks = 0xffffffffu;
    lapic_timer_oneshot((uint32_t)ticks);
}

void timer_init(struct timer *t, void (*fn)(struct timer *t, uint64_t now))
{
    t->fn = fn;
    t->next = 0;
    t->cpu = -1;
    t->deadline = 0;
}

static void unlink(struct timer_queue *q, struct timer *t)
{
    for (struct timer **p = &q->head; *p; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            break;
        }
    }
    t->next = 0;
    t->cpu = -1;
}

void timer_cancel(struct timer *t)
{
    for (;;) {
        int cpu = __atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE);
        if (cpu < 0)
            return;
        struct timer_queue *q = &queues[cpu];
        uint64_t flags = spin_lock_irqsave(&q->lock);
        bool same = t->cpu == cpu;
        if (same)
            unlink(q, t);
        spin_unlock_irqrestore(&q->lock, flags);
        if (same)
            return;
    }
}

void timer_arm(struct timer *t, unsigned cpu, uint64_t deadline)
{
    timer_cancel(t);
    struct timer_queue *q = &queues[cpu];
    uint64_t flags = spin_lock_irqsave(&q->lock);
    struct timer **p = &q->head;
    while (*p && (*p)->deadline <= deadline)
        p = &(*p)->next;
    t->deadline = deadline;
    t->next = *p;
    *p = t;
    __atomic_store_n(&t->cpu, (int)cpu, __ATOMIC_RELEASE);
    bool earliest = q->head == t;
    bool here = cpu == this_cpu()->cpu;
    /*
     * This CPU's APIC timer may be set too late: bring it forward now. The
     * exit fast path enters the guest again without host_timer_program, so a
     * deadline the guest armed there would otherwise wait for the next full
     * exit. Only ever earlier: the interrupt then reprograms for the rest.
     */
    if (earliest && here && (!q->programmed || deadline < q->programmed))
        apic_timer_set(q, deadline);
    spin_unlock_irqrestore(&q->lock, flags);
    /* Another CPU's APIC timer may now be set too late: make it look again. */
    if (earliest && !here)
        sched_kick(cpu);
}

void timers_run_expired(uint64_t now)
{
    struct timer_queue *q = &queues[this_cpu()->cpu];
    for (;;) {
        spin_lock(&q->lock);
        struct timer *t = q->head;
        if (!t || t->deadline > now) {
            spin_unlock(&q->lock);
            return;
        }
        unlink(q, t);
        spin_unlock(&q->lock);
        t->fn(t, now);
    }
}

uint64_t timers_next_deadline(void)
{
    struct timer_queue *q = &queues[this_cpu()->cpu];
    uint64_t flags = spin_lock_irqsave(&q->lock);
    uint64_t d = q->head ? q->head->deadline : 0;
    spin_unlock_irqrestore(&q->lock, flags);
    return d;
}

void host_timer_program(uint64_t extra)
{
    struct timer_queue *q = &queues[this_cpu()->cpu];
    /*
     * Nothing armed, nothing asked, nothing programmed: the common case of a
     * lone vCPU, decided without the lock (an arm from elsewhere kicks us).
     */
    if (!extra && !q->programmed && !__atomic_load_n(&q->head, __ATOMIC_ACQUIRE))
        return;
    uint64_t d = timers_next_deadline();
    if (extra && (!d || extra < d))
        d = extra;
    if (d == q->programmed)
        return;
    apic_timer_set(q, d);
}

void host_timer_init(void)
{
    queues[this_cpu()->cpu].tsc_deadline = lapic_has_tsc_deadline();
}

void host_timer_fired(void)
{
    queues[this_cpu()->cpu].programmed = 0;
}

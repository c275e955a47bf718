#include "sched/sched.h"

#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/trap.h"
#include "arch/x86/tsc.h"
#include "arch/x86/virt.h"
#include "drivers/console.h"
#include "vmm/vmm.h"

struct runqueue {
    struct spinlock lock;
    struct vcpu *head, *tail;
    uint64_t timer_deadline; /* armed one-shot, 0 = none */
    bool ready;              /* the backend is enabled on this CPU */
};

static struct runqueue runqueues[MAX_CPUS];

static void timer_irq(struct trap_frame *f)
{
    (void)f;
    runqueues[this_cpu()->cpu].timer_deadline = 0;
    lapic_eoi();
}

static void kick_irq(struct trap_frame *f)
{
    (void)f;
    lapic_eoi();
}

int sched_cpu_init(void)
{
    struct percpu *p = this_cpu();
    if (p->cpu == 0) {
        irq_register(VECTOR_TIMER, timer_irq);
        irq_register(VECTOR_KICK, kick_irq);
    }
    if (!virt)
        return 0;
    char err[128];
    if (virt->cpu_enable(err, sizeof(err))) {
        kprintf("pollux: cpu %u: cannot enable %s: %s\n", p->cpu, virt->name, err);
        return -1;
    }
    runqueues[p->cpu].ready = true;
    return 0;
}

bool sched_cpu_ready(unsigned cpu)
{
    return cpu < MAX_CPUS && runqueues[cpu].ready;
}

void sched_kick(unsigned cpu)
{
    if (cpu != this_cpu()->cpu && cpus[cpu])
        lapic_send_ipi(cpus[cpu]->apic_id, VECTOR_KICK);
}

void sched_enqueue(unsigned cpu, struct vcpu *v)
{
    struct runqueue *rq = &runqueues[cpu];
    uint64_t flags = spin_lock_irqsave(&rq->lock);
    v->next = 0;
    if (rq->tail)
        rq->tail->next = v;
    else
        rq->head = v;
    rq->tail = v;
    v->cpu = cpu;
    spin_unlock_irqrestore(&rq->lock, flags);
    sched_kick(cpu);
}

static struct vcpu *dequeue(struct runqueue *rq)
{
    spin_lock(&rq->lock);
    struct vcpu *v = rq->head;
    if (v) {
        rq->head = v->next;
        if (!rq->head)
            rq->tail = 0;
    }
    spin_unlock(&rq->lock);
    return v;
}

void sched_run(bool (*done)(void))
{
    struct runqueue *rq = &runqueues[this_cpu()->cpu];
    irq_disable();
    for (;;) {
        struct vcpu *v = dequeue(rq);
        if (v) {
            vmm_run_vcpu(v);
            continue;
        }
        if (done && done())
            return;
        /* Checked with interrupts off; STI;HLT cannot miss the kick. */
        cpu_idle_wait();
        irq_disable();
    }
}

void sched_timer_arm(uint64_t tsc_deadline)
{
    struct runqueue *rq = &runqueues[this_cpu()->cpu];
    if (rq->timer_deadline == tsc_deadline)
        return;
    uint64_t now = rdtsc();
    /* Rounded up: the interrupt must never come before the deadline. */
    uint64_t ticks =
        tsc_deadline > now ? ((tsc_deadline - now) * lapic_timer_khz + tsc_khz - 1) / tsc_khz : 1;
    /* A far deadline is reached in steps: the timer re-arms after each exit. */
    if (ticks > 0xffffffffu)
        ticks = 0xffffffffu;
    rq->timer_deadline = tsc_deadline;
    lapic_timer_oneshot((uint32_t)ticks);
}

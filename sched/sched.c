#include "sched/sched.h"

#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/trap.h"
#include "arch/x86/tsc.h"
#include "arch/x86/virt.h"
#include "drivers/console.h"
#include "sched/runqueue.h"
#include "sched/timer.h"
#include "sched/watchdog.h"
#include "vmm/vcpu.h"
#include "vmm/vmm.h"

struct sched_params sched_params = {
    .slice_us = 4000,
    .wakeup_granularity_us = 1000,
};

/* Lock order: a vCPU's lock before its run queue's, never the reverse. */
struct runqueue {
    struct spinlock lock;
    struct rq_list queue;
    struct vcpu *current;
    uint64_t slice_start, slice_end; /* host TSC */
    bool idle;                       /* halted in sched_run waiting for work */
    bool wakeup_pending;             /* a woken vCPU waits at the head of the queue */
    bool resched;                    /* the current vCPU must give up the CPU at its next exit */
    bool ready;                      /* the backend is enabled on this CPU */
    uint64_t idle_cycles, busy_cycles;
    uint64_t poll_cycles; /* the part of busy_cycles spent halt polling */
};

static struct runqueue runqueues[MAX_CPUS];
static unsigned next_placement;

static inline struct runqueue *this_rq(void)
{
    return &runqueues[this_cpu()->cpu];
}

static inline struct vcpu *link_vcpu(struct rq_link *l)
{
    return (struct vcpu *)((char *)l - offsetof(struct vcpu, rq_link));
}

/* sched_params in TSC cycles, converted once at boot (the exit path asks on every exit). */
static uint64_t slice_cycles, granularity_cycles;

static void timer_irq(struct trap_frame *f)
{
    (void)f;
    host_timer_fired();
    lapic_eoi();
    timers_run_expired(rdtsc());
}

static void kick_irq(struct trap_frame *f)
{
    (void)f;
    lapic_eoi();
}

int sched_cpu_init(void)
{
    struct percpu *p = this_cpu();
    struct runqueue *rq = &runqueues[p->cpu];
    rq_init(&rq->queue);
    host_timer_init();
    if (p->cpu == 0) {
        slice_cycles = sched_params.slice_us * tsc_khz / 1000;
        granularity_cycles = sched_params.wakeup_granularity_us * tsc_khz / 1000;
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
    rq->ready = true;
    return 0;
}

bool sched_cpu_ready(unsigned cpu)
{
    return cpu < MAX_CPUS && runqueues[cpu].ready;
}

int sched_place(int pin)
{
    if (pin >= 0)
        return sched_cpu_ready((unsigned)pin) ? pin : -1;
    for (unsigned tries = 0; tries < cpu_count; tries++) {
        unsigned cpu = __atomic_fetch_add(&next_placement, 1, __ATOMIC_RELAXED) % cpu_count;
        if (sched_cpu_ready(cpu))
            return (int)cpu;
    }
    return -1;
}

unsigned sched_this_cpu(void)
{
    return this_cpu()->cpu;
}

void sched_kick(unsigned cpu)
{
    if (cpu != this_cpu()->cpu && cpus[cpu])
        lapic_send_ipi(cpus[cpu]->apic_id, VECTOR_KICK);
}

void sched_wake(struct vcpu *v)
{
    struct runqueue *rq = &runqueues[v->cpu];
    uint64_t now = rdtsc();
    uint64_t flags = spin_lock_irqsave(&rq->lock);
    rq_push_head(&rq->queue, &v->rq_link);
    bool kick = rq->idle;
    if (rq->current) {
        /* The first woken vCPU shortens the running one's slice: that CPU must re-arm. */
        kick |= !rq->wakeup_pending;
        rq->wakeup_pending = true;
        if (now - rq->slice_start >= granularity_cycles) {
            rq->resched = true;
            kick = true;
        }
    }
    spin_unlock_irqrestore(&rq->lock, flags);
    if (kick)
        sched_kick(v->cpu);
}

/* Lock-free peek: a vCPU queued after it is followed by a kick of this CPU. */
static bool queue_empty(struct runqueue *rq)
{
    return __atomic_load_n(&rq->queue.count, __ATOMIC_ACQUIRE) == 0;
}

void sched_prepare_entry(struct vcpu *v)
{
    struct runqueue *rq = this_rq();
    uint64_t end = 0;
    if (!queue_empty(rq)) {
        spin_lock(&rq->lock);
        end = rq->slice_end;
        uint64_t gran = rq->slice_start + granularity_cycles;
        if (rq->wakeup_pending && gran < end)
            end = gran;
        spin_unlock(&rq->lock);
    }
    if (end && virt->set_preemption_timer(v, end)) {
        host_timer_program(0);
        return;
    }
    virt->set_preemption_timer(v, 0);
    host_timer_program(end);
}

bool sched_should_yield(void)
{
    struct runqueue *rq = this_rq();
    uint64_t now = rdtsc();
    if (queue_empty(rq) && !rq->resched) {
        rq->slice_end = now + slice_cycles; /* nobody waits: go on */
        return false;
    }
    spin_lock(&rq->lock);
    bool yield;
    if (rq_empty(&rq->queue)) {
        rq->slice_end = now + slice_cycles;
        yield = false;
    } else {
        yield = rq->resched || now >= rq->slice_end ||
                (rq->wakeup_pending && now - rq->slice_start >= granularity_cycles);
    }
    spin_unlock(&rq->lock);
    return yield;
}

bool sched_others_waiting(void)
{
    return !queue_empty(this_rq());
}

void sched_poll(struct vcpu *v, uint64_t deadline)
{
    struct runqueue *rq = this_rq();
    uint64_t start = rdtsc(), now = start;
    while (__atomic_load_n(&v->state, __ATOMIC_ACQUIRE) == VCPU_POLLING && now < deadline &&
           queue_empty(rq)) {
        /* A timer that ran while interrupts were on may have re-armed one on this CPU. */
        host_timer_program(0);
        /* STI holds interrupts off for one more instruction: they are taken after the PAUSE. */
        __asm__ volatile("sti; pause; cli" ::: "memory");
        now = rdtsc();
    }
    rq->poll_cycles += rdtsc() - start;
}

static struct vcpu *pick_next(struct runqueue *rq, uint64_t now)
{
    struct rq_link *l = rq_pop(&rq->queue);
    if (!l)
        return NULL;
    struct vcpu *v = link_vcpu(l);
    rq->current = v;
    rq->slice_start = now;
    rq->slice_end = now + slice_cycles;
    rq->resched = false;
    rq->wakeup_pending = false;
    return v;
}

static void idle(struct runqueue *rq)
{
    /* rq->idle was set under the queue lock: a waker either saw it or we see its vCPU. */
    host_timer_program(0);
    uint64_t t0 = rdtsc();
    cpu_idle_wait();
    irq_disable();
    rq->idle_cycles += rdtsc() - t0;
    spin_lock(&rq->lock);
    rq->idle = false;
    spin_unlock(&rq->lock);
}

static void run_one(struct runqueue *rq, struct vcpu *v, uint64_t now)
{
    spin_lock(&v->lock);
    bool runnable = v->state == VCPU_RUNNABLE;
    if (runnable) {
        vcpu_set_state(v, VCPU_RUNNING, now);
        v->on_cpu = true;
    }
    spin_unlock(&v->lock);
    if (runnable) {
        enum run_result r = vcpu_run(v);
        uint64_t end = rdtsc();
        rq->busy_cycles += end - now;
        if (r == RUN_STOPPED || r == RUN_OFF)
            virt->vcpu_unload(v); /* it may next run elsewhere, or its VM be freed */
        if (r == RUN_STOPPED) {
            vcpu_retire(v);
        } else {
            bool retire = false;
            spin_lock(&v->lock);
            v->on_cpu = false;
            if (r == RUN_PREEMPTED) {
                vcpu_set_state(v, VCPU_RUNNABLE, end);
                spin_lock(&rq->lock);
                rq_push_tail(&rq->queue, &v->rq_link);
                spin_unlock(&rq->lock);
            } else if (v->state == VCPU_WAIT_SIPI) {
                /* What happened while it was leaving: its VM stopped, or a startup IPI came. */
                if (v->vm->stopping) {
                    vcpu_set_state(v, VCPU_STOPPED, end);
                    retire = true;
                } else if (v->sipi_vector >= 0) {
                    vcpu_set_state(v, VCPU_RUNNABLE, end);
                    sched_wake(v);
                }
            }
            spin_unlock(&v->lock);
            if (retire)
                vmm_vcpu_retired(v->vm);
        }
    }
    spin_lock(&rq->lock);
    rq->current = NULL;
    spin_unlock(&rq->lock);
}

void sched_run(bool (*done)(void))
{
    struct runqueue *rq = this_rq();
    irq_disable();
    for (;;) {
        watchdog_beat();
        uint64_t now = rdtsc();
        timers_run_expired(now);
        spin_lock(&rq->lock);
        struct vcpu *v = pick_next(rq, now);
        if (!v) {
            if (done && done()) {
                spin_unlock(&rq->lock);
                return;
            }
            rq->idle = true;
            spin_unlock(&rq->lock);
            idle(rq);
            continue;
        }
        spin_unlock(&rq->lock);
        run_one(rq, v, now);
    }
}

void sched_report(void)
{
    for (unsigned i = 0; i < cpu_count; i++) {
        struct runqueue *rq = &runqueues[i];
        char buf[128];
        struct json j;
        json_begin(&j, buf, sizeof(buf));
        json_u64(&j, "cpu", i);
        json_u64(&j, "busy_us", tsc_to_ns(rq->busy_cycles) / 1000);
        json_u64(&j, "idle_us", tsc_to_ns(rq->idle_cycles) / 1000);
        json_u64(&j, "poll_us", tsc_to_ns(rq->poll_cycles) / 1000);
        console_event("cpu_stats", &j);
    }
}

void sched_dump_cpu(unsigned cpu)
{
    struct runqueue *rq = &runqueues[cpu];
    struct vcpu *cur = rq->current;
    kprintf("  runqueue: %u queued, running %s/%u, idle %d, resched %d, wakeup_pending %d\n",
            rq->queue.count, cur ? cur->vm->cfg.name : "-", cur ? cur->id : 0, rq->idle,
            rq->resched, rq->wakeup_pending);
}

/* SPDX-License-Identifier: GPL-2.0-only */
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
#include "sched/balance.h"
#include "sched/deferred.h"
#include "sched/entity.h"
#include "sched/runqueue.h"
#include "sched/slice.h"
#include "sched/timer.h"
#include "sched/watchdog.h"
#include "sched/yield.h"
#include "stats/report.h"

struct sched_params sched_params = {
    .slice_us = 4000,
    .wakeup_granularity_us = 1000,
    .seed_stagger_us = 2000,
};

/*
 * Lock order: a vCPU's lock before its run queue's, never the reverse; two
 * run queues in CPU-index order (balance_lock_order).
 */
struct runqueue {
    struct spinlock lock;
    struct rq_list queue;
    struct sched_entity *current;
    struct sched_entity *handoff; /* a directed yield's target: runs next, in no queue */
    struct slice slice;           /* the current entity's run and its end (sched/slice.h) */
    bool idle;                    /* halted in sched_run waiting for work */
    bool ready;                   /* the backend is enabled on this CPU */
    bool gave_work;  /* to another CPU since this one last let the others run (sched.h); only this
                        CPU writes it, a lost update costs one PAUSE more or less */
    unsigned placed; /* vCPUs of live VMs on this CPU: placement's load */
    uint64_t idle_cycles, busy_cycles;
    uint64_t poll_cycles;          /* the part of busy_cycles spent halt polling */
    uint64_t idle_exit_cycles;     /* the part of idle_cycles spent in the C-state model's exit */
    struct deferred_list deferred; /* device work waiting for this CPU (sched/deferred.h) */
    uint64_t deferred_cycles;      /* spent running it */
    uint64_t idle_exit_from, idle_exit_to; /* host TSC: the model's last exit */
};

static struct runqueue runqueues[MAX_CPUS];
static uint64_t idle_cpus;    /* bit c: CPU c idles (changed under its queue's lock) */
static uint64_t next_balance; /* host TSC of the next periodic balance */
static unsigned balance_start;

static inline struct runqueue *this_rq(void)
{
    return &runqueues[this_cpu()->cpu];
}

static inline struct sched_entity *link_entity(struct rq_link *l)
{
    return (struct sched_entity *)((char *)l - offsetof(struct sched_entity, rq_link));
}

static const struct sched_entity_ops *ops;

void sched_set_entity_ops(const struct sched_entity_ops *o)
{
    ops = o;
}

/* sched_params in TSC cycles, converted once at boot (the exit path asks on every exit). */
static uint64_t slice_cycles, granularity_cycles, balance_cycles, idle_exit_cycles;

static inline unsigned rq_cpu(const struct runqueue *rq)
{
    return (unsigned)(rq - runqueues);
}

/*
 * The slice timer and the kick are how a CPU learns that its current
 * entity should leave or look again: tell its owner (for a vCPU, its exit
 * fast path: vmm/exit/fastpath.h).
 */
static void tell_current(void)
{
    struct sched_entity *cur = __atomic_load_n(&this_rq()->current, __ATOMIC_ACQUIRE);
    if (cur)
        ops->notice(cur);
}

static void timer_irq(struct trap_frame *f)
{
    (void)f;
    tell_current();
    host_timer_fired();
    lapic_eoi();
    timers_run_expired(rdtsc());
}

static void kick_irq(struct trap_frame *f)
{
    (void)f;
    tell_current();
    lapic_eoi();
}

/* The console's drainer: an idle CPU other than this one, woken for it. */
static bool kick_idle_for_console(void)
{
    unsigned self = this_cpu()->cpu;
    uint64_t idle = __atomic_load_n(&idle_cpus, __ATOMIC_ACQUIRE) & ~(1ull << self);
    if (!idle)
        return false;
    sched_kick((unsigned)__builtin_ctzll(idle));
    return true;
}

void sched_cpu_init(bool guests)
{
    struct percpu *p = this_cpu();
    struct runqueue *rq = &runqueues[p->cpu];
    rq_init(&rq->queue);
    deferred_list_init(&rq->deferred);
    host_timer_init();
    if (p->cpu == 0) {
        slice_cycles = sched_params.slice_us * tsc_khz / 1000;
        granularity_cycles = sched_params.wakeup_granularity_us * tsc_khz / 1000;
        idle_exit_cycles = sched_params.idle_exit_latency_us * tsc_khz / 1000;
        balance_cycles = balance_params.ms ? balance_params.ms * tsc_khz : 4 * slice_cycles;
        irq_register(VECTOR_TIMER, timer_irq);
        irq_register(VECTOR_KICK, kick_irq);
        console_set_idle_kicker(kick_idle_for_console);
    }
    rq->ready = guests;
}

bool sched_cpu_ready(unsigned cpu)
{
    return cpu < MAX_CPUS && runqueues[cpu].ready;
}

int sched_place(int pin)
{
    int cpu;
    if (pin >= 0) {
        cpu = sched_cpu_ready((unsigned)pin) ? pin : -1;
    } else {
        unsigned placed[MAX_CPUS];
        bool ready[MAX_CPUS];
        for (unsigned c = 0; c < cpu_count; c++) {
            placed[c] = __atomic_load_n(&runqueues[c].placed, __ATOMIC_RELAXED);
            ready[c] = runqueues[c].ready;
        }
        cpu = balance_place(placed, ready, cpu_count);
    }
    if (cpu >= 0)
        __atomic_add_fetch(&runqueues[cpu].placed, 1, __ATOMIC_RELAXED);
    return cpu;
}

void sched_unplace(const struct sched_entity *v)
{
    __atomic_sub_fetch(&runqueues[v->cpu].placed, 1, __ATOMIC_RELAXED);
}

unsigned sched_this_cpu(void)
{
    return this_cpu()->cpu;
}

void sched_kick(unsigned cpu)
{
    if (cpu == this_cpu()->cpu) {
        tell_current(); /* no IPI to itself: its vCPU's next exit takes the full path */
    } else if (cpus[cpu]) {
        this_rq()->gave_work = true;
        lapic_send_ipi(cpus[cpu]->apic_id, VECTOR_KICK);
    }
}

void sched_note_remote_work(unsigned cpu)
{
    if (cpu != this_cpu()->cpu)
        this_rq()->gave_work = true;
}

void sched_let_others_run(void)
{
    struct runqueue *rq = this_rq();
    if (!rq->gave_work)
        return;
    rq->gave_work = false;
    cpu_relax();
}

/* An idle CPU other than cpu, to pull a vCPU queued behind a busy one; -1 if none. */
static int idle_cpu_besides(unsigned cpu)
{
    uint64_t idle = __atomic_load_n(&idle_cpus, __ATOMIC_ACQUIRE) & ~(1ull << cpu);
    return idle && balance_params.enabled ? __builtin_ctzll(idle) : -1;
}

void sched_wake(struct sched_entity *v)
{
    struct runqueue *rq = &runqueues[v->cpu];
    uint64_t now = rdtsc();
    uint64_t flags = spin_lock_irqsave(&rq->lock);
    rq_push_head(&rq->queue, &v->rq_link);
    bool kick = rq->idle;
    int helper = -1;
    if (rq->current) {
        /* Its CPU is busy: an idle one takes it at once (idle pull), if it may run there. */
        helper = v->pin < 0 ? idle_cpu_besides(v->cpu) : -1;
        /* The first woken vCPU shortens the running one's slice: that CPU must re-arm. */
        kick |= !rq->slice.wakeup_pending;
        rq->slice.wakeup_pending = true;
        if (slice_granted(&rq->slice, now, granularity_cycles)) {
            rq->slice.resched = true;
            kick = true;
        }
    }
    spin_unlock_irqrestore(&rq->lock, flags);
    if (kick)
        sched_kick(v->cpu);
    if (helper >= 0)
        sched_kick((unsigned)helper);
}

/* Lock-free peek: a vCPU queued after it is followed by a kick of this CPU. */
static bool queue_empty(struct runqueue *rq)
{
    return __atomic_load_n(&rq->queue.count, __ATOMIC_ACQUIRE) == 0;
}

/* Lock-free peek, likewise: deferred device work waits for this CPU. */
static bool deferred_waiting(struct runqueue *rq)
{
    return __atomic_load_n(&rq->deferred.count, __ATOMIC_ACQUIRE) != 0;
}

void sched_prepare_entry(struct sched_entity *v)
{
    struct runqueue *rq = this_rq();
    uint64_t end = 0;
    /* Deferred work waits as a queued vCPU does: the current one keeps its slice. */
    if (!queue_empty(rq) || deferred_waiting(rq)) {
        spin_lock(&rq->lock);
        end = slice_deadline(&rq->slice, granularity_cycles);
        spin_unlock(&rq->lock);
    }
    if (end && ops->arm_preemption(v, end)) {
        host_timer_program(0);
        return;
    }
    ops->arm_preemption(v, 0);
    host_timer_program(end);
}

bool sched_should_yield(void)
{
    struct runqueue *rq = this_rq();
    uint64_t now = rdtsc();
    bool deferred = deferred_waiting(rq);
    if (queue_empty(rq) && !rq->slice.resched && !deferred) {
        rq->slice.end = now + slice_cycles; /* nobody waits: go on */
        return false;
    }
    spin_lock(&rq->lock);
    bool yield;
    if (rq_empty(&rq->queue) && !deferred) {
        rq->slice.end = now + slice_cycles;
        yield = false;
    } else {
        yield = slice_over(&rq->slice, now, granularity_cycles);
    }
    spin_unlock(&rq->lock);
    return yield;
}

bool sched_others_waiting(void)
{
    struct runqueue *rq = this_rq();
    return !queue_empty(rq) || deferred_waiting(rq);
}

void sched_poll(struct sched_entity *v, uint64_t deadline)
{
    struct runqueue *rq = this_rq();
    uint64_t start = rdtsc(), now = start;
    while (__atomic_load_n(&v->state, __ATOMIC_ACQUIRE) == SCHED_POLLING && now < deadline &&
           queue_empty(rq) && !deferred_waiting(rq)) {
        /* A timer that ran while interrupts were on may have re-armed one on this CPU. */
        host_timer_program(0);
        /* STI holds interrupts off for one more instruction: they are taken after the PAUSE. */
        __asm__ volatile("sti; pause; cli" ::: "memory");
        now = rdtsc();
    }
    rq->poll_cycles += rdtsc() - start;
}

/* Make v the CPU's current vCPU, with a fresh slice. Queue lock held. */
static void start_slice(struct runqueue *rq, struct sched_entity *v, uint64_t now)
{
    rq->current = v;
    slice_begin(&rq->slice, now, slice_cycles);
}

static struct sched_entity *pick_next(struct runqueue *rq, uint64_t now)
{
    struct sched_entity *target = rq->handoff;
    if (target) {
        rq->handoff = NULL;
        rq->current = target;
        slice_hand_off(&rq->slice, now, granularity_cycles);
        return target;
    }
    struct rq_link *l = rq_pop(&rq->queue);
    if (!l)
        return NULL;
    struct sched_entity *v = link_entity(l);
    start_slice(rq, v, now);
    return v;
}

static void lock_pair(struct runqueue *a, struct runqueue *b)
{
    unsigned order[2];
    unsigned n = balance_lock_order(rq_cpu(a), rq_cpu(b), order);
    for (unsigned i = 0; i < n; i++)
        spin_lock(&runqueues[order[i]].lock);
}

static void unlock_pair(struct runqueue *a, struct runqueue *b)
{
    spin_unlock(&a->lock);
    if (a != b)
        spin_unlock(&b->lock);
}

/* May v, queued on another CPU, run on cpu now? Its queue's lock held. */
static bool can_take(struct sched_entity *v, unsigned cpu)
{
    int tied = ops->unload_to_move ? v->loaded_cpu : -1;
    return balance_may_run_on(v->pin, tied, __atomic_load_n(&v->on_cpu, __ATOMIC_ACQUIRE), cpu);
}

/*
 * Move v out of from's queue to CPU to (both queues locked; the caller puts
 * it in to's queue or runs it). Its wake-ups and kicks go to the new CPU from
 * now on; its timer follows when it next runs (vcpu_run re-arms it on
 * v->cpu; one that fires on the old CPU meanwhile only makes an interrupt
 * pending and re-arms on the new one).
 */
static void move_locked(struct sched_entity *v, struct runqueue *from, unsigned to)
{
    rq_remove(&from->queue, &v->rq_link);
    if (rq_empty(&from->queue))
        from->slice.wakeup_pending = false;
    __atomic_sub_fetch(&from->placed, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&runqueues[to].placed, 1, __ATOMIC_RELAXED);
    sched_trace(v, SCHED_TRACE_MIGRATE, v->cpu, to);
    __atomic_store_n(&v->cpu, to, __ATOMIC_RELAXED);
    v->migrations++;
}

/*
 * This CPU has nothing to run: take a vCPU waiting in another CPU's queue,
 * the busiest first, the first in queue order that may run here.
 */
static struct sched_entity *pull(struct runqueue *rq, uint64_t now)
{
    unsigned self = rq_cpu(rq), waiting[MAX_CPUS], order[MAX_CPUS];
    for (unsigned c = 0; c < cpu_count; c++)
        waiting[c] = __atomic_load_n(&runqueues[c].queue.count, __ATOMIC_ACQUIRE);
    unsigned n = balance_pull_order(waiting, cpu_count, self, order);
    for (unsigned i = 0; i < n; i++) {
        struct runqueue *src = &runqueues[order[i]];
        struct sched_entity *taken = NULL;
        lock_pair(rq, src);
        for (struct rq_link *l = src->queue.head.next; l != &src->queue.head; l = l->next) {
            struct sched_entity *v = link_entity(l);
            if (can_take(v, self)) {
                move_locked(v, src, self);
                start_slice(rq, v, now);
                taken = v;
                break;
            }
        }
        unlock_pair(rq, src);
        if (taken)
            return taken;
    }
    return NULL;
}

/* A directed yield in progress on this CPU: the spinner's group. */
struct yield_ctx {
    struct sched_group *group;
    struct runqueue *rq;
};

static void yield_look(void *p, unsigned index, struct yield_candidate *c)
{
    struct yield_ctx *ctx = p;
    struct sched_entity *t = ctx->group->members[index];
    enum sched_state st = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
    *c = (struct yield_candidate){
        .on_cpu = st == SCHED_RUNNING || st == SCHED_POLLING,
        /* Not runnable at all: halted, parked, stopped. */
        .halted = st != SCHED_RUNNING && st != SCHED_POLLING && st != SCHED_RUNNABLE,
        .irq_pending = ops->event_pending(t),
        .preempted_in_user = t->preempted_in_user,
        .pinned_elsewhere = t->pin >= 0 && (unsigned)t->pin != rq_cpu(ctx->rq),
        .spin = &t->spin_loop,
    };
}

/* Take the target out of whatever queue holds it: it runs next here (pick_next). */
static enum yield_take yield_take(void *p, unsigned index)
{
    struct yield_ctx *ctx = p;
    struct sched_entity *t = ctx->group->members[index];
    unsigned here = rq_cpu(ctx->rq), from = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
    struct runqueue *src = &runqueues[from];
    lock_pair(ctx->rq, src);
    /* Still where it was seen and waiting in its queue, and free to come. */
    bool waiting = t->cpu == from && t->rq_link.queued;
    bool ok = waiting && can_take(t, here);
    if (ok) {
        if (from != here) {
            move_locked(t, src, here);
        } else {
            rq_remove(&src->queue, &t->rq_link);
            if (rq_empty(&src->queue))
                src->slice.wakeup_pending = false;
        }
        ctx->rq->handoff = t;
    }
    unlock_pair(ctx->rq, src);
    return ok ? YIELD_TAKEN : waiting ? YIELD_BUSY : YIELD_GONE;
}

enum sched_spin_decision sched_on_spin(struct sched_entity *e, bool in_kernel,
                                       struct sched_spin_result *r)
{
    struct sched_group *g = e->group;
    struct runqueue *rq = this_rq();
    yield_spin_begin(&e->spin_loop);
    struct yield_ctx ctx = {g, rq};
    struct yield_source src = {yield_look, yield_take, &ctx};
    unsigned last = __atomic_load_n(&g->last_boosted, __ATOMIC_RELAXED);
    r->pivot = (enum yield_pivot)g->pivot;
    yield_scan(&src, g->count, e->index, r->pivot, in_kernel, &last, &r->out);
    if (r->out.target >= 0) {
        __atomic_store_n(&g->last_boosted, last, __ATOMIC_RELAXED);
        return SCHED_SPIN_BOOSTED;
    }
    if (!queue_empty(rq))
        return SCHED_SPIN_SLICE;
    yield_spin_end(&e->spin_loop); /* it keeps running: no longer a preempted spinner */
    return SCHED_SPIN_KEPT_CPU;
}

enum yield_to_result sched_yield_to(struct sched_entity *e, struct sched_entity *target)
{
    struct yield_ctx ctx = {e->group, this_rq()};
    struct yield_candidate c;
    yield_look(&ctx, target->index, &c);
    enum yield_to_result r = yield_to_check(&c, target == e);
    if (r != YIELD_TO_TAKEN)
        return r;
    return yield_take(&ctx, target->index) == YIELD_TAKEN ? YIELD_TO_TAKEN : YIELD_TO_MISSED;
}

static uint64_t run_cycles(const struct sched_entity *v, uint64_t now)
{
    uint64_t c = v->cycles[SCHED_RUNNING];
    if (__atomic_load_n(&v->state, __ATOMIC_RELAXED) == SCHED_RUNNING && now > v->state_since)
        c += now - v->state_since;
    return c;
}

static unsigned load(const struct runqueue *rq)
{
    return __atomic_load_n(&rq->queue.count, __ATOMIC_ACQUIRE) +
           (__atomic_load_n(&rq->current, __ATOMIC_ACQUIRE) != NULL);
}

#define BALANCE_SCAN_MAX 64 /* waiting vCPUs a periodic balance considers on the busiest CPU */

/* Move one waiting vCPU from the busiest CPU to the least loaded one (sched/balance.h). */
static void balance_locked(struct runqueue *src, struct runqueue *dst, uint64_t now)
{
    unsigned to = rq_cpu(dst);
    uint64_t dst_least = UINT64_MAX;
    if (dst->current)
        dst_least = run_cycles(dst->current, now);
    for (struct rq_link *l = dst->queue.head.next; l != &dst->queue.head; l = l->next) {
        uint64_t c = run_cycles(link_entity(l), now);
        dst_least = c < dst_least ? c : dst_least;
    }
    struct balance_vcpu waiting[BALANCE_SCAN_MAX];
    struct sched_entity *who[BALANCE_SCAN_MAX];
    unsigned n = 0;
    for (struct rq_link *l = src->queue.head.next; l != &src->queue.head && n < BALANCE_SCAN_MAX;
         l = l->next) {
        struct sched_entity *v = link_entity(l);
        waiting[n] =
            (struct balance_vcpu){run_cycles(v, now), can_take(v, to) && !v->balance_moved};
        who[n++] = v;
    }
    struct balance_move m = {
        .src_load = src->queue.count + (src->current != NULL),
        .dst_load = dst->queue.count + (dst->current != NULL),
        .waiting = waiting,
        .nwaiting = n,
        .src_running = src->current != NULL,
        .src_running_run = src->current ? run_cycles(src->current, now) : 0,
        .dst_least_run = dst_least,
    };
    int pick = balance_choose(&m);
    if (pick < 0)
        return;
    struct sched_entity *v = who[pick];
    move_locked(v, src, to);
    v->balance_moved = true;
    rq_push_tail(&dst->queue, &v->rq_link);
}

static void periodic_balance(uint64_t now)
{
    uint64_t due = __atomic_load_n(&next_balance, __ATOMIC_RELAXED);
    if (now < due || !__atomic_compare_exchange_n(&next_balance, &due, now + balance_cycles, false,
                                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return;
    struct balance_cpu cpus[MAX_CPUS];
    for (unsigned c = 0; c < cpu_count; c++)
        cpus[c] = (struct balance_cpu){load(&runqueues[c]), runqueues[c].ready};
    unsigned src, dst;
    if (!balance_pick_cpus(cpus, cpu_count, balance_start++, &src, &dst))
        return;
    struct runqueue *s = &runqueues[src], *d = &runqueues[dst];
    lock_pair(s, d);
    unsigned queued = d->queue.count;
    balance_locked(s, d, now);
    /* Its current vCPU may be timing no slice, or it idles: make it look at its queue. */
    bool kick = d->queue.count != queued;
    unlock_pair(s, d);
    if (kick)
        sched_kick(dst);
}

/* Console output is drained while a CPU has nothing queued (drivers/console.h). */
static bool nothing_queued(void *ctx)
{
    return queue_empty(ctx);
}

/*
 * The C-state model (idle_exit_latency_us): the CPU was woken from its HLT
 * and needs this long before it runs anything. Interrupts stay off: a
 * waking CPU takes them once it is back.
 */
static void leave_c_state(struct runqueue *rq)
{
    if (!idle_exit_cycles)
        return;
    uint64_t start = rdtsc(), end;
    while ((end = rdtsc()) - start < idle_exit_cycles)
        __asm__ volatile("pause" ::: "memory");
    rq->idle_exit_cycles += end - start;
    rq->idle_exit_from = start;
    rq->idle_exit_to = end;
}

uint64_t sched_idle_exit_within(uint64_t from, uint64_t to)
{
    const struct runqueue *rq = &runqueues[this_cpu()->cpu];
    uint64_t start = rq->idle_exit_from > from ? rq->idle_exit_from : from;
    uint64_t end = rq->idle_exit_to < to ? rq->idle_exit_to : to;
    return end > start ? end - start : 0;
}

static void idle(struct runqueue *rq)
{
    /* rq->idle was set under the queue lock: a waker either saw it or we see its vCPU. */
    host_timer_program(0);
    uint64_t t0 = rdtsc();
    if (console_pending() && !console_draining()) {
        /*
         * Console output waits: feed the UART as it takes it instead of
         * halting, with interrupts let in between (timers, kicks), until a
         * vCPU waits or all is sent; the scheduler loop then looks again.
         * One CPU at a time: the others halt (a drainer that must stop
         * kicks one), since an emulator pays for every spinning CPU.
         */
        while (console_pending() && queue_empty(rq) && !console_draining()) {
            watchdog_beat();
            host_timer_program(0);
            console_drain_while(nothing_queued, rq);
            __asm__ volatile("sti; pause; cli" ::: "memory");
        }
    } else {
        cpu_idle_wait();
        irq_disable();
        leave_c_state(rq);
    }
    irq_disable();
    rq->idle_cycles += rdtsc() - t0;
    spin_lock(&rq->lock);
    rq->idle = false;
    __atomic_and_fetch(&idle_cpus, ~(1ull << rq_cpu(rq)), __ATOMIC_RELEASE);
    spin_unlock(&rq->lock);
}

static void run_one(struct runqueue *rq, struct sched_entity *v, uint64_t now)
{
    spin_lock(&v->lock);
    bool runnable = v->state == SCHED_RUNNABLE;
    if (runnable) {
        sched_set_state(v, SCHED_RUNNING, now);
        v->on_cpu = true;
    }
    spin_unlock(&v->lock);
    if (runnable) {
        v->loaded_cpu = (int)rq_cpu(rq);
        v->balance_moved = false;
        enum sched_run_result r = ops->run(v);
        uint64_t end = rdtsc();
        rq->busy_cycles += end - now;
        /*
         * Unloaded before it can be seen off this CPU (on_cpu below): it may
         * next run elsewhere, or its owner be freed. A pinned entity keeps
         * its context loaded: it comes back here.
         */
        if (r == SCHED_RUN_STOPPED || r == SCHED_RUN_PARKED ||
            (v->pin < 0 && ops->unload_to_move)) {
            ops->unload(v);
            v->loaded_cpu = -1;
        }
        if (r == SCHED_RUN_STOPPED) {
            ops->retire(v);
        } else {
            bool retire_now = false;
            spin_lock(&v->lock);
            __atomic_store_n(&v->on_cpu, false, __ATOMIC_RELEASE);
            if (r == SCHED_RUN_PREEMPTED) {
                sched_set_state(v, SCHED_RUNNABLE, end);
                spin_lock(&rq->lock);
                rq_push_tail(&rq->queue, &v->rq_link);
                spin_unlock(&rq->lock);
            } else if (v->state == SCHED_PARKED) {
                /* What happened while it was leaving: its owner stops it, or wakes it. */
                switch (ops->parked(v)) {
                case SCHED_PARKED_RETIRE:
                    retire_now = true;
                    break;
                case SCHED_PARKED_WAKE:
                    sched_set_state(v, SCHED_RUNNABLE, end);
                    sched_wake(v);
                    break;
                case SCHED_PARKED_STAY:
                    break;
                }
            }
            spin_unlock(&v->lock);
            if (retire_now)
                ops->retire(v);
        }
    }
    spin_lock(&rq->lock);
    rq->current = NULL;
    spin_unlock(&rq->lock);
}

/*
 * Items of deferred work one pass of the scheduler loop runs at most: each
 * item bounds its own work (a device's budget, docs/robustness.md), so a
 * pass is bounded, and the vCPUs waiting get the CPU in between.
 */
#define DEFERRED_PASS_ITEMS 4

void sched_defer(struct deferred_work *w)
{
    unsigned self = this_cpu()->cpu;
    for (;;) {
        int cpu = __atomic_load_n(&w->cpu, __ATOMIC_ACQUIRE);
        unsigned target = cpu >= 0 ? (unsigned)cpu : self;
        struct runqueue *rq = &runqueues[target];
        uint64_t flags = spin_lock_irqsave(&rq->lock);
        if (w->cpu != cpu) {
            spin_unlock_irqrestore(&rq->lock, flags); /* it moved meanwhile: look again */
            continue;
        }
        bool added = deferred_queue_locked(&rq->deferred, w, target);
        spin_unlock_irqrestore(&rq->lock, flags);
        /* Another CPU idles, or runs a vCPU that must learn that work waits (sched_should_yield).
         */
        if (added && target != self)
            sched_kick(target);
        return;
    }
}

void sched_defer_cancel(struct deferred_work *w)
{
    for (;;) {
        int cpu = __atomic_load_n(&w->cpu, __ATOMIC_ACQUIRE);
        if (cpu < 0)
            return;
        struct runqueue *rq = &runqueues[cpu];
        uint64_t flags = spin_lock_irqsave(&rq->lock);
        bool same = w->cpu == cpu;
        bool idle = same && deferred_cancel_locked(&rq->deferred, w);
        spin_unlock_irqrestore(&rq->lock, flags);
        if (idle)
            return;
        /* Running on that CPU: it never comes back, and its owner may go once it is over. */
        while (same && __atomic_load_n(&w->cpu, __ATOMIC_ACQUIRE) == cpu)
            cpu_relax();
    }
}

/* One pass: the items queued now, up to DEFERRED_PASS_ITEMS; interrupts off, no lock held. */
static void run_deferred(struct runqueue *rq)
{
    if (!deferred_waiting(rq))
        return;
    uint64_t start = rdtsc();
    spin_lock(&rq->lock);
    unsigned n =
        rq->deferred.count < DEFERRED_PASS_ITEMS ? rq->deferred.count : DEFERRED_PASS_ITEMS;
    spin_unlock(&rq->lock);
    for (unsigned i = 0; i < n; i++) {
        spin_lock(&rq->lock);
        struct deferred_work *w = deferred_take(&rq->deferred);
        spin_unlock(&rq->lock);
        if (!w)
            break;
        bool more = w->fn(w);
        spin_lock(&rq->lock);
        deferred_done(&rq->deferred, w, more);
        spin_unlock(&rq->lock);
    }
    rq->deferred_cycles += rdtsc() - start;
}

void sched_run(bool (*done)(void))
{
    struct runqueue *rq = this_rq();
    irq_disable();
    for (;;) {
        watchdog_beat();
        run_deferred(rq); /* first: its time is not the vCPU's that runs next (busy_cycles) */
        uint64_t now = rdtsc();
        timers_run_expired(now);
        if (balance_params.enabled)
            periodic_balance(now);
        stats_poll();
        console_drain_while(nothing_queued, rq);
        spin_lock(&rq->lock);
        struct sched_entity *v = pick_next(rq, now);
        spin_unlock(&rq->lock);
        if (!v && balance_params.enabled)
            v = pull(rq, now);
        if (!v) {
            spin_lock(&rq->lock);
            /* Deferred work left over keeps the CPU awake: the next pass runs it. */
            bool queued = !rq_empty(&rq->queue) || rq->deferred.count;
            if (!queued && done && done()) {
                spin_unlock(&rq->lock);
                return;
            }
            if (!queued) {
                rq->idle = true;
                __atomic_or_fetch(&idle_cpus, 1ull << rq_cpu(rq), __ATOMIC_RELEASE);
            }
            spin_unlock(&rq->lock);
            if (!queued)
                idle(rq);
            continue;
        }
        run_one(rq, v, now);
    }
}

void sched_cpu_times(unsigned cpu, struct sched_cpu_times *out)
{
    const struct runqueue *rq = &runqueues[cpu];
    out->busy = __atomic_load_n(&rq->busy_cycles, __ATOMIC_RELAXED);
    out->idle = __atomic_load_n(&rq->idle_cycles, __ATOMIC_RELAXED);
    out->poll = __atomic_load_n(&rq->poll_cycles, __ATOMIC_RELAXED);
    out->idle_exit = __atomic_load_n(&rq->idle_exit_cycles, __ATOMIC_RELAXED);
    out->deferred = __atomic_load_n(&rq->deferred_cycles, __ATOMIC_RELAXED);
    out->placed = __atomic_load_n(&rq->placed, __ATOMIC_RELAXED);
    out->cpu = cpu;
}

static void read_cpu_times(unsigned cpu, void *out)
{
    sched_cpu_times(cpu, out);
}

static const struct stats_cpus cpu_stats = {&sched_cpu_stats_table, sizeof(struct sched_cpu_times),
                                            read_cpu_times};
static struct timer stats_timer;
static bool (*stats_done)(void);

static void stats_timer_fired(struct timer *t, uint64_t now)
{
    stats_round_due();
    if (!stats_done())
        timer_arm(t, this_cpu()->cpu, now + (uint64_t)stats_interval_ms * tsc_khz);
}

void sched_stats_start(bool (*done)(void))
{
    stats_register_cpus(&cpu_stats);
    if (!stats_interval_ms)
        return;
    stats_done = done;
    timer_init(&stats_timer, stats_timer_fired);
    timer_arm(&stats_timer, this_cpu()->cpu, rdtsc() + (uint64_t)stats_interval_ms * tsc_khz);
}

void sched_dump_cpu(unsigned cpu)
{
    struct runqueue *rq = &runqueues[cpu];
    struct sched_entity *cur = rq->current;
    char name[48] = "-";
    if (cur)
        ops->name(cur, name, sizeof(name));
    kprintf("  runqueue: %u queued, running %s, idle %d, resched %d, wakeup_pending %d\n",
            rq->queue.count, name, rq->idle, rq->slice.resched, rq->slice.wakeup_pending);
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/watchdog.h"

#include "arch/x86/cpu.h"
#include "arch/x86/ksyms.h"
#include "arch/x86/l0_steal.h"
#include "arch/x86/panic.h"
#include "arch/x86/trap.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "sched/lockup.h"
#include "sched/sched.h"
#include "sched/timer.h"

#define TICKS_PER_TIMEOUT 4

static void (*dump_more)(void);

struct watchdog_params watchdog_params = {.ms = 2000};

uint64_t watchdog_beats[MAX_CPUS];
static struct timer ticks[MAX_CPUS];
static struct lockup_watch watches[MAX_CPUS]; /* by checking CPU */
static struct lockup_limits limits;
static uint64_t period;
static int fired; /* one lockup is reported, then the machine stops */

static void tick(struct timer *t, uint64_t now)
{
    unsigned me = (unsigned)(t - ticks);
    timer_arm(t, me, now + period);
    if (cpu_count < 2 || __atomic_load_n(&fired, __ATOMIC_RELAXED))
        return;
    unsigned target = (me + 1) % cpu_count;
    uint64_t target_beats = __atomic_load_n(&watchdog_beats[target], __ATOMIC_RELAXED);
    uint64_t own_beats = __atomic_load_n(&watchdog_beats[me], __ATOMIC_RELAXED);
    uint64_t steal_ns = 0;
    bool preempted = false;
    bool steal = l0_steal_read(target, &steal_ns, &preempted);
    if (!lockup_check(&watches[me], &limits, now, target_beats, own_beats, ns_to_tsc(steal_ns),
                      preempted))
        return;
    int expected = 0;
    if (!__atomic_compare_exchange_n(&fired, &expected, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
        return;
    uint64_t stale_ms = tsc_to_ns(watches[me].stale) / 1000000;
    kprintf("pollux: cpu %u: no heartbeat from cpu %u for %lu ms%s: sending it an NMI\n", me,
            target, stale_ms, steal ? " (L0's steal time taken off)" : "");
    panic_lockup_request(target, me, stale_ms);
}

static unsigned dump_turn; /* the CPU whose part of a state dump comes next */

/*
 * An NMI from outside (QEMU's inject-nmi, which tools/run.py sends to a run
 * that timed out) reaches every CPU: each prints its state, in CPU order,
 * the last one the VMs as well. A CPU that does not answer is passed over.
 */
static void state_dump(struct trap_frame *f)
{
    unsigned me = this_cpu()->cpu;
    for (uint64_t until = rdtsc() + 200 * tsc_khz;
         __atomic_load_n(&dump_turn, __ATOMIC_ACQUIRE) < me && rdtsc() < until;)
        cpu_relax();
    console_nmi_takeover();
    uint64_t off;
    const char *sym = ksyms_lookup(f->rip, &off);
    unsigned checker = (me + cpu_count - 1) % cpu_count;
    kprintf("pollux: state dump: cpu %u at rip 0x%lx <%s+0x%lx>, rflags 0x%lx: %lu heartbeats, "
            "silent for %lu ms as cpu %u last counted\n",
            me, f->rip, sym ? sym : "?", sym ? off : 0, f->rflags,
            __atomic_load_n(&watchdog_beats[me], __ATOMIC_RELAXED),
            tsc_to_ns(watches[checker].stale) / 1000000, checker);
    sched_dump_cpu(me);
    if (me + 1 == cpu_count) {
        if (dump_more)
            dump_more();
        __atomic_store_n(&dump_turn, 0, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(&dump_turn, me + 1, __ATOMIC_RELEASE);
    }
}

void watchdog_set_dump(void (*dump)(void))
{
    dump_more = dump;
}

static void beat_for_console(void)
{
    watchdog_beat();
}

void watchdog_start(void)
{
    irq_register(2, state_dump);
    if (!watchdog_params.ms)
        return;
    console_set_heartbeat(beat_for_console);
    uint64_t timeout = watchdog_params.ms * tsc_khz;
    period = timeout / TICKS_PER_TIMEOUT;
    limits = (struct lockup_limits){.timeout = timeout, .max_interval = 2 * period};
    uint64_t now = rdtsc();
    for (unsigned cpu = 0; cpu < cpu_count; cpu++) {
        timer_init(&ticks[cpu], tick);
        timer_arm(&ticks[cpu], cpu, now + period);
    }
}

static struct timer lockup_test_timer;

/* Named in the backtrace the lockup test expects. */
static __attribute__((noinline, noreturn)) void lockup_test_spin(struct timer *t, uint64_t now)
{
    (void)t;
    (void)now;
    irq_disable();
    for (;;)
        cpu_relax();
}

void watchdog_test_lockup(unsigned cpu)
{
    kprintf("pollux: fault_test=4: cpu %u spins with interrupts off from now on\n", cpu);
    timer_init(&lockup_test_timer, lockup_test_spin);
    timer_arm(&lockup_test_timer, cpu, rdtsc());
}

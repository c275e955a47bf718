/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lock contention: every vCPU (vcpus=) takes one shared ticket spinlock over
 * and over. A waiter spins on PAUSE with interrupts enabled; a holder does a
 * short critical section of fixed work, then fixed work outside the lock.
 * After CYCLES guest TSC cycles from a common start (argument, default 50 M)
 * it prints @bench {"guest":"spinlock","op":"acquisitions","value":A,
 * "vcpus":N} and exits 0. It checks mutual exclusion itself: each holder
 * marks the lock as its own and finds its mark unchanged at the end, and a
 * counter incremented without atomics inside the lock must equal the
 * acquisitions; otherwise it says so and exits 1.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define CYCLES_DEFAULT 50000000u
#define START_DELAY_US 1000u
#define INSIDE_ROUNDS  20  /* critical section: about 100 integer operations */
#define OUTSIDE_ROUNDS 100 /* work between acquisitions: about 500 */
#define EXIT_VIOLATED  1

struct ticket_lock {
    uint32_t next;    /* the ticket the next arrival takes */
    uint32_t serving; /* the ticket that holds the lock */
};

static struct ticket_lock lock;
static uint32_t holder;        /* index + 1 of the vCPU inside, 0 when free */
static uint32_t plain_counter; /* incremented inside the lock, non-atomically */
static uint32_t violations;
static uint32_t acquisitions[MAX_CPUS];
static uint64_t start_tsc, end_tsc; /* valid once started is set */
static uint32_t started, finished;

static void ticket_lock(struct ticket_lock *l)
{
    uint32_t ticket = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
    __asm__ volatile("sti" ::: "memory");
    while (__atomic_load_n(&l->serving, __ATOMIC_ACQUIRE) != ticket)
        cpu_relax();
    __asm__ volatile("cli" ::: "memory");
}

static void ticket_unlock(struct ticket_lock *l)
{
    __atomic_store_n(&l->serving, l->serving + 1, __ATOMIC_RELEASE);
}

static uint32_t work(uint32_t x, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        __asm__ volatile("" : "+r"(x)); /* every round is computed */
    }
    return x;
}

static void contend(uint32_t me)
{
    while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        cpu_relax();
    while (rdtsc() < start_tsc)
        cpu_relax();
    uint32_t x = me + 1, n = 0;
    while (rdtsc() < end_tsc) {
        ticket_lock(&lock);
        if (__atomic_exchange_n(&holder, me + 1, __ATOMIC_RELAXED) != 0)
            __atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
        uint32_t seen = *(volatile uint32_t *)&plain_counter;
        x = work(x, INSIDE_ROUNDS);
        *(volatile uint32_t *)&plain_counter = seen + 1;
        if (__atomic_exchange_n(&holder, 0, __ATOMIC_RELAXED) != me + 1)
            __atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
        ticket_unlock(&lock);
        n++;
        x = work(x, OUTSIDE_ROUNDS);
    }
    __atomic_store_n(&acquisitions[me], n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint64_t cycles = CYCLES_DEFAULT;
    parse_uint64(cmdline_args(info), &cycles);
    uint32_t n = smp_start(false, contend);
    if (n == 0)
        return 1;
    /*
     * The mark's exit prints a round of the VM's statistics before this vCPU
     * goes on (2 to 100 ms under QEMU TCG): the contended phase is timed from
     * after it, or the round eats the phase and no vCPU gets to contend.
     */
    trace_mark(true);
    start_tsc = rdtsc() + us_to_tsc(START_DELAY_US);
    end_tsc = start_tsc + cycles;
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    contend(0);
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < n)
        cpu_relax();
    trace_mark(false);
    uint32_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += __atomic_load_n(&acquisitions[i], __ATOMIC_RELAXED);
    printf("@bench {\"guest\":\"spinlock\",\"op\":\"acquisitions\",\"value\":%u,\"vcpus\":%u}\n",
           total, n);
    if (violations || plain_counter != total) {
        printf("mutual exclusion violated: %u overlaps, counter %u after %u acquisitions\n",
               violations, plain_counter, total);
        return EXIT_VIOLATED;
    }
    return 0;
}

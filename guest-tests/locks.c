/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lock contention shaped like a kernel's: many locks, of two kinds, taken
 * for short and long critical sections, rather than spinlock's one ticket
 * lock. Every vCPU (vcpus=) loops: its own xorshift PRNG (seeded with seed
 * plus its index, so a seed repeats its choices and another seed
 * interleaves differently) picks a lock and whether the critical section
 * is long; it takes the lock, works inside, releases it, works outside.
 * - A test-and-set lock is unfair, as Linux's virt_spin_lock(): load the
 *   word, spin with PAUSE while it is taken, then cmpxchg it.
 * - An MCS lock is a FIFO queue, as the slow path of Linux's qspinlock: a
 *   vCPU swaps its own node in as the tail, then spins with PAUSE on its
 *   own node until the holder before it hands the lock over.
 * Waiters spin with interrupts enabled; holders run with them disabled.
 * A short critical section is about 100 integer operations, a long one
 * about 5000, the work between acquisitions about 500.
 *
 * Arguments, in any order after the optional first (words, `+` in args=):
 *   CYCLES            the budget in guest TSC cycles from a common start
 *                     (default 50000000)
 *   locks=N           how many locks, 1..64 (default 16)
 *   tas=P             percent of them that are test-and-set, 0..100, the
 *                     others MCS (default 50); locks 0..T-1 are the T =
 *                     round(N * P / 100) test-and-set ones
 *   long=M            per mille of acquisitions with a long critical
 *                     section, 0..1000 (default 20)
 *   seed=S            the PRNG seed, 0..4294967295 (default 1)
 * e.g. args=20000000+locks=8+tas=25+long=100+seed=7. A word it does not
 * know, or a value out of range, is reported and the guest exits 2.
 *
 * At the end it prints two lines (docs/console.md):
 *   @bench {"guest":"locks","op":"acquisitions","value":A,"vcpus":N,
 *     "tas":T,"mcs":M,"long":L,"seed":S,"max_waiters":W,"locks":K,
 *     "tas_locks":KT}
 *   @bench {"guest":"locks","op":"contention","contended":C,
 *     "tas_max_wait":X,"mcs_max_wait":Y,"vcpu_min":MIN,"vcpu_max":MAX,
 *     "long_permille":P}
 * value = tas + mcs; long: the acquisitions with a long critical section;
 * max_waiters: the most vCPUs counted waiting for one lock at once (a vCPU
 * counts from its first failed attempt until it runs again holding the
 * lock, so an MCS waiter handed the lock while descheduled still counts);
 * contended: acquisitions that had to wait; tas_max_wait, mcs_max_wait: the
 * longest such wait per kind in guest TSC cycles; vcpu_min, vcpu_max: the
 * fewest and most acquisitions of one vCPU. Then it exits 0.
 *
 * It checks mutual exclusion itself, per lock: each holder marks the lock
 * as its own and finds its mark unchanged at the end, and a counter
 * incremented without atomics inside the lock must equal that lock's
 * acquisitions; otherwise it says so and exits 1.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#include <stddef.h>

#define CYCLES_DEFAULT 50000000u
#define LOCKS_DEFAULT  16u
#define LOCKS_MAX      64u
#define TAS_DEFAULT    50u /* percent */
#define LONG_DEFAULT   20u /* per mille */
#define SEED_DEFAULT   1u
#define START_DELAY_US 1000u
#define SHORT_ROUNDS   20   /* a short critical section: about 100 integer operations */
#define LONG_ROUNDS    1000 /* a long one: about 5000 */
#define OUTSIDE_ROUNDS 100  /* work between acquisitions: about 500 */
#define CACHE_LINE     64
#define EXIT_BAD_ARGS  2
#define EXIT_VIOLATED  1

enum lock_kind { KIND_TAS, KIND_MCS, KINDS };

/* One per vCPU: a vCPU holds or waits for at most one lock at a time. */
struct mcs_node {
    struct mcs_node *next; /* the waiter queued behind this one */
    uint32_t granted;      /* set by the previous holder: the lock is ours */
} __attribute__((aligned(CACHE_LINE)));

/*
 * The word waiters spin on (tas or tail) has a cache line of its own; the
 * checks and the waiter count, written by the holder and arriving waiters,
 * share the second.
 */
struct lock {
    uint32_t tas;          /* KIND_TAS: 1 while held */
    struct mcs_node *tail; /* KIND_MCS: the last queued vCPU's node, NULL when free */
    enum lock_kind kind;
    uint32_t owner __attribute__((aligned(CACHE_LINE))); /* index + 1 of the holder, 0 if none */
    uint32_t plain_counter; /* incremented inside the lock, non-atomically */
    uint32_t waiters;       /* vCPUs waiting for it now */
} __attribute__((aligned(CACHE_LINE)));

/* What one vCPU counted; read by vCPU 0 once every vCPU has finished. */
struct vcpu_counts {
    uint32_t per_lock[LOCKS_MAX];
    uint32_t total, long_sections, contended, max_waiters;
    uint64_t max_wait[KINDS]; /* TSC cycles from the first failed attempt to holding it */
} __attribute__((aligned(CACHE_LINE)));

struct config {
    uint64_t cycles;
    uint32_t locks, tas_percent, long_permille, seed;
};

static struct config cfg = {CYCLES_DEFAULT, LOCKS_DEFAULT, TAS_DEFAULT, LONG_DEFAULT, SEED_DEFAULT};
static struct lock locks[LOCKS_MAX];
static struct mcs_node nodes[MAX_CPUS];
static struct vcpu_counts counts[MAX_CPUS];
static uint32_t violations;
static uint64_t start_tsc, end_tsc; /* valid once started is set */
static uint32_t started, finished;

/* xorshift32: the work, and each vCPU's choices (a state other than 0). */
static uint32_t xorshift(uint32_t x)
{
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

static uint32_t work(uint32_t x, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        x = xorshift(x);
        __asm__ volatile("" : "+r"(x)); /* every round is computed */
    }
    return x;
}

/* murmur3's finalizer: nearby seeds give unrelated states; only 0 maps to 0. */
static uint32_t prng_state(uint32_t seed, uint32_t index)
{
    uint32_t h = seed + index;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h ? h : 1;
}

static inline void irq_enable(void)
{
    __asm__ volatile("sti" ::: "memory");
}

static inline void irq_disable(void)
{
    __asm__ volatile("cli" ::: "memory");
}

/* A waiter's bookkeeping: how many wait with it, and when it started. */
struct wait {
    bool contended;
    uint64_t since;
};

static void wait_begin(struct lock *l, struct wait *w, struct vcpu_counts *c)
{
    uint32_t waiting = __atomic_add_fetch(&l->waiters, 1, __ATOMIC_RELAXED);
    c->max_waiters = waiting > c->max_waiters ? waiting : c->max_waiters;
    w->contended = true;
    w->since = rdtsc();
}

static bool tas_try(struct lock *l)
{
    uint32_t free = 0;
    return __atomic_load_n(&l->tas, __ATOMIC_RELAXED) == 0 &&
           __atomic_compare_exchange_n(&l->tas, &free, 1, false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

/* Called with interrupts disabled; returns with them disabled, holding l. */
static void tas_lock(struct lock *l, struct wait *w, struct vcpu_counts *c)
{
    if (tas_try(l))
        return;
    wait_begin(l, w, c);
    do {
        irq_enable();
        do
            cpu_relax();
        while (__atomic_load_n(&l->tas, __ATOMIC_RELAXED) != 0);
        irq_disable();
    } while (!tas_try(l));
}

static void tas_unlock(struct lock *l)
{
    __atomic_store_n(&l->tas, 0, __ATOMIC_RELEASE);
}

static void mcs_lock(struct lock *l, struct mcs_node *me, struct wait *w, struct vcpu_counts *c)
{
    me->next = NULL;
    __atomic_store_n(&me->granted, 0, __ATOMIC_RELAXED);
    struct mcs_node *prev = __atomic_exchange_n(&l->tail, me, __ATOMIC_ACQ_REL);
    if (prev == NULL)
        return;
    wait_begin(l, w, c);
    __atomic_store_n(&prev->next, me, __ATOMIC_RELEASE);
    irq_enable();
    while (!__atomic_load_n(&me->granted, __ATOMIC_ACQUIRE))
        cpu_relax();
    irq_disable();
}

static void mcs_unlock(struct lock *l, struct mcs_node *me)
{
    struct mcs_node *next = __atomic_load_n(&me->next, __ATOMIC_ACQUIRE);
    if (next == NULL) {
        struct mcs_node *expected = me;
        if (__atomic_compare_exchange_n(&l->tail, &expected, NULL, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return;
        /* A waiter swapped itself in as the tail and is about to link behind us. */
        while ((next = __atomic_load_n(&me->next, __ATOMIC_ACQUIRE)) == NULL)
            cpu_relax();
    }
    __atomic_store_n(&next->granted, 1, __ATOMIC_RELEASE);
}

/* The critical section: the mutual-exclusion checks around the work. */
static uint32_t hold(struct lock *l, uint32_t me, uint32_t x, int rounds)
{
    if (__atomic_exchange_n(&l->owner, me + 1, __ATOMIC_RELAXED) != 0)
        __atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
    uint32_t seen = *(volatile uint32_t *)&l->plain_counter;
    x = work(x, rounds);
    *(volatile uint32_t *)&l->plain_counter = seen + 1;
    if (__atomic_exchange_n(&l->owner, 0, __ATOMIC_RELAXED) != me + 1)
        __atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
    return x;
}

static void contend(uint32_t me)
{
    struct vcpu_counts *c = &counts[me];
    struct mcs_node *node = &nodes[me];
    uint32_t rng = prng_state(cfg.seed, me), x = me + 1;
    while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        cpu_relax();
    while (rdtsc() < start_tsc)
        cpu_relax();
    while (rdtsc() < end_tsc) {
        rng = xorshift(rng);
        uint32_t which = rng % cfg.locks;
        rng = xorshift(rng);
        bool long_section = rng % 1000 < cfg.long_permille;
        struct lock *l = &locks[which];
        struct wait w = {false, 0};
        if (l->kind == KIND_TAS)
            tas_lock(l, &w, c);
        else
            mcs_lock(l, node, &w, c);
        if (w.contended) {
            __atomic_sub_fetch(&l->waiters, 1, __ATOMIC_RELAXED);
            uint64_t waited = rdtsc() - w.since;
            c->max_wait[l->kind] = waited > c->max_wait[l->kind] ? waited : c->max_wait[l->kind];
            c->contended++;
        }
        x = hold(l, me, x, long_section ? LONG_ROUNDS : SHORT_ROUNDS);
        if (l->kind == KIND_TAS)
            tas_unlock(l);
        else
            mcs_unlock(l, node);
        c->per_lock[which]++;
        c->long_sections += long_section;
        c->total++;
        x = work(x, OUTSIDE_ROUNDS);
    }
    __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
}

/* Print s up to the end of its first word. */
static void put_word(const char *s)
{
    while (*s != '\0' && *s != ' ')
        serial_putc(*s++);
}

/*
 * Whether word is "key=...": then *out is its value if that is a whole
 * word of digits within [min, max], and otherwise *bad is set after saying so.
 */
static bool key_value(const char *word, const char *key, uint32_t min, uint32_t max, uint32_t *out,
                      bool *bad)
{
    const char *s = word;
    for (const char *k = key; *k != '\0'; k++, s++)
        if (*s != *k)
            return false;
    if (*s++ != '=')
        return false;
    const char *digits = s;
    while (*s >= '0' && *s <= '9')
        s++;
    uint32_t v;
    if (s == digits || (*s != ' ' && *s != '\0') || !parse_uint(digits, &v) || v < min || v > max) {
        printf("locks: ");
        put_word(word);
        printf(": %s wants a number from %u to %u\n", key, min, max);
        *bad = true;
        return true;
    }
    *out = v;
    return true;
}

/* Fill cfg from the arguments; false after saying what is wrong. */
static bool parse_args(const char *args)
{
    bool bad = false;
    if (parse_uint64(args, &cfg.cycles))
        args = skip_word(args);
    for (; *args != '\0' && !bad; args = skip_word(args)) {
        if (!key_value(args, "locks", 1, LOCKS_MAX, &cfg.locks, &bad) &&
            !key_value(args, "tas", 0, 100, &cfg.tas_percent, &bad) &&
            !key_value(args, "long", 0, 1000, &cfg.long_permille, &bad) &&
            !key_value(args, "seed", 0, UINT32_MAX, &cfg.seed, &bad)) {
            printf("locks: unknown argument '");
            put_word(args);
            printf("'\n");
            bad = true;
        }
    }
    return !bad;
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    if (!parse_args(cmdline_args(info)))
        return EXIT_BAD_ARGS;
    uint32_t tas_locks = (cfg.locks * cfg.tas_percent + 50) / 100;
    for (uint32_t i = 0; i < cfg.locks; i++)
        locks[i].kind = i < tas_locks ? KIND_TAS : KIND_MCS;
    uint32_t n = smp_start(false, contend);
    if (n == 0)
        return 1;
    start_tsc = rdtsc() + us_to_tsc(START_DELAY_US);
    end_tsc = start_tsc + cfg.cycles;
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    contend(0);
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < n)
        cpu_relax();

    uint32_t by_kind[KINDS] = {0}, long_sections = 0, contended = 0, max_waiters = 0;
    uint32_t vcpu_min = UINT32_MAX, vcpu_max = 0;
    uint64_t max_wait[KINDS] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const struct vcpu_counts *c = &counts[i];
        for (uint32_t k = 0; k < cfg.locks; k++)
            by_kind[locks[k].kind] += c->per_lock[k];
        long_sections += c->long_sections;
        contended += c->contended;
        max_waiters = c->max_waiters > max_waiters ? c->max_waiters : max_waiters;
        vcpu_min = c->total < vcpu_min ? c->total : vcpu_min;
        vcpu_max = c->total > vcpu_max ? c->total : vcpu_max;
        for (int k = 0; k < KINDS; k++)
            max_wait[k] = c->max_wait[k] > max_wait[k] ? c->max_wait[k] : max_wait[k];
    }
    uint32_t total = by_kind[KIND_TAS] + by_kind[KIND_MCS];
    printf("@bench {\"guest\":\"locks\",\"op\":\"acquisitions\",\"value\":%u,\"vcpus\":%u,"
           "\"tas\":%u,\"mcs\":%u,\"long\":%u,\"seed\":%u,\"max_waiters\":%u,\"locks\":%u,"
           "\"tas_locks\":%u}\n",
           total, n, by_kind[KIND_TAS], by_kind[KIND_MCS], long_sections, cfg.seed, max_waiters,
           cfg.locks, tas_locks);
    printf("@bench {\"guest\":\"locks\",\"op\":\"contention\",\"contended\":%u,"
           "\"tas_max_wait\":%llu,\"mcs_max_wait\":%llu,\"vcpu_min\":%u,\"vcpu_max\":%u,"
           "\"long_permille\":%u}\n",
           contended, max_wait[KIND_TAS], max_wait[KIND_MCS], vcpu_min, vcpu_max,
           cfg.long_permille);

    bool violated = violations != 0;
    for (uint32_t k = 0; k < cfg.locks; k++) {
        uint32_t acquired = 0;
        for (uint32_t i = 0; i < n; i++)
            acquired += counts[i].per_lock[k];
        if (locks[k].plain_counter != acquired) {
            printf("mutual exclusion violated: lock %u (%s): counter %u after %u acquisitions\n", k,
                   locks[k].kind == KIND_TAS ? "tas" : "mcs", locks[k].plain_counter, acquired);
            violated = true;
        }
    }
    if (violated) {
        printf("mutual exclusion violated: %u overlaps\n", violations);
        return EXIT_VIOLATED;
    }
    return 0;
}

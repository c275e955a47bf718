/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every vCPU does the same fixed units of integer work from a common TSC
 * start for MS milliseconds (argument, default 200) and reports how many
 * units it finished: on a fair, uncontended host the counts are close; a
 * scheduler's unfairness or overcommit shows as uneven or lower counts.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define MS_DEFAULT  200u
#define MS_MAX      600000u
#define START_DELAY 1000u /* us from publishing the start to the start */
#define UNIT_ROUNDS 140   /* 7 integer operations each: about 1000 per unit */

static uint32_t window_ms = MS_DEFAULT;
static uint64_t start_tsc, end_tsc; /* valid once started is set */
static uint32_t started;
static uint32_t reported;

static uint32_t work_unit(uint32_t x)
{
    for (int i = 0; i < UNIT_ROUNDS; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x += 0x9e3779b9u;
        /* A volatile asm that may read and change x: every round must be computed, in full. */
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

static void hog(uint32_t me)
{
    while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        cpu_relax();
    while (rdtsc() < start_tsc)
        cpu_relax();
    uint32_t units = 0, x = me + 1;
    /*
     * Nothing here raises interrupts; with IF=1 the host can still take the CPU
     * back under Bochs 2.7's SVM, which takes no INTR intercept while IF=0.
     */
    __asm__ volatile("sti" ::: "memory");
    while (rdtsc() < end_tsc) {
        x = work_unit(x);
        units++;
    }
    __asm__ volatile("cli" ::: "memory");
    spin_lock(&console_lock);
    printf("@bench {\"guest\":\"cpuhog\",\"op\":\"work\",\"vcpu\":%u,\"value\":%u}\n", me, units);
    spin_unlock(&console_lock);
    __atomic_add_fetch(&reported, 1, __ATOMIC_RELEASE);
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    window_ms = arg_uint(info, window_ms, 1, MS_MAX);

    uint32_t n = smp_start(false, hog);
    if (n == 0)
        return 1;
    /* All vCPUs are online: the start is a moment every one of them can still make. */
    start_tsc = rdtsc() + us_to_tsc(START_DELAY);
    end_tsc = start_tsc + us_to_tsc((uint64_t)window_ms * 1000);
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    hog(0);
    while (__atomic_load_n(&reported, __ATOMIC_ACQUIRE) < n)
        cpu_relax();
    return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A busy spell, then an idle one, to watch a halt-polling window grow and
 * shrink: first B round trips of an IPI between vCPUs 0 and 1 (halts far
 * shorter than the default 200 us maximum, so the window grows), then every
 * vCPU takes T ticks of a 250 Hz periodic local APIC timer doing nothing in
 * between (4 ms halts, longer than the maximum, so it shrinks back to 0).
 * Arguments: B (default 2000) and T (default 50). Prints the burst's mean
 * round trip and, per vCPU, its ticks and how late they came on average.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/ping.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define TIMER_VECTOR  0x41
#define PERIOD_US     4000u /* 250 Hz, an idle Linux tick */
#define BURST_DEFAULT 2000u
#define TICKS_DEFAULT 50u
#define COUNT_MAX     1000000u

struct ticker {
    volatile uint32_t count;
    uint64_t start, period, late; /* TSC: first tick due at start + period */
};

static struct ticker tickers[MAX_CPUS];
static uint32_t ticks = TICKS_DEFAULT;
static volatile uint32_t burst_over, finished;

__attribute__((interrupt)) static void tick(struct interrupt_frame *f)
{
    uint64_t now = rdtsc();
    (void)f;
    struct ticker *t = &tickers[this_cpu_index()];
    uint32_t n = t->count;
    if (n < ticks) {
        uint64_t due = t->start + (uint64_t)(n + 1) * t->period;
        t->late += now > due ? now - due : 0;
        t->count = n + 1;
        if (n + 1 == ticks)
            lapic_timer_stop();
    }
    lapic_eoi();
}

static void idle_ticks(uint32_t me)
{
    struct ticker *t = &tickers[me];
    uint64_t count = div64((uint64_t)apic_timer_khz() * PERIOD_US, 1000);
    uint32_t divider = count > UINT32_MAX ? 16 : 1;
    count = div64(count, divider);
    t->period = apic_ticks_to_tsc(count * divider);
    t->start = lapic_timer_start(LAPIC_TIMER_PERIODIC, TIMER_VECTOR, (uint32_t)count, divider);
    while (t->count < ticks)
        wait_for_interrupt();
    __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
}

static void ap_main(uint32_t me)
{
    if (me == 1)
        ping_respond(1, 0, &burst_over);
    idle_ticks(me);
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    const char *args = cmdline_args(info);
    uint32_t burst = BURST_DEFAULT;
    parse_uint(args, &burst);
    parse_uint(skip_word(args), &ticks);
    burst = burst < 1 ? 1 : burst > COUNT_MAX ? COUNT_MAX : burst;
    ticks = ticks < 1 ? 1 : ticks > COUNT_MAX ? COUNT_MAX : ticks;

    ping_init();
    set_interrupt_handler(TIMER_VECTOR, tick);
    uint32_t n = smp_start(false, ap_main);
    if (n < 2) {
        printf("idletick needs at least 2 vCPUs, has %u\n", n);
        return 1;
    }
    if (apic_timer_khz() == 0) {
        printf("the local APIC timer does not count\n");
        return 1;
    }
    uint32_t caught = 0;
    uint64_t cycles = ping_round_trips(1, burst, 0, &caught);
    burst_over = 1;
    ping_send(1);
    idle_ticks(0);
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < n)
        cpu_relax();
    printf("@bench {\"guest\":\"idletick\",\"op\":\"burst\",\"cycles\":%llu,\"iters\":%u}\n",
           cycles, burst);
    for (uint32_t i = 0; i < n; i++)
        printf("@bench {\"guest\":\"idletick\",\"op\":\"ticks\",\"vcpu\":%u,\"value\":%u,"
               "\"late_cycles\":%llu}\n",
               i, tickers[i].count, div64(tickers[i].late, ticks));
    return 0;
}

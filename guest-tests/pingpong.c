/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Measures an IPI round trip between two halted vCPUs: vCPU 0 sends
 * vector 0x40 to vCPU 1 and halts until vCPU 1, woken by it, sends the
 * same vector back. Both wait in HLT, so under a hypervisor each trip
 * includes two wake-ups of a halted vCPU. N round trips (argument,
 * default 1000) after a short warm-up; needs at least two vCPUs. Reports
 * the mean round trip (cycles) and the slowest one (max_cycles).
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/ping.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define ITERS_DEFAULT 1000u
#define ITERS_MAX     1000000u
#define WARMUP        10u

static const uint32_t never = 0;

/* vCPU 1 answers every ping; any others have nothing to do. */
static void responder(uint32_t me)
{
    if (me == 1)
        ping_respond(1, 0, &never);
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t iters = arg_uint(info, ITERS_DEFAULT, 1, ITERS_MAX);

    ping_init();
    uint32_t n = smp_start(false, responder);
    if (n == 0)
        return 1;
    if (n < 2) {
        printf("pingpong needs at least 2 vCPUs, has %u\n", n);
        return 1;
    }
    uint32_t caught = 0;
    ping_round_trips(1, WARMUP, 0, &caught);
    /* One round trip at a time, to know the slowest; cycles is their mean, so slow ones count. */
    uint64_t total = 0, slowest = 0;
    trace_mark(true);
    for (uint32_t i = 0; i < iters; i++) {
        uint64_t took = ping_round_trips(1, 1, 0, &caught);
        total += took;
        slowest = took > slowest ? took : slowest;
    }
    trace_mark(false);
    printf("@bench {\"guest\":\"pingpong\",\"op\":\"ipi_roundtrip\",\"cycles\":%llu,\"iters\":%u,"
           "\"max_cycles\":%llu}\n",
           div64(total, iters), iters, slowest);
    return 0;
}

/*
 * Measures an IPI round trip between two halted vCPUs: vCPU 0 sends
 * vector 0x40 to vCPU 1 and halts until vCPU 1, woken by it, sends the
 * same vector back. Both wait in HLT, so under a hypervisor each trip
 * includes two wake-ups of a halted vCPU. N round trips (argument,
 * default 1000) after a short warm-up; needs at least two vCPUs. Reports
 * the mean round trip (cycles) and the slowest one (max_cycles).
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define PING_VECTOR   0x40
#define ITERS_DEFAULT 1000u
#define ITERS_MAX     1000000u
#define WARMUP        10u

static uint32_t pinged[MAX_CPUS]; /* set by the IPI on the vCPU it reaches */

__attribute__((interrupt)) static void ping_ipi(struct interrupt_frame *f)
{
    (void)f;
    __atomic_store_n(&pinged[this_cpu_index()], 1, __ATOMIC_RELEASE);
    lapic_eoi();
}

static void wait_ping(uint32_t me)
{
    while (!__atomic_load_n(&pinged[me], __ATOMIC_ACQUIRE))
        wait_for_interrupt();
    pinged[me] = 0;
}

/* vCPU 1 answers every ping; any others have nothing to do. */
static void responder(uint32_t me)
{
    if (me != 1)
        return;
    for (;;) {
        wait_ping(1);
        send_ipi(cpu_apic_id(0), PING_VECTOR);
    }
}

static void round_trip(uint32_t peer)
{
    send_ipi(peer, PING_VECTOR);
    wait_ping(0);
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t iters = arg_uint(info, ITERS_DEFAULT, 1, ITERS_MAX);

    set_interrupt_handler(PING_VECTOR, ping_ipi);
    uint32_t n = smp_start(false, responder);
    if (n == 0)
        return 1;
    if (n < 2) {
        printf("pingpong needs at least 2 vCPUs, has %u\n", n);
        return 1;
    }
    uint32_t peer = cpu_apic_id(1);
    for (uint32_t i = 0; i < WARMUP; i++)
        round_trip(peer);
    uint64_t t0 = rdtsc(), slowest = 0;
    for (uint32_t i = 0; i < iters; i++) {
        uint64_t before = rdtsc();
        round_trip(peer);
        uint64_t took = rdtsc() - before;
        slowest = took > slowest ? took : slowest;
    }
    uint64_t t1 = rdtsc();
    /* cycles: the mean of the N round trips (total TSC / N), so that slow wake-ups count. */
    printf("@bench {\"guest\":\"pingpong\",\"op\":\"ipi_roundtrip\",\"cycles\":%llu,\"iters\":%u,"
           "\"max_cycles\":%llu}\n",
           div64(t1 - t0, iters), iters, slowest);
    return 0;
}

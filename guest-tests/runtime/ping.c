/* SPDX-License-Identifier: GPL-2.0-only */
#include "guest-tests/runtime/ping.h"

#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/timing.h"

static uint32_t pinged[MAX_CPUS]; /* set by the IPI on the vCPU it reaches */

__attribute__((interrupt)) static void ping_ipi(struct interrupt_frame *f)
{
    (void)f;
    __atomic_store_n(&pinged[this_cpu_index()], 1, __ATOMIC_RELEASE);
    lapic_eoi();
}

void ping_init(void)
{
    set_interrupt_handler(PING_VECTOR, ping_ipi);
}

void ping_send(uint32_t index)
{
    send_ipi(cpu_apic_id(index), PING_VECTOR);
}

bool ping_wait(uint32_t me, uint64_t poll_cycles)
{
    bool caught = false;
    if (poll_cycles) {
        uint64_t end = rdtsc() + poll_cycles;
        __asm__ volatile("sti" ::: "memory");
        while (!__atomic_load_n(&pinged[me], __ATOMIC_ACQUIRE) && rdtsc() < end)
            cpu_relax();
        __asm__ volatile("cli" ::: "memory");
        caught = __atomic_load_n(&pinged[me], __ATOMIC_ACQUIRE);
    }
    while (!__atomic_load_n(&pinged[me], __ATOMIC_ACQUIRE))
        wait_for_interrupt();
    pinged[me] = 0;
    return caught;
}

uint32_t ping_respond(uint32_t me, uint64_t poll_cycles, const volatile uint32_t *stop)
{
    uint32_t caught = 0;
    for (;;) {
        caught += ping_wait(me, poll_cycles);
        if (*stop)
            return caught;
        ping_send(0);
    }
}

uint64_t ping_round_trips(uint32_t peer, uint32_t n, uint64_t poll_cycles, uint32_t *caught)
{
    uint64_t t0 = rdtsc();
    for (uint32_t i = 0; i < n; i++) {
        ping_send(peer);
        *caught += ping_wait(0, poll_cycles);
    }
    /* The mean of the round trips (total TSC / n), so that slow wake-ups count. */
    return div64(rdtsc() - t0, n);
}

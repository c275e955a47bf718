/*
 * The block/wake protocol of vmm/vcpu_events.c, with the scheduler replaced
 * by recorders, including the race between a vCPU deciding to halt and
 * another CPU sending it an interrupt, run on two host threads.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <string.h>

#include "vmm/vcpu.h"

uint64_t tsc_khz = 1000000;

/* Scheduler stand-ins. */
static unsigned wakes, kicks, current_cpu;
static unsigned last_kick;

void sched_wake(struct vcpu *v)
{
    (void)v;
    __atomic_add_fetch(&wakes, 1, __ATOMIC_RELAXED);
}

void sched_kick(unsigned cpu)
{
    last_kick = cpu;
    __atomic_add_fetch(&kicks, 1, __ATOMIC_RELAXED);
}

unsigned sched_this_cpu(void)
{
    return current_cpu;
}

static struct vm vm;
static struct vcpu v;

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof(vm));
    memset(&v, 0, sizeof(v));
    v.vm = &vm;
    v.state = VCPU_RUNNING;
    v.regs.rflags = 0x202; /* IF=1 */
    vlapic_reset(&v.lapic, 0, true);
    uint32_t svr = 0x1ff;
    struct vlapic_ipi ipi;
    bool send;
    vlapic_mmio_write(&v.lapic, 0xf0, svr, 0, &ipi, &send); /* software-enable */
    wakes = kicks = 0;
    current_cpu = 0;
    return 0;
}

static void send_interrupt(uint8_t vector)
{
    uint64_t flags = spin_lock_irqsave(&v.lock);
    if (vlapic_accept(&v.lapic, vector))
        vcpu_notify(&v);
    spin_unlock_irqrestore(&v.lock, flags);
}

static void test_halt_without_events_blocks(void **state)
{
    (void)state;
    vcpu_halt(&v);
    assert_int_equal(v.state, VCPU_BLOCKED);
    assert_int_equal(v.stats.halts, 1);
}

static void test_halt_with_pending_interrupt_continues(void **state)
{
    (void)state;
    vlapic_accept(&v.lapic, 0x40);
    vcpu_halt(&v);
    assert_int_equal(v.state, VCPU_RUNNING);
    assert_int_equal(v.stats.halts, 0);
}

static void test_interrupts_off_halt_ignores_interrupts(void **state)
{
    (void)state;
    v.regs.rflags = 0x2;
    vlapic_accept(&v.lapic, 0x40);
    vcpu_halt(&v);
    assert_int_equal(v.state, VCPU_BLOCKED);
    send_interrupt(0x41);
    assert_int_equal(v.state, VCPU_BLOCKED); /* IF=0: an interrupt does not end the halt */
    assert_int_equal(wakes, 0);
    uint64_t flags = spin_lock_irqsave(&v.lock);
    nmi_send(&v.nmi); /* an NMI does */
    vcpu_notify(&v);
    spin_unlock_irqrestore(&v.lock, flags);
    assert_int_equal(v.state, VCPU_RUNNABLE);
    assert_int_equal(wakes, 1);
}

static uint64_t halts_recorded(void)
{
    uint64_t n = 0;
    for (unsigned b = 0; b < HALT_HIST_BUCKETS; b++)
        n += v.stats.halt_hist[b];
    return n;
}

static void test_wake_from_block(void **state)
{
    (void)state;
    vcpu_halt(&v);
    send_interrupt(0x40);
    assert_int_equal(v.state, VCPU_RUNNABLE);
    assert_int_equal(wakes, 1);
    assert_int_equal(kicks, 0);
    assert_int_equal(halts_recorded(), 1);
    /* A second interrupt to a RUNNABLE vCPU needs nothing: it is injected when it runs. */
    send_interrupt(0x41);
    assert_int_equal(wakes, 1);
    assert_int_equal(kicks, 0);
}

static void test_running_elsewhere_is_kicked(void **state)
{
    (void)state;
    v.cpu = 1;
    current_cpu = 0;
    send_interrupt(0x40);
    assert_int_equal(kicks, 1);
    assert_int_equal(last_kick, 1);
    current_cpu = 1; /* on its own CPU the loop injects before the next entry: no IPI */
    send_interrupt(0x41);
    assert_int_equal(kicks, 1);
}

static void test_stop_wakes_a_halted_vcpu(void **state)
{
    (void)state;
    v.regs.rflags = 0x2;
    vcpu_halt(&v);
    assert_int_equal(v.state, VCPU_BLOCKED);
    vm.stopping = true;
    uint64_t flags = spin_lock_irqsave(&v.lock);
    vcpu_notify(&v);
    spin_unlock_irqrestore(&v.lock, flags);
    assert_int_equal(v.state, VCPU_RUNNABLE);
}

static void test_state_time_accounting(void **state)
{
    (void)state;
    v.state = VCPU_RUNNING;
    v.state_since = 1000;
    vcpu_set_state(&v, VCPU_BLOCKED, 5000);
    vcpu_set_state(&v, VCPU_RUNNABLE, 5000 + 1000000); /* 1 ms at 1 GHz */
    vcpu_set_state(&v, VCPU_RUNNING, 5000 + 1000000 + 300);
    assert_int_equal(v.stats.cycles[VCPU_RUNNING], 4000);
    assert_int_equal(v.stats.cycles[VCPU_BLOCKED], 1000000);
    assert_int_equal(v.stats.cycles[VCPU_RUNNABLE], 300);
    assert_int_equal(v.stats.halt_hist[19], 1); /* 1e6 ns is in [2^19, 2^20) */
}

/* The race: the halting vCPU and the sender run at once, many times. */
static pthread_barrier_t barrier;
#define RACE_ROUNDS 20000

/* Staggered starts so the two sides meet at every point of each other's path. */
static void spin(unsigned n)
{
    for (volatile unsigned i = 0; i < n; i++)
        ;
}

static void *halter(void *arg)
{
    (void)arg;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        pthread_barrier_wait(&barrier);
        spin((unsigned)(i * 7) % 97);
        vcpu_halt(&v);
        pthread_barrier_wait(&barrier);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

static void test_no_lost_wakeup_race(void **state)
{
    (void)state;
    pthread_t t;
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_create(&t, NULL, halter, NULL);
    unsigned blocked_then_woken = 0, never_blocked = 0;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        pthread_barrier_wait(&barrier);
        spin((unsigned)(i * 13) % 89);
        send_interrupt(0x40);
        pthread_barrier_wait(&barrier);
        /* Both sides are done: a halted vCPU with an interrupt pending would be a lost wake-up. */
        assert_int_not_equal(v.state, VCPU_BLOCKED);
        if (v.state == VCPU_RUNNABLE)
            blocked_then_woken++;
        else
            never_blocked++;
        v.state = VCPU_RUNNING;
        vlapic_ack(&v.lapic, 0x40);
        struct vlapic_ipi ipi;
        bool send;
        vlapic_mmio_write(&v.lapic, 0xb0, 0, 0, &ipi, &send); /* EOI */
        pthread_barrier_wait(&barrier);
    }
    pthread_join(t, NULL);
    assert_int_equal(blocked_then_woken + never_blocked, RACE_ROUNDS);
    /* Both orders happened, so the race was really run. */
    assert_true(blocked_then_woken > 0 && never_blocked > 0);
    assert_int_equal(wakes, blocked_then_woken);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_halt_without_events_blocks, setup),
        cmocka_unit_test_setup(test_halt_with_pending_interrupt_continues, setup),
        cmocka_unit_test_setup(test_interrupts_off_halt_ignores_interrupts, setup),
        cmocka_unit_test_setup(test_wake_from_block, setup),
        cmocka_unit_test_setup(test_running_elsewhere_is_kicked, setup),
        cmocka_unit_test_setup(test_stop_wakes_a_halted_vcpu, setup),
        cmocka_unit_test_setup(test_state_time_accounting, setup),
        cmocka_unit_test_setup(test_no_lost_wakeup_race, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

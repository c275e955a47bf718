/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The host timer queue (sched/timer.c): a deadline armed on this CPU takes
 * effect at once, since the exit fast path enters the guest again without
 * reprogramming the APIC timer; one armed for another CPU kicks it instead.
 */
#define _GNU_SOURCE /* syscall() */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <asm/prctl.h>
#include <cmocka.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/x86/percpu.h"
#include "sched/timer.h"

uint64_t tsc_khz = 100000;
uint64_t lapic_timer_khz = 6250;

/* The APIC timer as the queue last set it: a TSC deadline, 0 = stopped. */
static uint64_t apic_deadline;
static unsigned apic_writes;
static int kicked = -1;

bool lapic_has_tsc_deadline(void)
{
    return true;
}

void lapic_timer_tsc_deadline(uint64_t tsc)
{
    apic_deadline = tsc;
    apic_writes++;
}

void lapic_timer_oneshot(uint32_t ticks)
{
    (void)ticks;
    fail_msg("TSC-deadline mode programs no count");
}

void lapic_timer_stop(void)
{
    apic_deadline = 0;
    apic_writes++;
}

void sched_kick(unsigned cpu)
{
    kicked = (int)cpu;
}

static struct percpu cpu0 = {.self = &cpu0, .cpu = 0};

static int setup(void **state)
{
    (void)state;
    /* this_cpu() reads %gs:0, as on the hypervisor's CPUs. */
    if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)&cpu0))
        return -1;
    host_timer_init();
    return 0;
}

static void fired(struct timer *t, uint64_t now)
{
    (void)t;
    (void)now;
}

/* Static, and cancelled after each test: a failed assertion leaves no stack frame queued. */
static struct timer t, u;

static int fresh(void **state)
{
    (void)state;
    timer_init(&t, fired);
    timer_init(&u, fired);
    host_timer_fired();
    apic_deadline = 0;
    apic_writes = 0;
    kicked = -1;
    return 0;
}

static int cancel(void **state)
{
    (void)state;
    timer_cancel(&t);
    timer_cancel(&u);
    return 0;
}

static void test_an_earlier_deadline_here_reprograms_at_once(void **state)
{
    (void)state;
    host_timer_program(5000); /* the slice's end */
    assert_int_equal(apic_deadline, 5000);
    /* A guest's deadline armed in an exit the fast path handles: no host_timer_program follows. */
    timer_arm(&t, 0, 1200);
    assert_int_equal(apic_deadline, 1200);
    assert_int_equal(kicked, -1);
}

static void test_a_later_deadline_here_waits_for_the_interrupt(void **state)
{
    (void)state;
    host_timer_program(1000);
    unsigned writes = apic_writes;
    timer_arm(&t, 0, 9000);
    /* The earlier interrupt comes first, and the queue is looked at again then. */
    assert_int_equal(apic_deadline, 1000);
    assert_int_equal(apic_writes, writes);
}

static void test_nothing_programmed_then_a_deadline_here(void **state)
{
    (void)state;
    /* After the APIC timer fired (a periodic timer re-armed from its callback). */
    timer_arm(&t, 0, 700);
    assert_int_equal(apic_deadline, 700);
    /* The same deadline again, with the APIC already set for it: no second write. */
    unsigned writes = apic_writes;
    host_timer_program(0);
    assert_int_equal(apic_writes, writes);
}

static void test_a_deadline_for_another_cpu_kicks_it(void **state)
{
    (void)state;
    host_timer_program(5000);
    timer_arm(&t, 1, 100);
    assert_int_equal(kicked, 1);
    assert_int_equal(apic_deadline, 5000); /* this CPU's APIC is not the one to move */
}

static void test_only_the_earliest_timer_moves_the_apic(void **state)
{
    (void)state;
    timer_arm(&t, 0, 300);
    assert_int_equal(apic_deadline, 300);
    timer_arm(&u, 0, 200);
    assert_int_equal(apic_deadline, 200);
    unsigned writes = apic_writes;
    timer_arm(&t, 0, 250); /* not the earliest: u still is */
    assert_int_equal(apic_writes, writes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_an_earlier_deadline_here_reprograms_at_once, fresh,
                                        cancel),
        cmocka_unit_test_setup_teardown(test_a_later_deadline_here_waits_for_the_interrupt, fresh,
                                        cancel),
        cmocka_unit_test_setup_teardown(test_nothing_programmed_then_a_deadline_here, fresh,
                                        cancel),
        cmocka_unit_test_setup_teardown(test_a_deadline_for_another_cpu_kicks_it, fresh, cancel),
        cmocka_unit_test_setup_teardown(test_only_the_earliest_timer_moves_the_apic, fresh, cancel),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

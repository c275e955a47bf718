/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The replay of recorded halts (tools/halt_replay.c) through the policies of
 * sched/halt_poll.c: which halts each catches, what its failed polls cost,
 * and that it chooses the windows the live code chose.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tools/halt_replay.h"

#define MAX  200000
#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct halt_poll_params policy(unsigned mode, uint64_t shrink)
{
    return (struct halt_poll_params){MAX, 2, 10000, shrink, mode};
}

/* A valid halt of vCPU 0 that the recorded policy met with window w. */
static struct halt_record halt(uint64_t ns, uint64_t w)
{
    return (struct halt_record){.ns = ns, .window_ns = w, .valid = true};
}

static struct halt_replay_result replay(const struct halt_record *r, size_t n,
                                        struct halt_poll_params p)
{
    struct halt_replay_result o;
    assert_true(halt_replay(r, n, &p, p.max_ns, &o));
    assert_int_equal(o.halts, n);
    return o;
}

/* Fixed polling catches exactly the halts no longer than the maximum; each other costs it. */
static void test_fixed_catches_the_short_halts(void **state)
{
    (void)state;
    struct halt_record r[] = {halt(5000, 0), halt(300000, 0),  halt(150000, 0),
                              halt(MAX, 0),  halt(MAX + 1, 0), halt(10, 0)};
    struct halt_replay_result o = replay(r, N(r), policy(HALT_POLL_FIXED, 2));
    assert_int_equal(o.polls, 6);
    assert_int_equal(o.caught, 4);
    assert_int_equal(o.blocked, 2);
    assert_int_equal(o.wasted_ns, 2 * MAX);
    assert_int_equal(o.poll_ns, 5000 + 150000 + MAX + 10 + 2 * MAX);
    /* The recording's windows were 0: not fixed's. */
    assert_int_equal(o.compared, 6);
    assert_int_equal(o.same_window, 0);
}

/* halt_poll_ns=0: nothing polls, everything blocks, and the windows are 0. */
static void test_none_catches_nothing(void **state)
{
    (void)state;
    struct halt_record r[] = {halt(10, 0), halt(5000, 0), halt(1000000, 0)};
    struct halt_poll_params p = policy(HALT_POLL_ADAPTIVE, 2);
    p.max_ns = 0;
    struct halt_replay_result o = replay(r, N(r), p);
    assert_int_equal(o.polls, 0);
    assert_int_equal(o.caught, 0);
    assert_int_equal(o.blocked, 3);
    assert_int_equal(o.poll_ns, 0);
    assert_int_equal(o.same_window, 3);
}

/*
 * KVM's rules: 30 us halts grow the window from 0 through grow_start and
 * doubling until one is caught; then 1 ms halts halve it (shrink 2) to 0
 * once below grow_start, or reset it at once (shrink 0). The recorded
 * windows are the ones those rules give, so every one matches.
 */
static void test_adaptive_grows_then_shrinks(void **state)
{
    (void)state;
    struct halt_record r[] = {
        halt(30000, 0),       halt(30000, 10000),   halt(30000, 20000),
        halt(30000, 40000),   halt(30000, 40000),   halt(1000000, 40000),
        halt(1000000, 20000), halt(1000000, 10000), halt(1000000, 0),
    };
    struct halt_replay_result o = replay(r, N(r), policy(HALT_POLL_ADAPTIVE, 2));
    assert_int_equal(o.same_window, N(r));
    assert_int_equal(o.polls, 7);
    assert_int_equal(o.caught, 2);
    assert_int_equal(o.blocked, 7);
    assert_int_equal(o.wasted_ns, 10000 + 20000 + 40000 + 20000 + 10000);
    assert_int_equal(o.poll_ns, o.wasted_ns + 2 * 30000);
    /* Shrink 0: the first long halt resets the window, so it polls once fewer after the
     * short ones and never again. */
    o = replay(r, N(r), policy(HALT_POLL_ADAPTIVE, 0));
    assert_int_equal(o.polls, 5);
    assert_int_equal(o.caught, 2);
    assert_int_equal(o.wasted_ns, 10000 + 20000 + 40000);
    assert_int_equal(o.same_window, 7); /* not the two that shrink 2 still had after it */
}

/* Each vCPU has its own window: one's long halts do not shrink the other's. */
static void test_vcpus_keep_their_own_windows(void **state)
{
    (void)state;
    struct halt_record r[8];
    for (unsigned i = 0; i < N(r); i++) {
        r[i] = halt(i % 2 ? 5000000 : 15000, 0);
        r[i].vcpu = i % 2;
    }
    struct halt_replay_result o = replay(r, N(r), policy(HALT_POLL_ADAPTIVE, 2));
    /* vCPU 0: 0 (blocks, grows), 10000 (fails, grows), then 20000 catches twice; vCPU 1's halts
     * all outlast the maximum, so it never polls. */
    assert_int_equal(o.polls, 3);
    assert_int_equal(o.caught, 2);
    assert_int_equal(o.wasted_ns, 10000);
}

/*
 * A halt the recording says could not poll (another vCPU wanted the CPU)
 * polls under no policy but still adjusts the window; an opted-out guest's
 * halt neither polls nor adjusts it; a stop request shrinks it.
 */
static void test_halts_that_cannot_poll(void **state)
{
    (void)state;
    struct halt_record r[] = {halt(5000, 0), halt(5000, 0), halt(5000, 0), halt(5000, 0),
                              halt(5000, 0)};
    r[0].cpu_wanted = true; /* grows to 10000 without polling */
    r[1].opted_out = true;  /* leaves it */
    r[3].valid = false;     /* caught, then shrinks to 0 (below grow_start) */
    struct halt_replay_result o = replay(r, N(r), policy(HALT_POLL_ADAPTIVE, 2));
    assert_int_equal(o.compared, 3);
    assert_int_equal(o.polls, 2);
    assert_int_equal(o.caught, 2);
    assert_int_equal(o.blocked, 3);
    assert_int_equal(o.poll_ns, 2 * 5000);
}

/* predict polls just past the halts it remembers once it has seen them. */
static void test_predict_polls_past_the_halts_it_saw(void **state)
{
    (void)state;
    struct halt_record r[20];
    for (unsigned i = 0; i < N(r); i++)
        r[i] = halt(16000, 0);
    struct halt_replay_result o = replay(r, N(r), policy(HALT_POLL_PREDICT, 2));
    /* The first halt has no history and blocks; each later one is caught by 16000 + 1/8. */
    assert_int_equal(o.polls, N(r) - 1);
    assert_int_equal(o.caught, N(r) - 1);
    assert_int_equal(o.wasted_ns, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_catches_the_short_halts),
        cmocka_unit_test(test_none_catches_nothing),
        cmocka_unit_test(test_adaptive_grows_then_shrinks),
        cmocka_unit_test(test_vcpus_keep_their_own_windows),
        cmocka_unit_test(test_halts_that_cannot_poll),
        cmocka_unit_test(test_predict_polls_past_the_halts_it_saw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

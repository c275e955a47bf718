/* SPDX-License-Identifier: GPL-2.0-only */
/* The halt-polling policy (sched/halt_poll.c): KVM's adaptive rules, fixed and predict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "sched/halt_poll.h"

#define MAX 200000

static struct halt_poll_change c0; /* what begin reports, where a test does not look */

static struct halt_poll_params kvm(uint64_t grow, uint64_t shrink)
{
    return (struct halt_poll_params){MAX, grow, 10000, shrink, HALT_POLL_ADAPTIVE};
}

struct step {
    uint64_t window, max, halt_ns;
    enum halt_poll_change_kind kind;
    uint64_t after;
};

static void run_steps(const struct halt_poll_params *p, const struct step *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct halt_poll hp = {.window_ns = s[i].window};
        struct halt_poll_change unused;
        halt_poll_begin(&hp, p, s[i].max, &unused);
        struct halt_poll_change c = halt_poll_end(&hp, p, s[i].max, s[i].halt_ns, true);
        if (c.kind != s[i].kind || hp.window_ns != s[i].after || c.new_ns != s[i].after) {
            fail_msg("step %zu: window %llu, max %llu, halt %llu: got kind %d window %llu, want "
                     "kind %d window %llu",
                     i, (unsigned long long)s[i].window, (unsigned long long)s[i].max,
                     (unsigned long long)s[i].halt_ns, c.kind, (unsigned long long)hp.window_ns,
                     s[i].kind, (unsigned long long)s[i].after);
        }
    }
}

static void test_adaptive_branches(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(2, 2);
    const struct step steps[] = {
        /* A short halt the window missed: grow, from 0 to grow_start first. */
        {0, MAX, 50000, HALT_POLL_GROW, 10000},
        {10000, MAX, 15000, HALT_POLL_GROW, 20000},
        {20000, MAX, 199999, HALT_POLL_GROW, 40000},
        /* Capped at max (KVM would give 300000 and clamp at the next halt). */
        {150000, MAX, 160000, HALT_POLL_GROW, MAX},
        /* Caught within the window: keep. */
        {40000, MAX, 40000, HALT_POLL_KEEP, 40000},
        {40000, MAX, 1, HALT_POLL_KEEP, 40000},
        /* A halt longer than max: shrink, and to 0 once below grow_start. */
        {40000, MAX, 200001, HALT_POLL_SHRINK, 20000},
        {MAX, MAX, 5000000, HALT_POLL_SHRINK, 100000},
        {10000, MAX, 300000, HALT_POLL_SHRINK, 0},
        {19999, MAX, 300000, HALT_POLL_SHRINK, 0},
        {20000, MAX, 300000, HALT_POLL_SHRINK, 10000},
        /* Never polling and every halt long: it never starts (the design). */
        {0, MAX, 300000, HALT_POLL_KEEP, 0},
        /* A halt of exactly max neither grows nor shrinks. */
        {40000, MAX, MAX, HALT_POLL_KEEP, 40000},
        /* At max, a halt between window and max: nothing to grow into. */
        {MAX, MAX, MAX, HALT_POLL_KEEP, MAX},
    };
    run_steps(&p, steps, sizeof(steps) / sizeof(steps[0]));
}

static void test_adaptive_shrink_zero_resets(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(2, 0);
    const struct step steps[] = {
        {MAX, MAX, 300000, HALT_POLL_SHRINK, 0},
        {10000, MAX, 300000, HALT_POLL_SHRINK, 0},
        {0, MAX, 50000, HALT_POLL_GROW, 10000},
    };
    run_steps(&p, steps, sizeof(steps) / sizeof(steps[0]));
}

static void test_adaptive_grow_zero_still_reports(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(0, 2);
    /* KVM prints a grow line even when halt_poll_ns_grow=0 leaves the window alone. */
    const struct step steps[] = {
        {0, MAX, 50000, HALT_POLL_GROW, 0},
        {20000, MAX, 50000, HALT_POLL_GROW, 20000},
    };
    run_steps(&p, steps, sizeof(steps) / sizeof(steps[0]));
}

static void test_grow_start_above_max(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(2, 2);
    const struct step steps[] = {
        {0, 5000, 2000, HALT_POLL_GROW, 5000},
    };
    run_steps(&p, steps, sizeof(steps) / sizeof(steps[0]));
}

static void test_max_zero_stops_polling_at_once(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(2, 2);
    struct halt_poll hp = {.window_ns = MAX};
    assert_int_equal(halt_poll_begin(&hp, &p, 0, &c0), 0);
    struct halt_poll_change c = halt_poll_end(&hp, &p, 0, 50, true);
    assert_int_equal(c.kind, HALT_POLL_KEEP);
    assert_int_equal(hp.window_ns, 0);
    /* And it stays off: a short halt does not grow it. */
    assert_int_equal(halt_poll_begin(&hp, &p, 0, &c0), 0);
    halt_poll_end(&hp, &p, 0, 50, true);
    assert_int_equal(hp.window_ns, 0);
}

static void test_max_lowered_below_window(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(2, 2);
    struct halt_poll hp = {.window_ns = MAX};
    assert_int_equal(halt_poll_begin(&hp, &p, 50000, &c0), 50000);
    assert_int_equal(hp.window_ns, 50000);
    struct halt_poll_change c = halt_poll_end(&hp, &p, 50000, 60000, true);
    assert_int_equal(c.kind, HALT_POLL_SHRINK);
    assert_int_equal(c.old_ns, 50000);
    assert_int_equal(hp.window_ns, 25000);
}

static void test_invalid_wakeup_shrinks(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(2, 2);
    struct halt_poll hp = {.window_ns = 40000};
    halt_poll_begin(&hp, &p, MAX, &c0);
    struct halt_poll_change c = halt_poll_end(&hp, &p, MAX, 1000, false);
    assert_int_equal(c.kind, HALT_POLL_SHRINK);
    assert_int_equal(hp.window_ns, 20000);
    /* A window of 0 has nothing to shrink: no change to report. */
    hp.window_ns = 0;
    c = halt_poll_end(&hp, &p, MAX, 1000, false);
    assert_int_equal(c.kind, HALT_POLL_KEEP);
}

/* The trace in ../shared/seeds/000 (shrink 2), replayed from halt durations. */
static void test_replay_seed_sequence(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(2, 2);
    const uint64_t halts[] = {50000, 15000,  30000,  300000, 30000,  300000,
                              30000, 300000, 300000, 15000,  300000, 300000};
    const struct {
        enum halt_poll_change_kind kind;
        uint64_t new_ns, old_ns;
    } want[] = {
        {HALT_POLL_GROW, 10000, 0},       {HALT_POLL_GROW, 20000, 10000},
        {HALT_POLL_GROW, 40000, 20000},   {HALT_POLL_SHRINK, 20000, 40000},
        {HALT_POLL_GROW, 40000, 20000},   {HALT_POLL_SHRINK, 20000, 40000},
        {HALT_POLL_GROW, 40000, 20000},   {HALT_POLL_SHRINK, 20000, 40000},
        {HALT_POLL_SHRINK, 10000, 20000}, {HALT_POLL_GROW, 20000, 10000},
        {HALT_POLL_SHRINK, 10000, 20000}, {HALT_POLL_SHRINK, 0, 10000},
    };
    struct halt_poll hp = {0};
    for (size_t i = 0; i < sizeof(halts) / sizeof(halts[0]); i++) {
        halt_poll_begin(&hp, &p, MAX, &c0);
        struct halt_poll_change c = halt_poll_end(&hp, &p, MAX, halts[i], true);
        assert_int_equal(c.kind, want[i].kind);
        assert_int_equal(c.new_ns, want[i].new_ns);
        assert_int_equal(c.old_ns, want[i].old_ns);
    }
}

static void test_fixed_always_polls_max(void **state)
{
    (void)state;
    struct halt_poll_params p = kvm(2, 2);
    p.mode = HALT_POLL_FIXED;
    struct halt_poll hp = {0};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(halt_poll_begin(&hp, &p, MAX, &c0), MAX);
        struct halt_poll_change c = halt_poll_end(&hp, &p, MAX, i ? 5000000 : 10, true);
        assert_int_equal(c.kind, HALT_POLL_KEEP);
    }
    assert_int_equal(halt_poll_begin(&hp, &p, 0, &c0), 0);
}

static struct halt_poll_params predict(void)
{
    struct halt_poll_params p = kvm(2, 2);
    p.mode = HALT_POLL_PREDICT;
    return p;
}

/* Feed n halts of halt_ns; returns the window the next halt polls for. */
static uint64_t feed(struct halt_poll *hp, const struct halt_poll_params *p, uint64_t max,
                     uint64_t halt_ns, int n)
{
    for (int i = 0; i < n; i++) {
        halt_poll_begin(hp, p, max, &c0);
        struct halt_poll_change c = halt_poll_end(hp, p, max, halt_ns, true);
        assert_int_equal(c.kind, HALT_POLL_KEEP); /* predict moves its window at begin */
    }
    return halt_poll_begin(hp, p, max, &c0);
}

static void test_predict_without_history_does_not_poll(void **state)
{
    (void)state;
    struct halt_poll_params p = predict();
    struct halt_poll hp = {0};
    assert_int_equal(halt_poll_predict_window(&hp, MAX), 0);
    assert_int_equal(halt_poll_begin(&hp, &p, MAX, &c0), 0);
}

static void test_predict_short_halts_poll_just_past_them(void **state)
{
    (void)state;
    struct halt_poll_params p = predict();
    struct halt_poll hp = {0};
    /* An eighth past the halts, so that jitter does not make them miss. */
    assert_int_equal(feed(&hp, &p, MAX, 12000, 1), 13500);
    assert_int_equal(c0.kind, HALT_POLL_GROW); /* the trace reports predict's moves too */
    assert_int_equal(c0.old_ns, 0);
    assert_int_equal(c0.new_ns, 13500);
    assert_int_equal(feed(&hp, &p, MAX, 12000, 20), 13500);
    assert_int_equal(c0.kind, HALT_POLL_KEEP);
    /* The longest of a spread of short halts that pays. */
    assert_int_equal(feed(&hp, &p, MAX, 40000, 8), 45000);
}

static void test_predict_long_halts_never_poll(void **state)
{
    (void)state;
    struct halt_poll_params p = predict();
    struct halt_poll hp = {0};
    assert_int_equal(feed(&hp, &p, MAX, 4000000, 50), 0);
}

static void test_predict_forgets_short_halts(void **state)
{
    (void)state;
    struct halt_poll_params p = predict();
    struct halt_poll hp = {0};
    assert_int_equal(feed(&hp, &p, MAX, 12000, 50), 13500);
    /*
     * Ticks of an idle guest: two short halts among the 16 remembered still
     * pay for polling 13.5 us on every halt (2 x 188 us won against 14 x 13.5
     * us lost), one does not (188 < 15 x 13.5): polling stops at the 15th.
     */
    int long_halts = 0;
    while (hp.window_ns && long_halts < 100) {
        feed(&hp, &p, MAX, 4000000, 1);
        long_halts++;
    }
    assert_int_equal(hp.window_ns, 0);
    assert_int_equal(long_halts, HALT_POLL_PREDICT_HALTS - 1);
}

static void test_predict_mixed_keeps_the_short_window(void **state)
{
    (void)state;
    struct halt_poll_params p = predict();
    struct halt_poll hp = {0};
    /* Alternating short and long halts: adaptive see-saws, predict keeps catching the short ones.
     */
    for (int i = 0; i < 40; i++) {
        feed(&hp, &p, MAX, 12000, 1);
        feed(&hp, &p, MAX, 4000000, 1);
        assert_int_equal(hp.window_ns, 13500);
    }
}

static void test_predict_partial_bucket_up_to_max(void **state)
{
    (void)state;
    struct halt_poll_params p = predict();
    struct halt_poll hp = {0};
    /* Halts close to max: the window is capped there, and still catches them. */
    assert_int_equal(feed(&hp, &p, MAX, 190000, 10), MAX);
    /* Halts beyond a lowered max: nothing to catch, no polling. */
    assert_int_equal(feed(&hp, &p, 100000, 150000, 16), 0);
}

/* The one-pass choice against the definition, every candidate tried in full. */
static uint64_t predict_by_definition(const uint32_t *halts, unsigned n, uint64_t max)
{
    uint64_t best = 0;
    int64_t best_payoff = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t w = halts[i] + halts[i] / 8;
        w = w > max ? max : w;
        int64_t payoff = 0;
        for (unsigned j = 0; j < n; j++)
            payoff += halts[j] <= w ? (int64_t)(max - halts[j]) : -(int64_t)w;
        if (payoff > best_payoff || (payoff == best_payoff && payoff > 0 && w < best)) {
            best = w;
            best_payoff = payoff;
        }
    }
    return best;
}

static void test_predict_matches_its_definition(void **state)
{
    (void)state;
    struct halt_poll_params p = predict();
    uint32_t rng = 12345;
    for (int round = 0; round < 200; round++) {
        struct halt_poll hp = {0};
        uint32_t last[HALT_POLL_PREDICT_HALTS];
        unsigned n = 0;
        for (int i = 0; i < 40; i++) {
            rng = rng * 1664525u + 1013904223u;
            /* Short, medium and long halts, with repeats to exercise ties. */
            uint32_t d = (rng >> 8) % 4 == 0 ? 4000000 : ((rng >> 12) % 64) * 5000;
            feed(&hp, &p, MAX, d, 1);
            if (n == HALT_POLL_PREDICT_HALTS)
                memmove(last, last + 1, sizeof(last) - sizeof(last[0]));
            else
                n++;
            last[n - 1] = d;
            assert_int_equal(hp.window_ns, predict_by_definition(last, n, MAX));
        }
    }
}

static void test_predict_max_zero(void **state)
{
    (void)state;
    struct halt_poll_params p = predict();
    struct halt_poll hp = {0};
    feed(&hp, &p, MAX, 12000, 10);
    assert_int_equal(halt_poll_begin(&hp, &p, 0, &c0), 0);
    assert_int_equal(halt_poll_predict_window(&hp, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adaptive_branches),
        cmocka_unit_test(test_adaptive_shrink_zero_resets),
        cmocka_unit_test(test_adaptive_grow_zero_still_reports),
        cmocka_unit_test(test_grow_start_above_max),
        cmocka_unit_test(test_max_zero_stops_polling_at_once),
        cmocka_unit_test(test_max_lowered_below_window),
        cmocka_unit_test(test_invalid_wakeup_shrinks),
        cmocka_unit_test(test_replay_seed_sequence),
        cmocka_unit_test(test_fixed_always_polls_max),
        cmocka_unit_test(test_predict_without_history_does_not_poll),
        cmocka_unit_test(test_predict_short_halts_poll_just_past_them),
        cmocka_unit_test(test_predict_long_halts_never_poll),
        cmocka_unit_test(test_predict_forgets_short_halts),
        cmocka_unit_test(test_predict_mixed_keeps_the_short_window),
        cmocka_unit_test(test_predict_partial_bucket_up_to_max),
        cmocka_unit_test(test_predict_matches_its_definition),
        cmocka_unit_test(test_predict_max_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

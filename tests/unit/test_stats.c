/* The statistics model: descriptors to JSON, the human tables, aggregation, histograms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <string.h>

#include "stats/stats.h"
#include "stats/table.h"

static const char *const reason_names[] = {"none", "cpuid", "hlt", "io"};

static const char *reason_name(unsigned r)
{
    return reason_names[r];
}

static const struct stats_reasons reasons = {4, reason_name};

/* A record of scope s with every number distinct and every array valid. */
struct filled {
    struct stats_record r;
    uint64_t hist[STATS_HIST_BUCKETS];
    uint64_t by[4];
};

static void fill(struct filled *f, enum stats_scope s, const char *name)
{
    memset(f, 0, sizeof(*f));
    f->r.scope = s;
    for (unsigned k = 0; k < STATS_KEY_COUNT; k++) {
        switch (stats_descs[k].kind) {
        case STATS_COUNTER:
        case STATS_GAUGE:
            f->r.v[k].n = 1000 + k;
            break;
        case STATS_STRING:
            f->r.v[k].s = name;
            break;
        case STATS_HIST:
            f->r.v[k].hist = f->hist;
            break;
        case STATS_BY_REASON:
            f->r.v[k].by = f->by;
            break;
        }
    }
}

static void test_json_has_every_key_of_its_scope(void **state)
{
    (void)state;
    static char buf[8192];
    for (unsigned s = 0; s < STATS_SCOPE_COUNT; s++) {
        struct filled f;
        fill(&f, (enum stats_scope)s, "vm1");
        f.hist[3] = 7;
        f.by[2] = 9;
        const char *text = stats_json(&f.r, &reasons, buf, sizeof(buf));
        assert_null(strstr(text, "truncated"));
        for (unsigned k = 0; k < STATS_KEY_COUNT; k++) {
            char want[96];
            const struct stats_desc *d = &stats_descs[k];
            if (d->kind == STATS_COUNTER || d->kind == STATS_GAUGE)
                snprintf(want, sizeof(want), "\"%s\":%u", d->name, 1000 + k);
            else if (k == STATS_scope)
                snprintf(want, sizeof(want), "\"scope\":\"%s\"", stats_scope_names[s]);
            else if (d->kind == STATS_STRING)
                snprintf(want, sizeof(want), "\"%s\":\"vm1\"", d->name);
            else if (d->kind == STATS_HIST)
                snprintf(want, sizeof(want), "\"%s\":{\"3\":7}", d->name);
            else
                snprintf(want, sizeof(want), "\"%s\":{\"hlt\":9}", d->name);
            if (d->scopes & (1u << s))
                assert_non_null(strstr(text, want));
            else
                assert_null(strstr(text, want));
        }
    }
}

static void test_json_escapes_names(void **state)
{
    (void)state;
    char buf[8192];
    struct filled f;
    fill(&f, STATS_SCOPE_VM, "a\"b\\c\n");
    const char *text = stats_json(&f.r, &reasons, buf, sizeof(buf));
    assert_non_null(strstr(text, "\"vm\":\"a\\\"b\\\\c\\u000a\""));
    assert_null(strchr(text, '\n'));
}

static void test_json_counters_are_plain_integers(void **state)
{
    (void)state;
    char buf[8192];
    struct filled f;
    fill(&f, STATS_SCOPE_VCPU, "v");
    f.r.v[STATS_halt_wait_ns].n = UINT64_MAX;
    const char *text = stats_json(&f.r, &reasons, buf, sizeof(buf));
    assert_non_null(strstr(text, "\"halt_wait_ns\":18446744073709551615,"));
}

static void test_every_key_is_described(void **state)
{
    (void)state;
    for (unsigned k = 0; k < STATS_KEY_COUNT; k++) {
        const struct stats_desc *d = &stats_descs[k];
        assert_non_null(d->name);
        assert_true(d->scopes != 0);
        assert_true(strlen(d->doc) > 3);
        for (unsigned j = 0; j < k; j++)
            assert_string_not_equal(d->name, stats_descs[j].name);
    }
}

static void test_hist_buckets(void **state)
{
    (void)state;
    assert_int_equal(stats_hist_bucket(0), 0);
    assert_int_equal(stats_hist_bucket(1), 0);
    assert_int_equal(stats_hist_bucket(2), 1);
    assert_int_equal(stats_hist_bucket(3), 1);
    assert_int_equal(stats_hist_bucket(1023), 9);
    assert_int_equal(stats_hist_bucket(1024), 10);
    assert_int_equal(stats_hist_bucket(UINT64_MAX), STATS_HIST_BUCKETS - 1);
    uint64_t h[STATS_HIST_BUCKETS] = {0};
    stats_hist_add(h, 1500);
    stats_hist_add(h, 2047);
    stats_hist_add(h, 2048);
    assert_int_equal(h[10], 2);
    assert_int_equal(h[11], 1);
}

static void test_accumulate_sums_counters_not_gauges(void **state)
{
    (void)state;
    struct filled a, b, sum;
    fill(&a, STATS_SCOPE_VCPU, "v");
    fill(&b, STATS_SCOPE_VCPU, "v");
    fill(&sum, STATS_SCOPE_VM, "v");
    memset(sum.hist, 0, sizeof(sum.hist));
    for (unsigned k = 0; k < STATS_KEY_COUNT; k++)
        if (stats_descs[k].kind == STATS_COUNTER && k != STATS_round &&
            stats_in_scope(k, STATS_SCOPE_VM))
            sum.r.v[k].n = 0;
    a.hist[5] = 2;
    b.hist[5] = 3;
    b.hist[6] = 1;
    a.by[1] = 4;
    b.by[1] = 6;
    stats_accumulate(&sum.r, &a.r, &reasons);
    stats_accumulate(&sum.r, &b.r, &reasons);
    assert_int_equal(sum.r.v[STATS_halt_exits].n, 2 * (1000 + STATS_halt_exits));
    assert_int_equal(sum.r.v[STATS_run_us].n, 2 * (1000 + STATS_run_us));
    unsigned hists = 0, by_reason = 0; /* the test's keys of a kind share one array */
    for (unsigned k = 0; k < STATS_KEY_COUNT; k++) {
        hists += stats_descs[k].kind == STATS_HIST && stats_in_scope(k, STATS_SCOPE_VM);
        by_reason += stats_descs[k].kind == STATS_BY_REASON && stats_in_scope(k, STATS_SCOPE_VM);
    }
    assert_int_equal(sum.hist[5], 5 * hists);
    assert_int_equal(sum.hist[6], hists);
    assert_int_equal(sum.by[1], 10 * by_reason);
    assert_int_equal(sum.r.v[STATS_vcpus].n, 1000 + STATS_vcpus);     /* a gauge stays */
    assert_int_equal(sum.r.v[STATS_busy_us].n, 1000 + STATS_busy_us); /* not a VM key */
}

static uint64_t total_of(const uint64_t v[5])
{
    return v[0] + v[1] + v[2] + v[3] + v[4];
}

static void test_shares_sum_to_100(void **state)
{
    (void)state;
    static const uint64_t cases[][5] = {
        {1, 1, 1, 0, 0}, {2, 1, 0, 0, 0}, {1, 2, 3, 4, 5},       {999, 1, 0, 0, 0},
        {7, 7, 7, 7, 7}, {0, 0, 0, 0, 1}, {1, 1000000, 3, 0, 2},
    };
    for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        unsigned h[5], sum = 0;
        uint64_t total = 0;
        stats_shares(cases[c], 5, h);
        for (unsigned i = 0; i < 5; i++) {
            sum += h[i];
            total += cases[c][i];
            /* Each share is its exact value rounded down or up. */
            uint64_t low = cases[c][i] * 10000 / total_of(cases[c]);
            assert_true(h[i] == low || h[i] == low + 1);
            if (!cases[c][i])
                assert_int_equal(h[i], 0);
        }
        assert_int_equal(sum, 10000);
    }
    unsigned h[3];
    stats_shares((const uint64_t[]){0, 0, 0}, 3, h);
    assert_int_equal(h[0] + h[1] + h[2], 0);
    stats_shares((const uint64_t[]){1, 1, 1}, 3, h);
    assert_int_equal(h[0], 3334); /* the earliest takes the odd hundredth */
    assert_int_equal(h[1], 3333);
}

/* The lines a table printed. */
struct lines {
    char text[64][128];
    unsigned n;
};

static void keep(const char *text, void *ctx)
{
    struct lines *l = ctx;
    assert_true(l->n < 64);
    assert_true(strlen(text) <= STATS_TABLE_WIDTH);
    snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", text);
}

static void test_exit_table(void **state)
{
    (void)state;
    static struct lines l;
    l.n = 0;
    const uint64_t count[4] = {0, 1, 3, 2};
    const uint64_t ns[4] = {0, 1000, 2000, 7000};
    stats_exit_table("VM pingpong", count, ns, &reasons, keep, &l);
    assert_string_equal(l.text[0], "Analyze events for VM pingpong:");
    assert_string_equal(l.text[1], "");
    assert_string_equal(
        l.text[2],
        "             VM-EXIT    Samples  Samples%           Time     Time%      Mean time");
    /* By samples, most first; every column ends where its heading does. */
    assert_string_equal(
        l.text[3],
        "                 hlt          3    50.00%         2.00us    20.00%         0.66us");
    assert_string_equal(
        l.text[4],
        "                  io          2    33.33%         7.00us    70.00%         3.50us");
    assert_string_equal(
        l.text[5],
        "               cpuid          1    16.67%         1.00us    10.00%         1.00us");
    assert_string_equal(l.text[6], "");
    assert_string_equal(l.text[7], "Total Samples: 6, Total events handled time: 10.00us.");
    assert_int_equal(l.n, 8);
    unsigned samples = 0, time = 0;
    for (unsigned i = 3; i < 6; i++) {
        unsigned a, b, c, d;
        assert_int_equal(sscanf(l.text[i], "%*s %*u %u.%u%% %*s %u.%u%%", &a, &b, &c, &d), 4);
        samples += a * 100 + b;
        time += c * 100 + d;
    }
    assert_int_equal(samples, 10000);
    assert_int_equal(time, 10000);
}

static void test_key_table_blocks_fit_the_width(void **state)
{
    (void)state;
    static struct lines l;
    l.n = 0;
    static struct filled f[7];
    struct stats_record recs[7];
    for (unsigned i = 0; i < 7; i++) {
        fill(&f[i], STATS_SCOPE_VCPU, "v");
        f[i].r.v[STATS_vcpu].n = i;
        f[i].r.v[STATS_halt_exits].n = 10 * i;
        recs[i] = f[i].r;
    }
    recs[6].v[STATS_halt_poll_ns].n = 1234567890123ull; /* as wide as a cell allows */
    const enum stats_key rows[] = {STATS_halt_exits, STATS_halt_poll_ns, STATS_spin_detector};
    stats_key_table("vm v", recs, 7, STATS_vcpu, rows, 3, keep, &l);
    /* 7 columns in two blocks: a heading line and three rows each. */
    assert_int_equal(l.n, 1 + 2 * 4);
    assert_string_equal(l.text[0], "vm v");
    assert_string_equal(l.text[1], "                                      vcpu 0        vcpu 1     "
                                   "   vcpu 2        vcpu 3        vcpu 4");
    assert_string_equal(l.text[2], "halt_exits                                 0            10     "
                                   "       20            30            40");
    assert_string_equal(l.text[4], "spin_detector                              v             v     "
                                   "        v             v             v");
    assert_string_equal(l.text[5], "                                      vcpu 5        vcpu 6");
    char want[128]; /* vcpu 5's value is fill()'s: 1000 + the key's index */
    snprintf(want, sizeof(want), "%-30s%14u%14s", "halt_poll_ns", 1000 + STATS_halt_poll_ns,
             " 1234567890123");
    assert_string_equal(l.text[7], want);
}

static void count_line(const char *text, void *ctx)
{
    (*(unsigned *)ctx)++;
    assert_int_equal(text[0], '|');
}

static void test_doc_has_a_row_per_key(void **state)
{
    (void)state;
    unsigned n = 0;
    stats_doc(count_line, &n);
    assert_int_equal(n, STATS_KEY_COUNT + 2);
}

/* docs/stats.md carries the table stats_doc makes, unchanged (make test runs at the top). */
static void doc_line(const char *text, void *ctx)
{
    FILE *f = ctx;
    char got[1024];
    assert_non_null(fgets(got, sizeof(got), f));
    got[strcspn(got, "\n")] = 0;
    assert_string_equal(got, text);
}

static void test_docs_stats_md_is_current(void **state)
{
    (void)state;
    FILE *f = fopen("docs/stats.md", "r");
    assert_non_null(f);
    char line[1024];
    while (fgets(line, sizeof(line), f) && strncmp(line, "| key |", 7))
        ;
    assert_int_equal(strncmp(line, "| key |", 7), 0);
    fseek(f, -(long)strlen(line), SEEK_CUR);
    stats_doc(doc_line, f);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_has_every_key_of_its_scope),
        cmocka_unit_test(test_json_escapes_names),
        cmocka_unit_test(test_json_counters_are_plain_integers),
        cmocka_unit_test(test_every_key_is_described),
        cmocka_unit_test(test_hist_buckets),
        cmocka_unit_test(test_accumulate_sums_counters_not_gauges),
        cmocka_unit_test(test_shares_sum_to_100),
        cmocka_unit_test(test_exit_table),
        cmocka_unit_test(test_key_table_blocks_fit_the_width),
        cmocka_unit_test(test_doc_has_a_row_per_key),
        cmocka_unit_test(test_docs_stats_md_is_current),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

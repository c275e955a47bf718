/* SPDX-License-Identifier: GPL-2.0-only */
#include "stats/table.h"

#include "lib/format.h"
#include "lib/string.h"

#define EVENT_WIDTH 20
#define KEY_WIDTH   30
#define CELL_WIDTH  14
#define CELLS_MAX   ((STATS_TABLE_WIDTH - KEY_WIDTH) / CELL_WIDTH)

/*
 * units split over values in proportion, rounded so that the parts sum to
 * exactly units (largest remainder) when any value is non-zero.
 */
static void apportion(const uint64_t *values, unsigned n, unsigned units, unsigned *parts)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < n; i++)
        total += values[i];
    unsigned given = 0;
    for (unsigned i = 0; i < n; i++) {
        parts[i] = total ? (unsigned)(values[i] * units / total) : 0;
        given += parts[i];
    }
    /*
     * Rounding down lost fewer units than there are values: they go to the
     * largest remainders, one each, the earliest first on a tie.
     */
    for (; total && given < units; given++) {
        unsigned best = n;
        uint64_t best_rem = 0;
        for (unsigned i = 0; i < n; i++) {
            bool bumped = parts[i] != values[i] * units / total;
            uint64_t rem = values[i] * units % total;
            if (!bumped && rem && (best == n || rem > best_rem)) {
                best = i;
                best_rem = rem;
            }
        }
        parts[best]++;
    }
}

void stats_shares(const uint64_t *values, unsigned n, unsigned *hundredths)
{
    apportion(values, n, 10000, hundredths);
}

/* "12.34%" */
static void percent(char *buf, size_t cap, unsigned hundredths)
{
    snprintf(buf, cap, "%u.%02u%%", hundredths / 100, hundredths % 100);
}

/* ns as microseconds with two decimals: "1234.56us" */
static void micros(char *buf, size_t cap, uint64_t ns)
{
    snprintf(buf, cap, "%lu.%02luus", (unsigned long)(ns / 1000), (unsigned long)(ns % 1000 / 10));
}

#define REASONS_MAX 64
#define LINE_MAX    160 /* formatted, then cut at STATS_TABLE_WIDTH */

static void emit(stats_line_sink line, void *ctx, char *buf)
{
    buf[STATS_TABLE_WIDTH] = 0;
    line(buf, ctx);
}

/* Slots with a count, by samples, most first as perf does: an insertion sort of a few. */
static unsigned by_samples(const uint64_t *count, unsigned n, unsigned *order)
{
    unsigned rows = 0;
    for (unsigned r = 0; r < n; r++) {
        if (!count[r])
            continue;
        unsigned at = rows++;
        while (at && count[order[at - 1]] < count[r]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = r;
    }
    return rows;
}

static void exit_row(stats_line_sink line, void *ctx, const char *name, uint64_t count, uint64_t ns,
                     uint64_t max_ns, unsigned count_share, unsigned ns_share)
{
    char buf[LINE_MAX], c1[16], c2[24], c3[16], c4[24], c5[24];
    percent(c1, sizeof(c1), count_share);
    micros(c2, sizeof(c2), ns);
    percent(c3, sizeof(c3), ns_share);
    micros(c4, sizeof(c4), ns / count);
    micros(c5, sizeof(c5), max_ns);
    snprintf(buf, sizeof(buf), "%*s %10lu %9s %14s %9s %14s %14s", EVENT_WIDTH, name,
             (unsigned long)count, c1, c2, c3, c4, c5);
    emit(line, ctx, buf);
}

/*
 * The breakdown's rows under its reason's: the reason's shares of the
 * table split over its slots, so that they add up to the reason's.
 */
static void breakdown_rows(const struct stats_exit_breakdown *sub, const char *reason,
                           unsigned count_share, unsigned ns_share, stats_line_sink line, void *ctx)
{
    unsigned n = sub->slots->count < REASONS_MAX ? sub->slots->count : REASONS_MAX;
    unsigned order[REASONS_MAX], counts[REASONS_MAX], times[REASONS_MAX];
    unsigned rows = by_samples(sub->count, n, order);
    apportion(sub->count, n, count_share, counts);
    apportion(sub->ns, n, ns_share, times);
    char name[EVENT_WIDTH + 1];
    for (unsigned i = 0; i < rows; i++) {
        unsigned s = order[i];
        snprintf(name, sizeof(name), "%s:%s", reason, sub->slots->name(s));
        exit_row(line, ctx, name, sub->count[s], sub->ns[s], sub->max_ns[s], counts[s], times[s]);
    }
}

void stats_exit_table(const char *title, const uint64_t *count, const uint64_t *ns,
                      const uint64_t *max_ns, const struct stats_reasons *reasons,
                      const struct stats_exit_breakdown *sub, stats_line_sink line, void *ctx)
{
    char buf[LINE_MAX], c2[24];
    unsigned n = reasons->count < REASONS_MAX ? reasons->count : REASONS_MAX;
    unsigned sample_share[REASONS_MAX], time_share[REASONS_MAX], order[REASONS_MAX];
    uint64_t samples = 0, time = 0;
    stats_shares(count, n, sample_share);
    stats_shares(ns, n, time_share);
    for (unsigned r = 0; r < n; r++) {
        samples += count[r];
        time += ns[r];
    }
    unsigned rows = by_samples(count, n, order);
    snprintf(buf, sizeof(buf), "Analyze events for %s:", title);
    emit(line, ctx, buf);
    line("", ctx);
    snprintf(buf, sizeof(buf), "%*s %10s %9s %14s %9s %14s %14s", EVENT_WIDTH, "VM-EXIT", "Samples",
             "Samples%", "Time", "Time%", "Mean time", "Max time");
    emit(line, ctx, buf);
    for (unsigned i = 0; i < rows; i++) {
        unsigned r = order[i];
        exit_row(line, ctx, reasons->name(r), count[r], ns[r], max_ns[r], sample_share[r],
                 time_share[r]);
        if (sub && sub->reason == r)
            breakdown_rows(sub, reasons->name(r), sample_share[r], time_share[r], line, ctx);
    }
    line("", ctx);
    micros(c2, sizeof(c2), time);
    snprintf(buf, sizeof(buf), "Total Samples: %lu, Total events handled time: %s.",
             (unsigned long)samples, c2);
    emit(line, ctx, buf);
}

static void cell(char *buf, size_t cap, const struct stats_desc *d, uint64_t v)
{
    if (d->kind == STATS_STRING)
        snprintf(buf, cap, "%s", v ? (const char *)(uintptr_t)v : "");
    else
        snprintf(buf, cap, "%lu", (unsigned long)v);
}

void stats_key_table(const char *title, const struct stats_record *recs, unsigned n,
                     const char *column, stats_line_sink line, void *ctx)
{
    char buf[LINE_MAX], head[CELL_WIDTH + 1], val[CELL_WIDTH + 1];
    line(title, ctx);
    if (!n)
        return;
    const struct stats_table *t = recs[0].table;
    unsigned col;
    const struct stats_desc *heading = stats_find(t, column, &col);
    for (unsigned first = 0; first < n; first += CELLS_MAX) {
        unsigned last = first + CELLS_MAX < n ? first + CELLS_MAX : n;
        size_t len = (size_t)snprintf(buf, sizeof(buf), "%-*s", KEY_WIDTH, "");
        for (unsigned i = first; i < last; i++) {
            snprintf(head, sizeof(head), "%s %lu", column,
                     heading ? (unsigned long)recs[i].slot[col] : (unsigned long)i);
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %*s", CELL_WIDTH - 1, head);
        }
        emit(line, ctx, buf);
        unsigned slot = 0;
        for (unsigned k = 0; k < t->count; slot += stats_row_slots(t, &t->rows[k]), k++) {
            const struct stats_desc *d = &t->rows[k];
            if (!(d->flags & STATS_F_TABLE) || !stats_in_scope(d, recs[0].scope))
                continue;
            len = (size_t)snprintf(buf, sizeof(buf), "%-*s", KEY_WIDTH, d->name);
            for (unsigned i = first; i < last; i++) {
                cell(val, sizeof(val), d, recs[i].slot[slot]);
                len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %*s", CELL_WIDTH - 1, val);
            }
            emit(line, ctx, buf);
        }
    }
}

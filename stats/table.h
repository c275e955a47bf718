/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The human tables on COM1, at most STATS_TABLE_WIDTH columns wide: exits
 * laid out as `perf kvm stat report` does, and transposed tables of
 * statistics (one row per key, one column per vCPU or CPU) for the
 * scheduler counters under their KVM names. Pure: each line goes to a sink.
 */
#ifndef POLLUX_STATS_TABLE_H
#define POLLUX_STATS_TABLE_H

#include "stats/stats.h"

#define STATS_TABLE_WIDTH 100

typedef void (*stats_line_sink)(const char *text, void *ctx);

/*
 * Each value's share of total in hundredths of a percent, rounded so that
 * they sum to exactly 10000 (largest remainder) when total is their sum and
 * non-zero.
 */
void stats_shares(const uint64_t *values, unsigned n, unsigned *hundredths);

/* One exit reason's counts, times and longest by slot (npf exits by device), for its sub-rows. */
struct stats_exit_breakdown {
    unsigned reason;
    const uint64_t *count, *ns, *max_ns; /* indexed by slot */
    const struct stats_reasons *slots;
};

/*
 * The exit table of one VM (or all): a row per exit reason that happened,
 * by samples, then the totals. count, ns and max_ns (the longest one) are
 * indexed by reason. sub
 * (NULL: none) adds a row `reason:slot` per slot that happened under its
 * reason's row, by samples, its shares of the table's totals.
 */
void stats_exit_table(const char *title, const uint64_t *count, const uint64_t *ns,
                      const uint64_t *max_ns, const struct stats_reasons *reasons,
                      const struct stats_exit_breakdown *sub, stats_line_sink line, void *ctx);

/*
 * The rows marked STATS_F_TABLE of n records of one table and scope side by
 * side, a column per record headed by its key `column` (vcpu or cpu), as
 * many blocks as the width needs.
 */
void stats_key_table(const char *title, const struct stats_record *recs, unsigned n,
                     const char *column, stats_line_sink line, void *ctx);

#endif

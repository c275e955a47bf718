/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The statistics model: every number pollux reports about its vCPUs, VMs
 * and CPUs, described by tables of descriptors, as KVM's binary-stats
 * descriptors are. A row says a key's name, kind, unit, scopes and meaning,
 * and binds it to its field with offsetof (or to a small function of the
 * field: cycles shown as microseconds, a sum of two exit counters), so that
 * adding a statistic is one row. The tables belong to the code that owns the
 * structs: vmm/vcpu/vcpu_stats.c over a vCPU, sched/cpu_stats.c over a host CPU,
 * each device's over its state (vmm/dev/device.h: the `devices` records),
 * and this file's own (each record's head, and the global record); they are
 * registered at boot (stats/report.h) and read with a base pointer. The
 * `@stats` JSON records, the human tables on COM1, `@vm_stop` and
 * docs/stats.md are all produced from them.
 *
 * A record is one scope's values read from a base through a table, a
 * snapshot that is summed and printed later. This file and stats/table.c are
 * pure (no hypervisor state), so the host unit tests cover them.
 */
#ifndef POLLUX_STATS_STATS_H
#define POLLUX_STATS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/json.h"

#define STATS_HIST_BUCKETS 40 /* log2 histograms: bucket b counts [2^b, 2^(b+1)) ns */

enum stats_kind {
    STATS_COUNTER,   /* only grows */
    STATS_GAUGE,     /* a current value */
    STATS_HIST,      /* log2 histogram of ns: an object of its non-zero buckets */
    STATS_BY_REASON, /* counters per named slot (exit reasons, or the row's own
                        .slots): an object of the non-zero ones */
    STATS_STRING,
    /* In events (@vm_stop) only: */
    STATS_INT,    /* a signed integer */
    STATS_HEX,    /* "0x..." */
    STATS_OBJECT, /* a nested object: the rows of .sub over the field */
    STATS_INLINE, /* the rows of .sub over the field, as this table's own (a device's transport) */
    STATS_REF,    /* the row of .sub with this key, over the same base, printed as there */
};

enum stats_unit {
    STATS_UNIT_NONE,
    STATS_UNIT_NS,
    STATS_UNIT_US,
    STATS_UNIT_CYCLES, /* of the TSC */
};

enum stats_scope {
    STATS_SCOPE_VCPU,
    STATS_SCOPE_VM,
    STATS_SCOPE_CPU,
    STATS_SCOPE_GLOBAL,
    STATS_SCOPE_DEVICES, /* one per VM: an object per device (vmm/dev/device.h) */
    STATS_SCOPE_COUNT
};

#define S_VCPU    (1u << STATS_SCOPE_VCPU)
#define S_VM      (1u << STATS_SCOPE_VM)
#define S_CPU     (1u << STATS_SCOPE_CPU)
#define S_GLOBAL  (1u << STATS_SCOPE_GLOBAL)
#define S_DEVICES (1u << STATS_SCOPE_DEVICES)
#define S_ALL     (S_VCPU | S_VM | S_CPU | S_GLOBAL | S_DEVICES)
#define S_GUEST   (S_VCPU | S_VM) /* per vCPU, and their sum per VM */

/* The names of the slots of a STATS_BY_REASON value (exit reasons, or a row's own). */
struct stats_reasons {
    unsigned count;
    const char *(*name)(unsigned reason);
};

/* A number from a row's field: element i of an array, i = 0 for a scalar. */
typedef uint64_t (*stats_number_fn)(const void *field, unsigned i);
typedef const char *(*stats_string_fn)(const void *field);
typedef bool (*stats_present_fn)(const void *base);

struct stats_table;

struct stats_desc {
    const char *name;
    enum stats_kind kind;
    enum stats_unit unit;
    unsigned scopes; /* S_* bits; 0 in an event's table */
    unsigned flags;  /* STATS_F_* */
    /* NULL: the key is described by an earlier table's row of the same name (docs/stats.md) */
    const char *doc;
    size_t offset; /* the field in the table's struct */
    size_t size;   /* its size: a number of 1, 2, 4 or 8 bytes, an array of uint64_t, ... */
    stats_number_fn number;        /* a number derived from the field; NULL: the field's value */
    stats_string_fn string;        /* a string derived from the field; NULL: the field */
    stats_present_fn present;      /* events: the key only where it says so */
    const struct stats_table *sub; /* STATS_OBJECT */
    const struct stats_reasons *slots; /* STATS_BY_REASON: its slots; NULL: the table's reasons */
};

#define STATS_F_TABLE 1u /* a row of the human tables (stats/table.h) */
#define STATS_F_CHARS 2u /* a string field that is a char array, not a pointer */
#define STATS_F_MAX   4u /* a largest value: summed records take the largest, not the sum */

struct stats_table {
    const struct stats_desc *rows;
    unsigned count;
    const struct stats_reasons *reasons; /* the slots of its STATS_BY_REASON rows */
};

/*
 * A row: key, kind and unit without their prefixes (COUNTER, US), bound to
 * field (a member designator of type, such as stats.halts or
 * se.cycles[SCHED_RUNNING]); what follows the meaning are designators
 * (.number = stats_cycles_us, .flags = STATS_F_TABLE).
 */
#define STATS_ROW(key, kind_, unit_, scopes_, type, field, doc_, ...)                              \
    {                                                                                              \
        .name = #key, .kind = STATS_##kind_, .unit = STATS_UNIT_##unit_, .scopes = scopes_,        \
        .doc = doc_, .offset = offsetof(type, field), .size = sizeof(((type *)0)->field),          \
        __VA_ARGS__                                                                                \
    }
/* A row derived from the whole struct: its function gets the base. */
#define STATS_FN(key, kind_, unit_, scopes_, doc_, ...)                                            \
    {                                                                                              \
        .name = #key, .kind = STATS_##kind_, .unit = STATS_UNIT_##unit_, .scopes = scopes_,        \
        .doc = doc_, __VA_ARGS__                                                                   \
    }
/* An event's key that another table already has: that table's row, not a second one. */
#define STATS_REF(key, table_)                                                                     \
    {                                                                                              \
        .name = #key, .kind = STATS_REF, .sub = table_                                             \
    }
#define STATS_TABLE(rows_, reasons_)                                                               \
    {                                                                                              \
        rows_, sizeof(rows_) / sizeof((rows_)[0]), reasons_                                        \
    }

/* Derived numbers any table may use: a field (or array element) of TSC cycles as us or ns. */
uint64_t stats_cycles_us(const void *field, unsigned i);
uint64_t stats_cycles_ns(const void *field, unsigned i);

extern const char *const stats_scope_names[STATS_SCOPE_COUNT];

/* Every record starts with these, from stats_head_table. */
struct stats_head {
    const char *scope;
    uint64_t round, t;
};
extern const struct stats_table stats_head_table;

/* The global record's struct and rows (filled by stats/report.c). */
struct stats_global {
    uint64_t cpus, vms_running, vms_stopped, console_bytes, console_full_waits;
};
extern const struct stats_table stats_global_table;

#define STATS_SLOTS_MAX 384

/*
 * A snapshot of one base through a table: each row's values in row order
 * (a number, a string's pointer, or an array of STATS_HIST_BUCKETS or
 * reasons->count numbers), every row's whatever the scope.
 */
struct stats_record {
    struct stats_head head;
    enum stats_scope scope;
    const struct stats_table *table;
    uint64_t slot[STATS_SLOTS_MAX];
};

/* A STATS_BY_REASON row's slot names: its own, else the table's (NULL if neither). */
static inline const struct stats_reasons *stats_row_reasons(const struct stats_table *t,
                                                            const struct stats_desc *d)
{
    return d->slots ? d->slots : t->reasons;
}

/* The slots a row takes in a record (0 for STATS_OBJECT); the table's total. */
unsigned stats_row_slots(const struct stats_table *t, const struct stats_desc *d);
unsigned stats_table_slots(const struct stats_table *t);

static inline bool stats_in_scope(const struct stats_desc *d, enum stats_scope s)
{
    return d->scopes & (1u << s);
}

/* The row named name and its first slot; NULL if the table has none. */
const struct stats_desc *stats_find(const struct stats_table *t, const char *name, unsigned *slot);

/* The bucket of a log2 histogram that counts ns. */
static inline unsigned stats_hist_bucket(uint64_t ns)
{
    unsigned b = 63 - (unsigned)__builtin_clzll(ns | 1);
    return b < STATS_HIST_BUCKETS ? b : STATS_HIST_BUCKETS - 1;
}

static inline void stats_hist_add(uint64_t hist[STATS_HIST_BUCKETS], uint64_t ns)
{
    hist[stats_hist_bucket(ns)]++;
}

/* Read base through t into r (fields that other CPUs change are read once, relaxed). */
void stats_read(struct stats_record *r, enum stats_scope scope, const struct stats_table *t,
                const void *base);

/*
 * A record of scope `scope` summing recs[0..n) (n >= 1, one table): the
 * counters, histograms and by-reason counters added up (the largest, slot by
 * slot, for a STATS_F_MAX row), the other values recs[0]'s (a VM's own
 * values, the same in each of its vCPUs' records).
 */
void stats_sum(struct stats_record *dst, enum stats_scope scope, const struct stats_record *recs,
               unsigned n);

/*
 * The record as one JSON object (the body of an @stats line): its head,
 * then every key of its scope. Returns the text in buf (see lib/json.h on
 * overflow).
 */
const char *stats_json(const struct stats_record *r, char *buf, size_t cap);

/* An event's keys: every row of t over base (where .present allows), into j. */
void stats_event_json(struct json *j, const struct stats_table *t, const void *base);

/*
 * The Markdown table of docs/stats.md from the tables in order, line by
 * line: a row per key, at its first row, with the scopes of all its rows.
 */
void stats_doc(const struct stats_table *const *tables, unsigned n,
               void (*line)(const char *text, void *ctx), void *ctx);

#endif

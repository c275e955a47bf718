/* SPDX-License-Identifier: GPL-2.0-only */
#include "stats/stats.h"

#include "arch/x86/tsc.h"
#include "lib/format.h"
#include "lib/string.h"

const char *const stats_scope_names[STATS_SCOPE_COUNT] = {
    [STATS_SCOPE_VCPU] = "vcpu",     [STATS_SCOPE_VM] = "vm",           [STATS_SCOPE_CPU] = "cpu",
    [STATS_SCOPE_GLOBAL] = "global", [STATS_SCOPE_DEVICES] = "devices",
};

static const struct stats_desc head_rows[] = {
    STATS_ROW(scope, STRING, NONE, S_ALL, struct stats_head, scope,
              "`vcpu`, `vm`, `cpu`, `global` or `devices`"),
    STATS_ROW(round, COUNTER, NONE, S_ALL, struct stats_head, round,
              "the output round: every record of one round has it"),
    STATS_ROW(t, GAUGE, NS, S_ALL, struct stats_head, t, "when the round was taken, ns since boot"),
};
const struct stats_table stats_head_table = STATS_TABLE(head_rows, 0);

static const struct stats_desc global_rows[] = {
    STATS_ROW(cpus, GAUGE, NONE, S_GLOBAL, struct stats_global, cpus, "CPUs online"),
    STATS_ROW(vms_running, GAUGE, NONE, S_GLOBAL, struct stats_global, vms_running,
              "VMs started and not yet stopped"),
    STATS_ROW(vms_stopped, COUNTER, NONE, S_GLOBAL, struct stats_global, vms_stopped,
              "VMs stopped"),
    STATS_ROW(console_bytes, COUNTER, NONE, S_GLOBAL, struct stats_global, console_bytes,
              "bytes written to the console"),
    STATS_ROW(console_full_waits, COUNTER, NONE, S_GLOBAL, struct stats_global, console_full_waits,
              "writes that found the console buffer full and drained it themselves"),
};
const struct stats_table stats_global_table = STATS_TABLE(global_rows, 0);

/* Fields that other CPUs change: read once, without tearing. */
static uint64_t load(const void *p, size_t size)
{
    switch (size) {
    case 1:
        return __atomic_load_n((const uint8_t *)p, __ATOMIC_RELAXED);
    case 2:
        return __atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED);
    case 4:
        return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
    default:
        return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
    }
}

uint64_t stats_cycles_us(const void *field, unsigned i)
{
    return tsc_to_ns(load((const uint64_t *)field + i, sizeof(uint64_t))) / 1000;
}

uint64_t stats_cycles_ns(const void *field, unsigned i)
{
    return tsc_to_ns(load((const uint64_t *)field + i, sizeof(uint64_t)));
}

static bool is_array(enum stats_kind k)
{
    return k == STATS_HIST || k == STATS_BY_REASON;
}

static bool is_summed(enum stats_kind k)
{
    return k == STATS_COUNTER || is_array(k);
}

unsigned stats_row_slots(const struct stats_table *t, const struct stats_desc *d)
{
    switch (d->kind) {
    case STATS_HIST:
        return STATS_HIST_BUCKETS;
    case STATS_BY_REASON: {
        const struct stats_reasons *names = stats_row_reasons(t, d);
        return names ? names->count : 0;
    }
    case STATS_OBJECT:
    case STATS_INLINE:
        return 0;
    default:
        return 1;
    }
}

unsigned stats_table_slots(const struct stats_table *t)
{
    unsigned n = 0;
    for (unsigned k = 0; k < t->count; k++)
        n += stats_row_slots(t, &t->rows[k]);
    return n;
}

const struct stats_desc *stats_find(const struct stats_table *t, const char *name, unsigned *slot)
{
    unsigned pos = 0;
    for (unsigned k = 0; k < t->count; k++) {
        if (!strcmp(t->rows[k].name, name)) {
            *slot = pos;
            return &t->rows[k];
        }
        pos += stats_row_slots(t, &t->rows[k]);
    }
    return 0;
}

/* A row's values (stats_row_slots of them) from base. */
static void read_row(const struct stats_table *t, const struct stats_desc *d, const void *base,
                     uint64_t *v)
{
    const void *field = (const char *)base + d->offset;
    if (d->kind == STATS_STRING) {
        const char *s = d->string                  ? d->string(field)
                        : d->flags & STATS_F_CHARS ? (const char *)field
                                                   : *(const char *const *)field;
        v[0] = (uintptr_t)s;
        return;
    }
    unsigned n = stats_row_slots(t, d);
    for (unsigned i = 0; i < n; i++) {
        if (d->number)
            v[i] = d->number(field, i);
        else if (is_array(d->kind))
            v[i] = load((const uint64_t *)field + i, sizeof(uint64_t));
        else
            v[i] = load(field, d->size);
    }
}

static void emit_value(struct json *j, const struct stats_table *t, const struct stats_desc *d,
                       const uint64_t *v)
{
    char key[8];
    switch (d->kind) {
    case STATS_COUNTER:
    case STATS_GAUGE:
        json_u64(j, d->name, v[0]);
        break;
    case STATS_INT:
        json_i64(j, d->name, (int64_t)v[0]);
        break;
    case STATS_HEX:
        json_hex(j, d->name, v[0]);
        break;
    case STATS_STRING: {
        const char *s = (const char *)(uintptr_t)v[0];
        json_str(j, d->name, s ? s : "");
        break;
    }
    case STATS_HIST:
        json_object(j, d->name);
        for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++) {
            if (v[b]) {
                snprintf(key, sizeof(key), "%u", b);
                json_u64(j, key, v[b]);
            }
        }
        json_close(j);
        break;
    case STATS_BY_REASON: {
        const struct stats_reasons *names = stats_row_reasons(t, d);
        json_object(j, d->name);
        for (unsigned i = 0; i < names->count; i++)
            if (v[i])
                json_u64(j, names->name(i), v[i]);
        json_close(j);
        break;
    }
    case STATS_OBJECT:
    case STATS_INLINE:
    case STATS_REF: /* stats_event_json prints these through their tables */
        break;
    }
}

void stats_read(struct stats_record *r, enum stats_scope scope, const struct stats_table *t,
                const void *base)
{
    r->head = (struct stats_head){stats_scope_names[scope], 0, 0};
    r->scope = scope;
    r->table = t;
    unsigned pos = 0;
    for (unsigned k = 0; k < t->count; k++) {
        unsigned n = stats_row_slots(t, &t->rows[k]);
        if (pos + n > STATS_SLOTS_MAX)
            break; /* the unit test keeps every table within STATS_SLOTS_MAX */
        read_row(t, &t->rows[k], base, r->slot + pos);
        pos += n;
    }
}

void stats_sum(struct stats_record *dst, enum stats_scope scope, const struct stats_record *recs,
               unsigned n)
{
    *dst = recs[0];
    dst->scope = scope;
    dst->head.scope = stats_scope_names[scope];
    const struct stats_table *t = dst->table;
    for (unsigned i = 1; i < n; i++) {
        unsigned pos = 0;
        for (unsigned k = 0; k < t->count; k++) {
            const struct stats_desc *d = &t->rows[k];
            unsigned slots = stats_row_slots(t, d);
            for (unsigned s = 0; is_summed(d->kind) && s < slots && pos + s < STATS_SLOTS_MAX;
                 s++) {
                uint64_t *to = &dst->slot[pos + s], v = recs[i].slot[pos + s];
                if (!(d->flags & STATS_F_MAX))
                    *to += v;
                else if (v > *to)
                    *to = v;
            }
            pos += slots;
        }
    }
}

const char *stats_json(const struct stats_record *r, char *buf, size_t cap)
{
    struct json j;
    json_begin(&j, buf, cap);
    stats_event_json(&j, &stats_head_table, &r->head);
    const struct stats_table *t = r->table;
    unsigned pos = 0;
    for (unsigned k = 0; k < t->count; k++) {
        const struct stats_desc *d = &t->rows[k];
        unsigned n = stats_row_slots(t, d);
        if (pos + n > STATS_SLOTS_MAX)
            break;
        if (stats_in_scope(d, r->scope))
            emit_value(&j, t, d, r->slot + pos);
        pos += n;
    }
    return json_end(&j);
}

#define ROW_VALUES_MAX 64

/* The row of t named name; NULL if none (the unit test's tables have every one they name). */
static const struct stats_desc *row_named(const struct stats_table *t, const char *name)
{
    for (unsigned k = 0; k < t->count; k++)
        if (!strcmp(t->rows[k].name, name))
            return &t->rows[k];
    return 0;
}

void stats_event_json(struct json *j, const struct stats_table *t, const void *base)
{
    uint64_t v[ROW_VALUES_MAX];
    for (unsigned k = 0; k < t->count; k++) {
        const struct stats_desc *d = &t->rows[k];
        const struct stats_table *from = t;
        if (d->kind == STATS_REF) {
            from = d->sub;
            if (!(d = row_named(from, d->name)))
                continue;
        }
        if (d->present && !d->present(base))
            continue;
        if (d->kind == STATS_INLINE) {
            stats_event_json(j, d->sub, (const char *)base + d->offset);
            continue;
        }
        if (d->kind == STATS_OBJECT) {
            json_object(j, d->name);
            stats_event_json(j, d->sub, (const char *)base + d->offset);
            json_close(j);
            continue;
        }
        if (stats_row_slots(from, d) > ROW_VALUES_MAX)
            continue; /* no table has such a row (the unit test) */
        read_row(from, d, base, v);
        emit_value(j, from, d, v);
    }
}

static const char *const kind_names[] = {
    [STATS_COUNTER] = "counter",
    [STATS_GAUGE] = "gauge",
    [STATS_HIST] = "histogram",
    [STATS_BY_REASON] = "by reason",
    [STATS_STRING] = "string",
    [STATS_INT] = "integer",
    [STATS_HEX] = "hex",
    [STATS_OBJECT] = "object",
    [STATS_REF] = "another table's row",
};
static const char *const unit_names[] = {
    [STATS_UNIT_NONE] = "",
    [STATS_UNIT_NS] = "ns",
    [STATS_UNIT_US] = "us",
    [STATS_UNIT_CYCLES] = "cycles",
};

/* The scopes of every row named name, in all the tables. */
static unsigned scopes_of(const struct stats_table *const *tables, unsigned n, const char *name)
{
    unsigned scopes = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; k < tables[i]->count; k++)
            if (!strcmp(tables[i]->rows[k].name, name))
                scopes |= tables[i]->rows[k].scopes;
    return scopes;
}

void stats_doc(const struct stats_table *const *tables, unsigned n,
               void (*line)(const char *text, void *ctx), void *ctx)
{
    char buf[512];
    line("| key | kind | unit | scopes | meaning |", ctx);
    line("|---|---|---|---|---|", ctx);
    for (unsigned i = 0; i < n; i++) {
        for (unsigned k = 0; k < tables[i]->count; k++) {
            const struct stats_desc *d = &tables[i]->rows[k];
            if (!d->doc)
                continue;
            unsigned in = scopes_of(tables, n, d->name);
            char scopes[48] = "";
            size_t len = 0;
            for (unsigned s = 0; s < STATS_SCOPE_COUNT; s++)
                if (in & (1u << s))
                    len += (size_t)snprintf(scopes + len, sizeof(scopes) - len, "%s%s",
                                            len ? ", " : "", stats_scope_names[s]);
            const char *kind = kind_names[d->kind];
            if (d->flags & STATS_F_MAX)
                kind = d->kind == STATS_BY_REASON ? "largest by reason" : "largest";
            snprintf(buf, sizeof(buf), "| `%s` | %s | %s | %s | %s |", d->name, kind,
                     unit_names[d->unit], scopes, d->doc);
            line(buf, ctx);
        }
    }
}

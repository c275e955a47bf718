#include "stats/stats.h"

#include "lib/format.h"
#include "lib/json.h"

const struct stats_desc stats_descs[STATS_KEY_COUNT] = {
#define STATS_DESC(key, kind, unit, scopes, doc) {#key, kind, STATS_UNIT_##unit, scopes, doc},
    STATS_KEYS(STATS_DESC)
#undef STATS_DESC
};

const char *const stats_scope_names[STATS_SCOPE_COUNT] = {
    [STATS_SCOPE_VCPU] = "vcpu",
    [STATS_SCOPE_VM] = "vm",
    [STATS_SCOPE_CPU] = "cpu",
    [STATS_SCOPE_GLOBAL] = "global",
};

void stats_accumulate(struct stats_record *dst, const struct stats_record *src,
                      const struct stats_reasons *reasons)
{
    for (unsigned k = 0; k < STATS_KEY_COUNT; k++) {
        if (!stats_in_scope((enum stats_key)k, dst->scope) || k == STATS_round)
            continue;
        switch (stats_descs[k].kind) {
        case STATS_COUNTER:
            dst->v[k].n += src->v[k].n;
            break;
        case STATS_HIST:
            for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++)
                ((uint64_t *)dst->v[k].hist)[b] += src->v[k].hist[b];
            break;
        case STATS_BY_REASON:
            for (unsigned r = 0; r < reasons->count; r++)
                ((uint64_t *)dst->v[k].by)[r] += src->v[k].by[r];
            break;
        case STATS_GAUGE:
        case STATS_STRING:
            break;
        }
    }
}

const char *stats_json(const struct stats_record *r, const struct stats_reasons *reasons, char *buf,
                       size_t cap)
{
    struct json j;
    json_begin(&j, buf, cap);
    for (unsigned k = 0; k < STATS_KEY_COUNT; k++) {
        if (!stats_in_scope((enum stats_key)k, r->scope))
            continue;
        const char *name = stats_descs[k].name;
        const union stats_value *v = &r->v[k];
        char key[8];
        switch (stats_descs[k].kind) {
        case STATS_COUNTER:
        case STATS_GAUGE:
            json_u64(&j, name, v->n);
            break;
        case STATS_STRING:
            json_str(&j, name, k == STATS_scope ? stats_scope_names[r->scope] : v->s ? v->s : "");
            break;
        case STATS_HIST:
            json_object(&j, name);
            for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++) {
                if (v->hist[b]) {
                    snprintf(key, sizeof(key), "%u", b);
                    json_u64(&j, key, v->hist[b]);
                }
            }
            json_close(&j);
            break;
        case STATS_BY_REASON:
            json_object(&j, name);
            for (unsigned i = 0; i < reasons->count; i++)
                if (v->by[i])
                    json_u64(&j, reasons->name(i), v->by[i]);
            json_close(&j);
            break;
        }
    }
    return json_end(&j);
}

static const char *const kind_names[] = {
    [STATS_COUNTER] = "counter",     [STATS_GAUGE] = "gauge",   [STATS_HIST] = "histogram",
    [STATS_BY_REASON] = "by reason", [STATS_STRING] = "string",
};
static const char *const unit_names[] = {
    [STATS_UNIT_NONE] = "",
    [STATS_UNIT_NS] = "ns",
    [STATS_UNIT_US] = "us",
};

void stats_doc(void (*line)(const char *text, void *ctx), void *ctx)
{
    char buf[512];
    line("| key | kind | unit | scopes | meaning |", ctx);
    line("|---|---|---|---|---|", ctx);
    for (unsigned k = 0; k < STATS_KEY_COUNT; k++) {
        const struct stats_desc *d = &stats_descs[k];
        char scopes[32] = "";
        size_t n = 0;
        for (unsigned s = 0; s < STATS_SCOPE_COUNT; s++)
            if (d->scopes & (1u << s))
                n += (size_t)snprintf(scopes + n, sizeof(scopes) - n, "%s%s", n ? ", " : "",
                                      stats_scope_names[s]);
        snprintf(buf, sizeof(buf), "| `%s` | %s | %s | %s | %s |", d->name, kind_names[d->kind],
                 unit_names[d->unit], scopes, d->doc);
        line(buf, ctx);
    }
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "lib/options.h"

#include <stdarg.h>

#include "lib/format.h"
#include "lib/string.h"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

bool cmdline_next(const char **cursor, struct token *key, struct token *val)
{
    const char *p = *cursor;

    if (!p)
        return false;
    while (is_space(*p))
        p++;
    if (*p == '\0') {
        *cursor = p;
        return false;
    }

    key->s = p;
    while (*p != '\0' && *p != '=' && !is_space(*p))
        p++;
    key->len = (size_t)(p - key->s);

    val->s = NULL;
    val->len = 0;
    if (*p == '=') {
        val->s = ++p;
        while (*p != '\0' && !is_space(*p))
            p++;
        val->len = (size_t)(p - val->s);
    }
    *cursor = p;
    return true;
}

bool token_eq(struct token t, const char *s)
{
    return strlen(s) == t.len && (t.len == 0 || memcmp(t.s, s, t.len) == 0);
}

static int digit_value(char c, unsigned base)
{
    int d;

    if (c >= '0' && c <= '9')
        d = c - '0';
    else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
    else
        return -1;
    return d < (int)base ? d : -1;
}

bool parse_u64(struct token t, uint64_t *out)
{
    unsigned base = 10;
    uint64_t n = 0;
    size_t i = 0;

    if (t.len >= 2 && t.s[0] == '0' && (t.s[1] == 'x' || t.s[1] == 'X')) {
        base = 16;
        i = 2;
    }
    if (i == t.len)
        return false;
    for (; i < t.len; i++) {
        int d = digit_value(t.s[i], base);

        if (d < 0 || n > (UINT64_MAX - (uint64_t)d) / base)
            return false;
        n = n * base + (uint64_t)d;
    }
    *out = n;
    return true;
}

bool parse_size(struct token t, uint64_t *out)
{
    unsigned shift = 0;
    uint64_t n;

    if (t.len > 0) {
        switch (t.s[t.len - 1]) {
        case 'K':
        case 'k':
            shift = 10;
            break;
        case 'M':
        case 'm':
            shift = 20;
            break;
        case 'G':
        case 'g':
            shift = 30;
            break;
        }
    }
    if (shift)
        t.len--;
    if (!parse_u64(t, &n) || n > (UINT64_MAX >> shift))
        return false;
    *out = n << shift;
    return true;
}

static const char *const bool_true[] = {"1", "yes", "on", "true"};
static const char *const bool_false[] = {"0", "no", "off", "false"};

bool parse_bool(struct token t, bool *out)
{
    for (size_t i = 0; i < sizeof(bool_true) / sizeof(bool_true[0]); i++) {
        if (token_eq(t, bool_true[i])) {
            *out = true;
            return true;
        }
        if (token_eq(t, bool_false[i])) {
            *out = false;
            return true;
        }
    }
    return false;
}

/*
 * Reasons that quote the option's limits are formatted here. The callback
 * runs before the next option is looked at, so one buffer is enough.
 */
static char reason_buf[160];

const char *option_reason(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason_buf, sizeof(reason_buf), fmt, ap);
    va_end(ap);
    return reason_buf;
}

static const char *range_reason(const struct option *o)
{
    return option_reason("out of range [%llu, %llu]", (unsigned long long)o->min,
                         (unsigned long long)o->max);
}

static const char *enum_reason(const struct option *o, const char *lead)
{
    size_t used = (size_t)snprintf(reason_buf, sizeof(reason_buf), "%s", lead);

    /* snprintf returns the untruncated length, so a full buffer ends the loop. */
    for (size_t i = 0; o->choices[i] && used < sizeof(reason_buf); i++)
        used += (size_t)snprintf(reason_buf + used, sizeof(reason_buf) - used, "%s%s",
                                 i ? ", " : " ", o->choices[i]);
    return reason_buf;
}

static int choice_index(const struct option *o, struct token val)
{
    for (int i = 0; o->choices[i]; i++) {
        if (token_eq(val, o->choices[i]))
            return i;
    }
    return -1;
}

/* Every item must be a choice; nothing is stored unless all are. */
static const char *apply_flags(const struct option *o, struct token val)
{
    unsigned mask = 0;
    struct token item = {val.s, 0};
    for (const char *p = val.s; p <= val.s + val.len; p++) {
        if (p < val.s + val.len && *p != ',') {
            item.len++;
            continue;
        }
        int i = choice_index(o, item);
        if (i < 0)
            return enum_reason(o, "expected a comma-separated list of");
        mask |= 1u << i;
        item = (struct token){p + 1, 0};
    }
    *(unsigned *)o->value |= mask;
    return NULL;
}

/* Returns NULL when the value was stored, else why it was rejected. */
static const char *apply(const struct option *o, struct token word, struct token val)
{
    uint64_t n;
    bool b;

    switch (o->type) {
    case OPT_UINT:
    case OPT_NUMBER:
    case OPT_COUNT:
        if (!(o->type == OPT_UINT ? parse_size(val, &n) : parse_u64(val, &n)))
            return "not a number";
        if (n < o->min || n > o->max)
            return range_reason(o);
        if (o->type == OPT_COUNT)
            *(unsigned *)o->value = (unsigned)n;
        else
            *(uint64_t *)o->value = n;
        return NULL;
    case OPT_INT: {
        bool minus = val.len && val.s[0] == '-';
        struct token digits = {val.s + minus, val.len - minus};
        if (!parse_u64(digits, &n) || n > (uint64_t)INT64_MAX)
            return "not a number";
        int64_t i = minus ? -(int64_t)n : (int64_t)n;
        if (i < (int64_t)o->min || i > (int64_t)o->max)
            return option_reason("out of range [%lld, %lld]", (long long)o->min, (long long)o->max);
        *(int64_t *)o->value = i;
        return NULL;
    }
    case OPT_BOOL:
        if (!parse_bool(val, &b))
            return OPTION_BOOL_REASON;
        *(bool *)o->value = b;
        return NULL;
    case OPT_ENUM: {
        int i = choice_index(o, val);
        if (i < 0)
            return enum_reason(o, "expected one of");
        *(unsigned *)o->value = (unsigned)i;
        return NULL;
    }
    case OPT_FLAGS:
        return apply_flags(o, val);
    case OPT_CUSTOM: {
        const struct option_custom *c = o->value;
        return c->parse(word, val, c->ctx);
    }
    case OPT_REST:
        break; /* options_parse_with's own */
    }
    return "unsupported option type";
}

void option_format_value(const struct option *o, char *buf, size_t len)
{
    unsigned v;
    size_t used = 0;

    if (!len)
        return;
    buf[0] = '\0';
    switch (o->type) {
    case OPT_UINT:
    case OPT_NUMBER:
        snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)o->value);
        return;
    case OPT_COUNT:
        snprintf(buf, len, "%u", *(const unsigned *)o->value);
        return;
    case OPT_INT:
        snprintf(buf, len, "%lld", (long long)*(const int64_t *)o->value);
        return;
    case OPT_BOOL:
        snprintf(buf, len, "%s", *(const bool *)o->value ? "on" : "off");
        return;
    case OPT_ENUM:
        snprintf(buf, len, "%s", o->choices[*(const unsigned *)o->value]);
        return;
    case OPT_FLAGS:
        v = *(const unsigned *)o->value;
        if (!v)
            snprintf(buf, len, "none");
        for (unsigned i = 0; o->choices[i] && used < len; i++) {
            if (v & (1u << i))
                used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                         o->choices[i]);
        }
        return;
    case OPT_REST:
        snprintf(buf, len, "%s", (const char *)o->value);
        return;
    case OPT_CUSTOM:
        return;
    }
}

/* The rest of the line into an OPT_REST option; NULL when stored. */
static const char *apply_rest(const struct option *o, struct token val)
{
    size_t len = strnlen(val.s, (size_t)o->max + 1);

    if (len > o->max)
        return option_reason("%s longer than %llu characters", o->name, (unsigned long long)o->max);
    memcpy(o->value, val.s, len + 1);
    return NULL;
}

unsigned options_parse_with(const struct option_parser *p, const char *cmdline,
                            option_report_fn report, void *ctx)
{
    const char *cursor = cmdline;
    struct token key, val;
    unsigned bad = 0;

    while (cmdline_next(&cursor, &key, &val)) {
        struct token word = {key.s, (size_t)(cursor - key.s)};
        const struct option *o = NULL;
        const char *reason;
        bool rest = false;

        for (size_t i = 0; i < p->nopts && !o; i++) {
            if (token_eq(key, p->opts[i].name))
                o = &p->opts[i];
        }
        /* An unknown key is reported as such even without a value: the key is the real mistake. */
        if (!o) {
            reason = p->unknown;
        } else if (o->type == OPT_REST && val.s) {
            /* It swallows the rest of the line, spaces and '=' included, and may be empty. */
            rest = true;
            word = (struct token){key.s, key.len + 1};
            reason = apply_rest(o, val);
        } else if (!val.s || val.len == 0) {
            reason = "missing value";
        } else {
            reason = apply(o, word, val);
        }

        if (reason) {
            bad++;
            if (report)
                report(word, reason, ctx);
            if (p->stop_at_first)
                break;
        }
        if (rest)
            break;
    }
    return bad;
}

unsigned options_parse(const char *cmdline, const struct option *opts, size_t nopts,
                       option_report_fn report, void *ctx)
{
    const struct option_parser p = {opts, nopts, "unknown option", false};
    return options_parse_with(&p, cmdline, report, ctx);
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "lib/json.h"

#include "lib/format.h"
#include "lib/string.h"

static void put(struct json *j, const char *s, size_t n)
{
    if (j->overflow || j->len + n >= j->cap) {
        j->overflow = true;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = 0;
}

static void puts_(struct json *j, const char *s)
{
    put(j, s, strlen(s));
}

static void quoted(struct json *j, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    put(j, "\"", 1);
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            put(j, esc, 2);
        } else if (c < 0x20 || c >= 0x7f) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(j, esc, 6);
        } else {
            put(j, (const char *)&c, 1);
        }
    }
    put(j, "\"", 1);
}

static void key(struct json *j, const char *k)
{
    if (j->need_comma)
        put(j, ",", 1);
    quoted(j, k, strlen(k));
    put(j, ":", 1);
    j->need_comma = true;
}

void json_begin(struct json *j, char *buf, size_t cap)
{
    *j = (struct json){.buf = buf, .cap = cap, .depth = 1, .opened_at = SIZE_MAX};
    if (cap)
        buf[0] = 0;
    put(j, "{", 1);
}

static void number(struct json *j, const char *k, const char *fmt, uint64_t v)
{
    char tmp[24];
    key(j, k);
    int n = snprintf(tmp, sizeof(tmp), fmt, v);
    put(j, tmp, (size_t)n);
}

void json_u64(struct json *j, const char *k, uint64_t v)
{
    number(j, k, "%lu", v);
}

void json_i64(struct json *j, const char *k, int64_t v)
{
    number(j, k, "%ld", (uint64_t)v);
}

void json_hex(struct json *j, const char *k, uint64_t v)
{
    number(j, k, "\"0x%lx\"", v);
}

void json_bool(struct json *j, const char *k, bool v)
{
    key(j, k);
    puts_(j, v ? "true" : "false");
}

void json_str(struct json *j, const char *k, const char *s)
{
    json_strn(j, k, s, strlen(s));
}

void json_strn(struct json *j, const char *k, const char *s, size_t n)
{
    key(j, k);
    quoted(j, s, n);
}

void json_object(struct json *j, const char *k)
{
    j->opened_at = j->len;
    j->opened_comma = j->need_comma;
    key(j, k);
    put(j, "{", 1);
    j->need_comma = false;
    j->depth++;
}

void json_close(struct json *j)
{
    j->opened_at = SIZE_MAX;
    if (j->depth > 1) {
        put(j, "}", 1);
        j->depth--;
        j->need_comma = true;
    }
}

void json_close_or_drop(struct json *j)
{
    if (j->depth <= 1 || j->need_comma || j->overflow || j->opened_at == SIZE_MAX) {
        json_close(j);
        return;
    }
    j->len = j->opened_at;
    j->buf[j->len] = 0;
    j->need_comma = j->opened_comma;
    j->depth--;
    j->opened_at = SIZE_MAX;
}

void json_members(struct json *j, const char *object)
{
    size_t n = strlen(object);
    if (n <= 2 || object[0] != '{' || object[n - 1] != '}')
        return; /* "{}", or not an object */
    if (j->need_comma)
        put(j, ",", 1);
    put(j, object + 1, n - 2);
    j->need_comma = true;
}

const char *json_end(struct json *j)
{
    while (j->depth > 1)
        json_close(j);
    put(j, "}", 1);
    if (j->overflow) {
        j->len = 0;
        j->overflow = false;
        puts_(j, "{\"truncated\":true}");
    }
    return j->buf;
}

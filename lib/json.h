/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A tiny builder for one flat-or-nested JSON object in a caller's buffer,
 * used for the console's machine-readable @event lines. Strings are escaped
 * (quotes, backslash, control and non-ASCII bytes as \u00XX), so a value can
 * never break the line or the object. On overflow the result is the valid
 * object {"truncated":true} instead of broken JSON.
 */
#ifndef POLLUX_LIB_JSON_H
#define POLLUX_LIB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json {
    char *buf;
    size_t cap, len;
    unsigned depth;
    bool need_comma;
    bool overflow;
    size_t opened_at;  /* the object opened last, still open, starts here (SIZE_MAX: none) ... */
    bool opened_comma; /* ... after a comma */
};

void json_begin(struct json *j, char *buf, size_t cap);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, bool v);
void json_str(struct json *j, const char *key, const char *s);
void json_strn(struct json *j, const char *key, const char *s, size_t n);
void json_hex(struct json *j, const char *key, uint64_t v); /* "0x..." string */
void json_object(struct json *j, const char *key);          /* open a nested object */
void json_close(struct json *j);                            /* close the nested object */
/*
 * Close the nested object; if it is the one opened last and nothing went
 * into it, take it out, key and all.
 */
void json_close_or_drop(struct json *j);
/*
 * The members of object, a whole object as json_end gave it (built earlier,
 * in another buffer), as the current object's next ones; "{}" adds none.
 */
void json_members(struct json *j, const char *object);
/* Close all open objects; returns the NUL-terminated text. */
const char *json_end(struct json *j);

#endif

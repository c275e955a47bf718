/*
 * Command-line options: a tokenizer for "key=value key2=value2" strings and
 * a registry-driven parser for the hypervisor's own command line.
 *
 * Contract: parsing never stops at a bad option. Each unknown key, missing
 * value, malformed or out-of-range value is passed to the report callback
 * with the offending token, and the option keeps its default. The return
 * value is the number of bad options.
 */
#ifndef POLLUX_BOOT_CMDLINE_H
#define POLLUX_BOOT_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A slice of the command line; not NUL-terminated. */
struct token {
    const char *s;
    size_t len;
};

/*
 * Split off the next whitespace-separated word at *cursor. key is the part
 * before the first '=', val the part after it (val.s == NULL when the word
 * has no '='). Returns false at the end of the string.
 */
bool cmdline_next(const char **cursor, struct token *key, struct token *val);

bool token_eq(struct token t, const char *s);

/*
 * Numbers: decimal, or hex with 0x. parse_u64 rejects empty input, trailing
 * junk and overflow. parse_size also accepts a K, M or G suffix (binary).
 */
bool parse_u64(struct token t, uint64_t *out);
bool parse_size(struct token t, uint64_t *out);

enum option_type {
    OPT_UINT,  /* uint64_t, checked against [min, max] */
    OPT_BOOL,  /* bool: 0/1, yes/no, on/off, true/false */
    OPT_ENUM,  /* unsigned index into choices (NULL-terminated) */
    OPT_FLAGS, /* unsigned bit mask: a comma-separated list of choices, bit i for choices[i] */
};

struct option {
    const char *name;
    enum option_type type;
    void *value; /* uint64_t *, bool * or unsigned * according to type */
    uint64_t min, max;
    const char *const *choices;
    const char *help; /* one line: what it does and its default */
};

/*
 * Called once per bad option with the whole offending word and a reason; the
 * reason is valid only during the call. OPT_UINT values accept the K/M/G
 * suffixes of parse_size; OPT_ENUM and OPT_FLAGS need choices. A repeated
 * OPT_FLAGS option adds to the mask.
 */
typedef void (*option_report_fn)(struct token word, const char *reason, void *ctx);

unsigned options_parse(const char *cmdline, const struct option *opts, size_t nopts,
                       option_report_fn report, void *ctx);

#endif

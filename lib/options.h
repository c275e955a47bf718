/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command-line options: a tokenizer for "key=value key2=value2" strings and
 * the one table-driven parser of such lines, for the hypervisor's own
 * command line (boot/options.c) and a VM module's words (vmm/vmconfig.c).
 *
 * Contract of options_parse: parsing never stops at a bad option. Each
 * unknown key, missing value, malformed or out-of-range value is passed to
 * the report callback with the offending token, and the option keeps its
 * default. The return value is the number of bad options.
 * options_parse_with can stop at the first bad option instead.
 */
#ifndef POLLUX_LIB_OPTIONS_H
#define POLLUX_LIB_OPTIONS_H

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
/* 0/1, yes/no, on/off, true/false (OPT_BOOL's words); else false, with OPTION_BOOL_REASON. */
bool parse_bool(struct token t, bool *out);
#define OPTION_BOOL_REASON "expected one of 0, 1, yes, no, on, off, true, false"

enum option_type {
    OPT_UINT,   /* uint64_t, checked against [min, max] */
    OPT_BOOL,   /* bool: 0/1, yes/no, on/off, true/false */
    OPT_ENUM,   /* unsigned index into choices (NULL-terminated) */
    OPT_FLAGS,  /* unsigned bit mask: a comma-separated list of choices, bit i for choices[i] */
    OPT_NUMBER, /* uint64_t as OPT_UINT, but a plain number (parse_u64: no K/M/G suffix) */
    OPT_COUNT,  /* unsigned: a plain number checked against [min, max] */
    OPT_INT,    /* int64_t: a plain number, maybe negative, checked against [(int64_t)min, max] */
    /*
     * char[max + 1]: the rest of the line after '=', spaces included, maybe
     * empty; it ends the parse. Longer than max: "<name> longer than <max>
     * characters", reported with the word "<name>=".
     */
    OPT_REST,
    OPT_CUSTOM, /* value is a struct option_custom: its parse function checks and stores */
};

/*
 * An OPT_CUSTOM option's parser: NULL when it stored the value, else why it
 * refused it (option_reason formats one). word is the whole word, val its value.
 */
struct option_custom {
    const char *(*parse)(struct token word, struct token val, void *ctx);
    void *ctx;
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

struct option_parser {
    const struct option *opts;
    size_t nopts;
    const char *unknown; /* the reason for a key no option has ("unknown option") */
    bool stop_at_first;  /* the first bad option ends the parse */
};

unsigned options_parse_with(const struct option_parser *p, const char *cmdline,
                            option_report_fn report, void *ctx);

/* A reason with numbers in it, for OPT_CUSTOM parsers: valid until the next one. */
const char *option_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The option's current value as the command line would write it ("on", "4000", "none"). */
void option_format_value(const struct option *o, char *buf, size_t len);

#endif

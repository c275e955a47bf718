#include "vmm/vmconfig.h"

#include <stdarg.h>
#include <stdbool.h>

#include "boot/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"

#define MEM_MIN   (1ull << 20)
#define MEM_ALIGN 0x1000ull
#define PIN_CPUS  64

static int fail(char *err, size_t errlen, struct token word, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Every reason quotes the offending word, so the user can find it in a long line. */
static int fail(char *err, size_t errlen, struct token word, const char *fmt, ...)
{
    va_list ap;
    int used;

    if (err && errlen) {
        used = snprintf(err, errlen, "module option '%.*s': ", (int)word.len, word.s);
        if ((size_t)used < errlen) {
            va_start(ap, fmt);
            vsnprintf(err + used, errlen - (size_t)used, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static void copy_token(char *dst, struct token t)
{
    memcpy(dst, t.s, t.len);
    dst[t.len] = '\0';
}

static bool name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

static int set_name(struct vmconfig *cfg, struct token word, struct token val, char *err,
                    size_t errlen)
{
    if (val.len > VM_NAME_MAX)
        return fail(err, errlen, word, "name longer than %u characters", VM_NAME_MAX);
    for (size_t i = 0; i < val.len; i++) {
        if (!name_char(val.s[i]))
            return fail(err, errlen, word, "name may hold only A-Z, a-z, 0-9, '_', '.' and '-'");
    }
    copy_token(cfg->name, val);
    return 0;
}

/* Replaces any earlier pin list; the count against vcpus is checked once all words are read. */
static int set_pins(struct vmconfig *cfg, struct token word, struct token val, char *err,
                    size_t errlen)
{
    struct token item = {val.s, 0};
    const char *end = val.s + val.len;
    uint64_t cpu;

    cfg->npins = 0;
    for (const char *p = val.s; p <= end; p++) {
        if (p < end && *p != ',') {
            item.len++;
            continue;
        }
        if (!parse_u64(item, &cpu))
            return fail(err, errlen, word, "not a comma-separated list of CPU numbers");
        if (cpu >= PIN_CPUS)
            return fail(err, errlen, word, "CPU %llu is not below %u", (unsigned long long)cpu,
                        PIN_CPUS);
        /* vcpus never exceeds VM_MAX_VCPUS, so a longer list is always too long. */
        if (cfg->npins == VM_MAX_VCPUS)
            return fail(err, errlen, word, "more than %u pins", VM_MAX_VCPUS);
        cfg->pins[cfg->npins++] = (unsigned)cpu;
        item.s = p + 1;
        item.len = 0;
    }
    return 0;
}

static const char *const keys[] = {"name",         "path",     "vcpus", "mem",  "timeout_ms",
                                   "halt_poll_ns", "unbacked", "pin",   "args", "initrd"};

static bool known_key(struct token key)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (token_eq(key, keys[i]))
            return true;
    }
    return false;
}

int vmconfig_parse(const char *cmdline, unsigned index, unsigned max_vcpus, struct vmconfig *out,
                   char *err, size_t errlen)
{
    unsigned vcpu_limit = max_vcpus < VM_MAX_VCPUS ? max_vcpus : VM_MAX_VCPUS;
    const char *cursor = cmdline;
    struct token key, val, pin_word = {NULL, 0};
    uint64_t n;

    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "vm%u", index);
    out->vcpus = 1;
    out->mem = VM_MEM_DEFAULT;
    out->halt_poll_ns = -1;
    out->unbacked = UNBACKED_STOP;

    while (cmdline_next(&cursor, &key, &val)) {
        struct token word = {key.s, (size_t)(cursor - key.s)};

        /* args= swallows the rest of the line, spaces and '=' included, and may be empty. */
        if (token_eq(key, "args") && val.s) {
            size_t len = strnlen(val.s, VM_ARGS_MAX + 1);

            if (len > VM_ARGS_MAX)
                return fail(err, errlen, (struct token){key.s, key.len + 1},
                            "args longer than %u characters", VM_ARGS_MAX);
            memcpy(out->args, val.s, len + 1);
            break;
        }
        if (!known_key(key))
            return fail(err, errlen, word, "unknown key");
        if (!val.s || val.len == 0)
            return fail(err, errlen, word, "missing value");

        if (token_eq(key, "name")) {
            if (set_name(out, word, val, err, errlen))
                return -1;
        } else if (token_eq(key, "path")) {
            if (val.len > VM_PATH_MAX)
                return fail(err, errlen, word, "path longer than %u characters", VM_PATH_MAX);
            copy_token(out->path, val);
        } else if (token_eq(key, "initrd")) {
            if (val.len > VM_PATH_MAX)
                return fail(err, errlen, word, "path longer than %u characters", VM_PATH_MAX);
            copy_token(out->initrd, val);
        } else if (token_eq(key, "vcpus")) {
            if (!parse_u64(val, &n))
                return fail(err, errlen, word, "not a number");
            if (n < 1 || n > vcpu_limit)
                return fail(err, errlen, word, "out of range [1, %u]", vcpu_limit);
            out->vcpus = (unsigned)n;
        } else if (token_eq(key, "mem")) {
            if (!parse_size(val, &n))
                return fail(err, errlen, word, "not a size");
            if (n < MEM_MIN)
                return fail(err, errlen, word, "below the 1 MiB minimum");
            if (n % MEM_ALIGN)
                return fail(err, errlen, word, "not a multiple of 4 KiB");
            if (n >= VM_MEM_LIMIT)
                return fail(err, errlen, word, "must be below 0x%llx",
                            (unsigned long long)VM_MEM_LIMIT);
            out->mem = n;
        } else if (token_eq(key, "timeout_ms")) {
            if (!parse_u64(val, &out->timeout_ms))
                return fail(err, errlen, word, "not a number");
        } else if (token_eq(key, "halt_poll_ns")) {
            if (!parse_u64(val, &n))
                return fail(err, errlen, word, "not a number");
            if (n > VM_HALT_POLL_NS_MAX)
                return fail(err, errlen, word, "out of range [0, %llu]",
                            (unsigned long long)VM_HALT_POLL_NS_MAX);
            out->halt_poll_ns = (int64_t)n;
        } else if (token_eq(key, "unbacked")) {
            if (token_eq(val, "stop"))
                out->unbacked = UNBACKED_STOP;
            else if (token_eq(val, "ignore"))
                out->unbacked = UNBACKED_IGNORE;
            else
                return fail(err, errlen, word, "expected stop or ignore");
            out->unbacked_given = true;
        } else {
            /* Only pin is left: args without '=' was refused as a missing value. */
            if (set_pins(out, word, val, err, errlen))
                return -1;
            pin_word = word;
        }
    }

    if (out->npins > out->vcpus)
        return fail(err, errlen, pin_word, "%u pins but vcpus=%u", out->npins, out->vcpus);
    return 0;
}

int vmconfig_unique_name(char name[VM_NAME_MAX + 1], unsigned index, vmconfig_name_taken taken,
                         void *ctx, char *err, size_t errlen)
{
    if (!taken(name, ctx))
        return 0;
    char candidate[VM_NAME_MAX + 16];
    int len = snprintf(candidate, sizeof(candidate), "%s-%u", name, index);
    if (len > VM_NAME_MAX) {
        snprintf(err, errlen,
                 "name '%s' is taken, and with the suffix '-%u' it would be longer than %u "
                 "characters: give the VM a name= of its own",
                 name, index, VM_NAME_MAX);
        return -1;
    }
    if (taken(candidate, ctx)) {
        snprintf(err, errlen, "name '%s' is taken, and so is '%s': give the VM a name= of its own",
                 name, candidate);
        return -1;
    }
    memcpy(name, candidate, (size_t)len + 1);
    return 0;
}

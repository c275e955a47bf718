/* SPDX-License-Identifier: GPL-2.0-only */
#include "lib/format.h"

#include <stdbool.h>
#include <stdint.h>

enum length { LEN_INT, LEN_CHAR, LEN_SHORT, LEN_LONG, LEN_LLONG, LEN_SIZE, LEN_PTRDIFF, LEN_MAX };

struct spec {
    bool left, zero, plus, space, alt;
    int width;
    int prec; /* -1 when absent */
};

struct out {
    format_sink sink;
    void *ctx;
    size_t count;
};

static void put(struct out *o, char c)
{
    o->sink(c, o->ctx);
    o->count++;
}

static void pad(struct out *o, char c, int64_t n)
{
    for (; n > 0; n--)
        put(o, c);
}

static void emit_str(struct out *o, const struct spec *sp, const char *s)
{
    if (!s)
        s = "(null)";
    int len = 0;
    while (s[len] && (sp->prec < 0 || len < sp->prec))
        len++;
    if (!sp->left)
        pad(o, ' ', sp->width - len);
    for (int i = 0; i < len; i++)
        put(o, s[i]);
    if (sp->left)
        pad(o, ' ', sp->width - len);
}

/* prefix is the sign or "0x"; it goes before any zero padding. */
static void emit_num(struct out *o, const struct spec *sp, uint64_t v, unsigned base, bool upper,
                     const char *prefix)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char buf[24]; /* 22 octal digits cover 64 bits */
    int n = 0;
    /* C11: a zero value printed with precision 0 has no digits at all. */
    if (v != 0 || sp->prec != 0) {
        do {
            buf[n++] = digits[v % base];
            v /= base;
        } while (v);
    }
    int plen = 0;
    while (prefix[plen])
        plen++;
    /* 64-bit counts: a width and precision near INT_MAX must not overflow. */
    int64_t zeros = sp->prec > n ? sp->prec - n : 0;
    /* '#' with %o: force a leading zero digit unless one is already there. */
    if (sp->alt && base == 8 && zeros == 0 && (n == 0 || buf[n - 1] != '0'))
        zeros = 1;
    int64_t spaces = sp->width - plen - zeros - n;
    /* '0' only pads when no precision is given and not left-justified. */
    if (sp->zero && !sp->left && sp->prec < 0) {
        zeros += spaces > 0 ? spaces : 0;
        spaces = 0;
    }
    if (!sp->left)
        pad(o, ' ', spaces);
    for (int i = 0; i < plen; i++)
        put(o, prefix[i]);
    pad(o, '0', zeros);
    while (n > 0)
        put(o, buf[--n]);
    if (sp->left)
        pad(o, ' ', spaces);
}

/* Reads a decimal field, saturating so a huge width cannot overflow int. */
static int parse_int(const char **f)
{
    int v = 0;
    while (**f >= '0' && **f <= '9') {
        int d = *(*f)++ - '0';
        v = v > (INT32_MAX - d) / 10 ? INT32_MAX : v * 10 + d;
    }
    return v;
}

int vformat(format_sink sink, void *ctx, const char *fmt, va_list ap)
{
    struct out o = {sink, ctx, 0};
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            put(&o, *f);
            continue;
        }
        const char *start = f++;
        struct spec sp = {.prec = -1};
        for (;; f++) {
            if (*f == '-')
                sp.left = true;
            else if (*f == '0')
                sp.zero = true;
            else if (*f == '+')
                sp.plus = true;
            else if (*f == ' ')
                sp.space = true;
            else if (*f == '#')
                sp.alt = true;
            else
                break;
        }
        if (*f == '*') {
            f++;
            sp.width = va_arg(ap, int);
            /* C11: a negative '*' width means '-' flag and its magnitude. */
            if (sp.width < 0) {
                sp.left = true;
                sp.width = sp.width == INT32_MIN ? INT32_MAX : -sp.width;
            }
        } else {
            sp.width = parse_int(&f);
        }
        if (*f == '.') {
            f++;
            if (*f == '*') {
                f++;
                sp.prec = va_arg(ap, int);
                if (sp.prec < 0)
                    sp.prec = -1;
            } else {
                sp.prec = parse_int(&f);
            }
        }
        enum length len = LEN_INT;
        switch (*f) {
        case 'h':
            len = f[1] == 'h' ? LEN_CHAR : LEN_SHORT;
            f += len == LEN_CHAR ? 2 : 1;
            break;
        case 'l':
            len = f[1] == 'l' ? LEN_LLONG : LEN_LONG;
            f += len == LEN_LLONG ? 2 : 1;
            break;
        case 'z':
            len = LEN_SIZE;
            f++;
            break;
        case 't':
            len = LEN_PTRDIFF;
            f++;
            break;
        case 'j':
            len = LEN_MAX;
            f++;
            break;
        default:
            break;
        }

        char c = *f;
        if (c == 'd' || c == 'i') {
            int64_t v;
            switch (len) {
            case LEN_CHAR:
                v = (signed char)va_arg(ap, int);
                break;
            case LEN_SHORT:
                v = (short)va_arg(ap, int);
                break;
            case LEN_LONG:
                v = va_arg(ap, long);
                break;
            case LEN_LLONG:
                v = va_arg(ap, long long);
                break;
            case LEN_SIZE:
                v = (int64_t)va_arg(ap, size_t);
                break;
            case LEN_PTRDIFF:
                v = va_arg(ap, ptrdiff_t);
                break;
            case LEN_MAX:
                v = va_arg(ap, intmax_t);
                break;
            default:
                v = va_arg(ap, int);
                break;
            }
            /* Negate in unsigned arithmetic so INT64_MIN does not overflow. */
            uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
            const char *sign = v < 0 ? "-" : sp.plus ? "+" : sp.space ? " " : "";
            emit_num(&o, &sp, mag, 10, false, sign);
        } else if (c == 'u' || c == 'x' || c == 'X' || c == 'o') {
            uint64_t v;
            switch (len) {
            case LEN_CHAR:
                v = (unsigned char)va_arg(ap, unsigned);
                break;
            case LEN_SHORT:
                v = (unsigned short)va_arg(ap, unsigned);
                break;
            case LEN_LONG:
                v = va_arg(ap, unsigned long);
                break;
            case LEN_LLONG:
                v = va_arg(ap, unsigned long long);
                break;
            case LEN_SIZE:
                v = va_arg(ap, size_t);
                break;
            case LEN_PTRDIFF:
                v = (uint64_t)va_arg(ap, ptrdiff_t);
                break;
            case LEN_MAX:
                v = va_arg(ap, uintmax_t);
                break;
            default:
                v = va_arg(ap, unsigned);
                break;
            }
            unsigned base = c == 'u' ? 10 : c == 'o' ? 8 : 16;
            const char *prefix = "";
            if (sp.alt && base == 16 && v != 0)
                prefix = c == 'X' ? "0X" : "0x";
            emit_num(&o, &sp, v, base, c == 'X', prefix);
        } else if (c == 'p') {
            emit_num(&o, &sp, (uintptr_t)va_arg(ap, void *), 16, false, "0x");
        } else if (c == 'c') {
            /* A NUL char is still printed; precision does not apply. */
            if (!sp.left)
                pad(&o, ' ', sp.width - 1);
            put(&o, (char)va_arg(ap, int));
            if (sp.left)
                pad(&o, ' ', sp.width - 1);
        } else if (c == 's') {
            emit_str(&o, &sp, va_arg(ap, const char *));
        } else if (c == '%') {
            put(&o, '%');
        } else {
            /* Unknown conversion: echo it so the mistake shows in the output. */
            for (const char *s = start; s < f; s++)
                put(&o, *s);
            if (!c)
                break;
            put(&o, c);
        }
    }
    /* C11 reports a count that int cannot hold as an error. */
    return o.count > INT32_MAX ? -1 : (int)o.count;
}

struct buf_sink {
    char *buf;
    size_t size, pos;
};

static void buf_put(char c, void *ctx)
{
    struct buf_sink *b = ctx;
    if (b->pos + 1 < b->size)
        b->buf[b->pos] = c;
    b->pos++;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct buf_sink b = {buf, size, 0};
    int n = vformat(buf_put, &b, fmt, ap);
    if (size > 0)
        buf[b.pos < size ? b.pos : size - 1] = '\0';
    return n;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * printf-style formatting without floating point: %d %i %u %x %X %o %c %s %p
 * %%, flags '-' '0' '+' ' ' '#', width and precision (also '*'), length
 * modifiers hh h l ll z t j. Output goes to a character sink, so callers choose
 * between a buffer and a device. snprintf and vsnprintf follow C11 semantics
 * (return the length that would have been written, always NUL-terminate when
 * size > 0).
 */
#ifndef POLLUX_LIB_FORMAT_H
#define POLLUX_LIB_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

typedef void (*format_sink)(char c, void *ctx);

/* Returns the number of characters emitted. */
int vformat(format_sink sink, void *ctx, const char *fmt, va_list ap);

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The parsers' error path: write a one-line reason into err (when there is room), return -1. */
__attribute__((format(printf, 3, 4))) static inline int format_error(char *err, size_t errlen,
                                                                     const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#endif

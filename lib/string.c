/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gcc turns byte loops that look like copies or fills into calls to
 * memcpy/memset even with -ffreestanding, which here would recurse forever;
 * the string instructions keep these functions free of such loops.
 */
#include "lib/string.h"

#include <stdint.h>

/*
 * Eight bytes a step, then the rest: emulators run a string instruction an
 * element at a time, so a disk request's copy (up to 1 MiB in a virtio
 * pass, docs/robustness.md) costs an eighth of the byte-wise one under QEMU
 * TCG and Bochs; hardware is as fast either way.
 */
void *memcpy(void *dst, const void *src, size_t n)
{
    void *d = dst;
    size_t words = n / 8, rest = n % 8;
    __asm__ volatile("rep movsq" : "+D"(d), "+S"(src), "+c"(words) : : "memory");
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(rest) : : "memory");
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    if ((uintptr_t)dst - (uintptr_t)src >= n)
        return memcpy(dst, src, n);
    /*
     * dst overlaps the tail of src: copy from the last byte down. An
     * interrupt taken with DF set is safe because the ABI makes every entry
     * path clear DF before running C code.
     */
    void *d = (char *)dst + n - 1;
    const void *s = (const char *)src + n - 1;
    __asm__ volatile("std\n\trep movsb\n\tcld" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    void *d = dst;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != y[i])
            return x[i] - y[i];
    }
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    while (*x && *x == *y) {
        x++;
        y++;
    }
    return *x - *y;
}

int strncmp(const char *a, const char *b, size_t n)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != y[i] || !x[i])
            return x[i] - y[i];
    }
    return 0;
}

char *strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (!*s)
            return NULL;
    }
}

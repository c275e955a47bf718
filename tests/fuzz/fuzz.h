/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the libFuzzer harnesses: fuzz input seen as physical memory, and
 * a contract check that aborts (so libFuzzer keeps the input) with a reason.
 */
#ifndef POLLUX_TESTS_FUZZ_H
#define POLLUX_TESTS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_REQUIRE(cond)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "contract broken: %s (%s:%d)\n", #cond, __FILE__, __LINE__);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/*
 * [base, base + size) of physical memory, backed by an exactly sized heap
 * copy so AddressSanitizer catches a read past its end.
 */
struct fuzz_mem {
    uint64_t base;
    uint8_t *bytes;
    size_t size;
};

static inline struct fuzz_mem fuzz_mem_new(uint64_t base, const uint8_t *data, size_t size)
{
    struct fuzz_mem m = {base, malloc(size ? size : 1), size};
    memcpy(m.bytes, data, size);
    return m;
}

static inline void fuzz_mem_free(struct fuzz_mem *m)
{
    free(m->bytes);
}

/* A phys_map_fn (arch/x86/bootinfo.h): only whole ranges inside the memory are granted. */
static inline const void *fuzz_mem_map(uint64_t phys, size_t len, void *ctx)
{
    const struct fuzz_mem *m = ctx;
    if (phys < m->base || len > m->size || phys - m->base > m->size - len)
        return NULL;
    return m->bytes + (phys - m->base);
}

/* A NUL-terminated heap copy of the input, for the string parsers. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif

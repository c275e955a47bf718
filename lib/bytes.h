/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Little-endian fields of byte-packed structures (multiboot, ELF, ACPI),
 * read and written without casts, so no alignment is assumed.
 */
#ifndef POLLUX_LIB_BYTES_H
#define POLLUX_LIB_BYTES_H

#include <stddef.h>
#include <stdint.h>

static inline uint16_t get_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get_le64(const uint8_t *p)
{
    return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
    put_le32(p, (uint32_t)v);
    put_le32(p + 4, (uint32_t)(v >> 32));
}

/* The 8-bit sum of n bytes (ACPI tables sum to 0). */
static inline uint8_t sum8(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s += *p++;
    return s;
}

#endif

/*
 * Guest page-table walker: linear (virtual) to guest-physical addresses for
 * the x86 paging modes: paging off, 32-bit (with CR4.PSE 4 MiB pages), PAE
 * (3 levels, 2 MiB pages), and 4-level or, with CR4.LA57, 5-level long mode
 * (2 MiB and 1 GiB pages).
 * It reads guest tables through a callback (so it runs in host unit tests)
 * or, for the hypervisor, straight from guest RAM: the same walk either way.
 *
 * Contract: gpt_translate returns 0 and the gpa, or a GPT_* failure: a
 * non-present entry, reserved bits set where the mode defines them
 * (including NX when EFER.NXE is clear), an access the rights forbid (write
 * to a read-only page when CR0.WP or CPL 3; user access to a supervisor
 * page; fetch from an NX page) or a table read the callback refuses. With
 * paging off the linear address is the gpa (truncated to 32 bits).
 */
#ifndef POLLUX_VMM_GPT_H
#define POLLUX_VMM_GPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gpt_mode {
    uint64_t cr0, cr3, cr4, efer;
    unsigned cpl; /* 0..3 */
};

#define GPT_ACCESS_WRITE (1u << 0)
#define GPT_ACCESS_FETCH (1u << 1)

enum gpt_result {
    GPT_OK = 0,
    GPT_NOT_PRESENT = -1,
    GPT_RESERVED = -2,
    GPT_PROTECTION = -3,
    GPT_BAD_TABLE = -4, /* the callback could not read a table entry */
};

/* Read len (4 or 8) bytes of guest-physical memory; false if not RAM. */
typedef bool (*gpt_read_fn)(uint64_t gpa, void *buf, size_t len, void *ctx);

enum gpt_result gpt_translate(const struct gpt_mode *m, uint64_t linear, unsigned access,
                              gpt_read_fn read, void *ctx, uint64_t *gpa);

/* Guest RAM as one host range: guest-physical 0 at base, size bytes. */
struct gpt_ram {
    const uint8_t *base;
    uint64_t size;
};

/* gpt_translate reading the tables from ram directly: the same results, no call per level. */
enum gpt_result gpt_translate_ram(const struct gpt_mode *m, uint64_t linear, unsigned access,
                                  const struct gpt_ram *ram, uint64_t *gpa);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/* The counting build's counters (arch/x86/exit_counts.h); empty in every other build. */
#include "arch/x86/exit_counts.h"

#ifdef POLLUX_EXIT_COUNTS

#include <stddef.h>

#include "arch/x86/percpu.h"
#include "arch/x86/pmm.h"

_Static_assert(offsetof(struct percpu, exit_counts) == EXIT_COUNTS_GS_OFFSET,
               "the entry stubs count at %gs:EXIT_COUNTS_GS_OFFSET");
_Static_assert(offsetof(struct percpu, exit_counts.vmcb) == EXIT_COUNTS_VMCB_GS_OFFSET,
               "vmrun.S notes the VMCB at %gs:EXIT_COUNTS_VMCB_GS_OFFSET");

void exit_counts_read(struct exit_counts *out)
{
    __atomic_store_n(&exit_counts_on, true, __ATOMIC_RELAXED);
    *out = this_cpu()->exit_counts;
}

/* One access per 8 bytes: a wider one is a struct copy, done in 8-byte moves. */
static void vmcb_access(const volatile void *p, unsigned long size, unsigned kind)
{
    if (!__atomic_load_n(&exit_counts_on, __ATOMIC_RELAXED))
        return;
    struct exit_counts *c = &this_cpu()->exit_counts;
    if (c->vmcb && (uint64_t)p - c->vmcb < PAGE_SIZE)
        c->n[kind] += (size + 7) / 8;
}

/*
 * What GCC's -fsanitize=thread calls before each load and store of the
 * files compiled with it (backend/svm/ in this build), and in place of
 * their atomic operations. Unlike -fsanitize=kernel-address, it checks
 * every access, not only the first to an address in a basic block.
 */
/* Named by a constructor in each instrumented file; pollux runs no constructors. */
void __tsan_init(void);
void __tsan_init(void) {}

#define SIZED_ACCESS(size)                                                                         \
    void __tsan_read##size(void *p);                                                               \
    void __tsan_read##size(void *p)                                                                \
    {                                                                                              \
        vmcb_access(p, size, EXIT_COUNT_VMCB_READ);                                                \
    }                                                                                              \
    void __tsan_write##size(void *p);                                                              \
    void __tsan_write##size(void *p)                                                               \
    {                                                                                              \
        vmcb_access(p, size, EXIT_COUNT_VMCB_WRITE);                                               \
    }
SIZED_ACCESS(1)
SIZED_ACCESS(2)
SIZED_ACCESS(4)
SIZED_ACCESS(8)
SIZED_ACCESS(16)
#undef SIZED_ACCESS

void __tsan_read_range(void *p, unsigned long size);
void __tsan_read_range(void *p, unsigned long size)
{
    vmcb_access(p, size, EXIT_COUNT_VMCB_READ);
}

void __tsan_write_range(void *p, unsigned long size);
void __tsan_write_range(void *p, unsigned long size)
{
    vmcb_access(p, size, EXIT_COUNT_VMCB_WRITE);
}

/*
 * The atomic operations, done at sequential consistency (never weaker than
 * the order asked for); a read-modify-write is one read and one write, as
 * the plain `x |= y` is.
 */
static void vmcb_rmw(const volatile void *p, unsigned long size)
{
    vmcb_access(p, size, EXIT_COUNT_VMCB_READ);
    vmcb_access(p, size, EXIT_COUNT_VMCB_WRITE);
}

#define ATOMIC_RMW(bits, op, builtin)                                                              \
    uint##bits##_t __tsan_atomic##bits##_##op(volatile uint##bits##_t *p, uint##bits##_t v,        \
                                              int order);                                          \
    uint##bits##_t __tsan_atomic##bits##_##op(volatile uint##bits##_t *p, uint##bits##_t v,        \
                                              int order)                                           \
    {                                                                                              \
        (void)order;                                                                               \
        vmcb_rmw(p, bits / 8);                                                                     \
        return builtin(p, v, __ATOMIC_SEQ_CST);                                                    \
    }

#define ATOMICS(bits)                                                                              \
    uint##bits##_t __tsan_atomic##bits##_load(const volatile uint##bits##_t *p, int order);        \
    uint##bits##_t __tsan_atomic##bits##_load(const volatile uint##bits##_t *p, int order)         \
    {                                                                                              \
        (void)order;                                                                               \
        vmcb_access(p, bits / 8, EXIT_COUNT_VMCB_READ);                                            \
        return __atomic_load_n(p, __ATOMIC_SEQ_CST);                                               \
    }                                                                                              \
    void __tsan_atomic##bits##_store(volatile uint##bits##_t *p, uint##bits##_t v, int order);     \
    void __tsan_atomic##bits##_store(volatile uint##bits##_t *p, uint##bits##_t v, int order)      \
    {                                                                                              \
        (void)order;                                                                               \
        vmcb_access(p, bits / 8, EXIT_COUNT_VMCB_WRITE);                                           \
        __atomic_store_n(p, v, __ATOMIC_SEQ_CST);                                                  \
    }                                                                                              \
    ATOMIC_RMW(bits, exchange, __atomic_exchange_n)                                                \
    ATOMIC_RMW(bits, fetch_add, __atomic_fetch_add)                                                \
    ATOMIC_RMW(bits, fetch_sub, __atomic_fetch_sub)                                                \
    ATOMIC_RMW(bits, fetch_and, __atomic_fetch_and)                                                \
    ATOMIC_RMW(bits, fetch_or, __atomic_fetch_or)                                                  \
    ATOMIC_RMW(bits, fetch_xor, __atomic_fetch_xor)                                                \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile uint##bits##_t *p,                  \
                                                      uint##bits##_t *expected, uint##bits##_t v,  \
                                                      int order, int fail);                        \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile uint##bits##_t *p,                  \
                                                      uint##bits##_t *expected, uint##bits##_t v,  \
                                                      int order, int fail)                         \
    {                                                                                              \
        (void)order, (void)fail;                                                                   \
        vmcb_rmw(p, bits / 8);                                                                     \
        return __atomic_compare_exchange_n(p, expected, v, false, __ATOMIC_SEQ_CST,                \
                                           __ATOMIC_SEQ_CST);                                      \
    }                                                                                              \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile uint##bits##_t *p,                    \
                                                    uint##bits##_t *expected, uint##bits##_t v,    \
                                                    int order, int fail);                          \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile uint##bits##_t *p,                    \
                                                    uint##bits##_t *expected, uint##bits##_t v,    \
                                                    int order, int fail)                           \
    {                                                                                              \
        return __tsan_atomic##bits##_compare_exchange_strong(p, expected, v, order, fail);         \
    }
ATOMICS(8)
ATOMICS(16)
ATOMICS(32)
ATOMICS(64)
#undef ATOMICS
#undef ATOMIC_RMW

#endif

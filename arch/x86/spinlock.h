/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Ticket spinlocks: FIFO, so no CPU starves under contention. The _irqsave
 * variants also disable interrupts, for locks an interrupt handler takes.
 */
#ifndef POLLUX_ARCH_X86_SPINLOCK_H
#define POLLUX_ARCH_X86_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"

struct spinlock {
    volatile uint32_t next;
    volatile uint32_t owner;
};

#define SPINLOCK_INIT                                                                              \
    {                                                                                              \
        0, 0                                                                                       \
    }

static inline void spin_lock(struct spinlock *l)
{
    uint32_t ticket = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != ticket)
        cpu_relax();
}

/* Take the lock only if it is free now. */
static inline bool spin_trylock(struct spinlock *l)
{
    uint32_t owner = __atomic_load_n(&l->owner, __ATOMIC_RELAXED);
    uint32_t expected = owner;
    return __atomic_compare_exchange_n(&l->next, &expected, owner + 1, false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

static inline void spin_unlock(struct spinlock *l)
{
    __atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);
}

static inline uint64_t spin_lock_irqsave(struct spinlock *l)
{
    uint64_t flags = irq_save();
    spin_lock(l);
    return flags;
}

static inline void spin_unlock_irqrestore(struct spinlock *l, uint64_t flags)
{
    spin_unlock(l);
    irq_restore(flags);
}

#endif

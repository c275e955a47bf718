/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/unbacked.h"

bool unbacked_emulated(enum unbacked_policy policy, bool fetch)
{
    return policy == UNBACKED_IGNORE && !fetch;
}

uint64_t unbacked_access(struct unbacked_counts *counts, const struct mmio_op *op)
{
    __atomic_add_fetch(op->write ? &counts->writes : &counts->reads, 1, __ATOMIC_RELAXED);
    if (op->write)
        return 0;
    return op->size >= 8 ? ~0ull : (1ull << (8 * op->size)) - 1;
}

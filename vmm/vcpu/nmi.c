/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vcpu/nmi.h"

void nmi_send(struct nmi_state *n)
{
    /* Saturates well below overflow: at most two can ever wait. */
    if (n->queued < 2)
        n->queued++;
}

void nmi_process(struct nmi_state *n, bool in_service)
{
    unsigned limit = in_service ? 1 : 2;
    n->pending += n->queued;
    n->queued = 0;
    if (n->pending > limit)
        n->pending = limit;
}

bool nmi_waiting(const struct nmi_state *n)
{
    return n->queued || n->pending;
}

void nmi_injected(struct nmi_state *n)
{
    if (n->pending)
        n->pending--;
}

void nmi_reset(struct nmi_state *n)
{
    n->queued = 0;
    n->pending = 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * NMIs waiting for a vCPU, counted as the hardware latches them: while no
 * NMI is in service, two may wait (one is delivered, the next is latched
 * behind it); while one is in service (the guest has not yet executed the
 * IRET that ends its handler, or an NMI is being injected), only one. More
 * NMIs than that collapse into those, as on real hardware (and as KVM's
 * process_nmi counts them). Senders only queue (nmi_send, under the vCPU's
 * lock); the vCPU itself folds the queue into what waits (nmi_process),
 * because only it knows whether an NMI is in service.
 */
#ifndef POLLUX_VMM_VCPU_NMI_H
#define POLLUX_VMM_VCPU_NMI_H

#include <stdbool.h>

struct nmi_state {
    unsigned queued;  /* sent and not yet folded in */
    unsigned pending; /* waiting to be injected: 0, 1 or 2 */
};

void nmi_send(struct nmi_state *n);
/* Fold the queue in, given whether an NMI is in service now. */
void nmi_process(struct nmi_state *n, bool in_service);
/* Anything sent or waiting: it ends a halt. */
bool nmi_waiting(const struct nmi_state *n);
/* One was injected. */
void nmi_injected(struct nmi_state *n);
/* INIT: every NMI sent or waiting is dropped (KVM's kvm_vcpu_reset). */
void nmi_reset(struct nmi_state *n);

#endif

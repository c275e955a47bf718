/* The common exit dispatcher (handlers indexed by enum exit_reason). */
#ifndef POLLUX_VMM_EXITS_H
#define POLLUX_VMM_EXITS_H

#include "vmm/vm.h"

void handle_exit(struct vcpu *v, const struct exit_record *e);

/* The handlers the exit fast path (vmm/fastpath_exit.h) calls directly, without the table. */
void handle_cpuid(struct vcpu *v, const struct exit_record *e);
void handle_hypercall(struct vcpu *v, const struct exit_record *e);
void handle_msr_read(struct vcpu *v, const struct exit_record *e);
void handle_msr_write(struct vcpu *v, const struct exit_record *e);
void handle_io(struct vcpu *v, const struct exit_record *e);
void handle_cr8(struct vcpu *v, const struct exit_record *e);
void handle_npf(struct vcpu *v, const struct exit_record *e);

#endif

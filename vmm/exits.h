/* The common exit dispatcher (handlers indexed by enum exit_reason). */
#ifndef POLLUX_VMM_EXITS_H
#define POLLUX_VMM_EXITS_H

#include "vmm/vm.h"

void handle_exit(struct vcpu *v, const struct exit_record *e);

#endif

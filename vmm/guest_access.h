/* Reading guest memory by linear address, through the guest's own page tables. */
#ifndef POLLUX_VMM_GUEST_ACCESS_H
#define POLLUX_VMM_GUEST_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/vm.h"

/* Copy len bytes at linear address la (page crossings handled). 0 or a gpt_result. */
int guest_read_linear(struct vcpu *v, uint64_t la, void *buf, size_t len);

/*
 * Advance RIP past the instruction that caused the exit and end any
 * interrupt shadow. Without a length from the CPU, the bytes at RIP are
 * decoded and must be the instruction the exit names. Returns -1 (and stops
 * the VM) when that fails.
 */
int vcpu_skip_instruction(struct vcpu *v, const struct exit_record *e);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One guest access to emulated memory, behind a nested page fault: fetch and
 * decode the instruction (vmm/exit/mmio_decode.h), give a load its value or take
 * a store's data (then vcpu_advance steps past it). Shared by the emulated devices
 * (vmm/dev/lapic.c) and unbacked guest-physical memory (vmm/exit/unbacked.h).
 */
#ifndef POLLUX_VMM_EXIT_MMIO_H
#define POLLUX_VMM_EXIT_MMIO_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/exit/mmio_decode.h"
#include "vmm/vm.h"

/*
 * Decode the instruction at the guest's RIP. False if it cannot be: the VM
 * is then stopped (bad-state) with the bytes and `what` it touched in the
 * message.
 */
bool mmio_fetch(struct vcpu *v, const struct exit_record *e, const char *what, struct mmio_op *op);

/* The bytes a decoded store writes. */
uint64_t mmio_store_data(struct vcpu *v, const struct mmio_op *op);

/* A decoded load's value reaches its register. */
void mmio_load_done(struct vcpu *v, const struct mmio_op *op, uint64_t value);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Guest-physical addresses that neither the VM's RAM nor one of its
 * emulated devices backs. What an access there does is the VM's
 * `unbacked=` policy (vmm/vmconfig.h): `stop` ends the VM at the first one
 * (@vm_stop reason bad-access, with the address and RIP); `ignore` does what
 * a PC's open bus does, reads give all ones and writes are dropped, and
 * counts them. An instruction fetch always stops the VM: there is nothing
 * to execute. An emulated device's page is backed only in VMs that have the
 * device (the local APIC's in all of them, for now).
 */
#ifndef POLLUX_VMM_EXIT_UNBACKED_H
#define POLLUX_VMM_EXIT_UNBACKED_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/exit/mmio_decode.h"
#include "vmm/vmconfig.h"

/* Accesses a VM made under `ignore`; counters, updated atomically (any vCPU). */
struct unbacked_counts {
    uint64_t reads, writes;
};

/* Is this access emulated (true) or does it stop the VM? */
bool unbacked_emulated(enum unbacked_policy policy, bool fetch);

/* Count an emulated access; for a load, returns what it reads (all ones of its size). */
uint64_t unbacked_access(struct unbacked_counts *counts, const struct mmio_op *op);

#endif

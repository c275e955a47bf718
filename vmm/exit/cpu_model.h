/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest CPU model every vCPU shares: the parts of the CPUID view that
 * depend only on the host and the backend, and the guest features
 * (vmm/exit/cpuid.h) decided from them once at boot.
 */
#ifndef POLLUX_VMM_EXIT_CPU_MODEL_H
#define POLLUX_VMM_EXIT_CPU_MODEL_H

#include "vmm/exit/cpuid.h"
#include "vmm/exit/cpuid_cache.h"

/* After the backend and the FPU are set up: decide guest_features and print @host_cpuid. */
void cpu_model_init(void);

/* A view with the shared parts filled in; the vCPU's own fields are zero. */
void cpu_model_view(struct cpuid_view *view);

/* A VM's CPUID answers (vmm/exit/cpuid_cache.h), for its nvcpus vCPUs. */
void cpu_model_fill_cache(struct cpuid_cache *c, unsigned nvcpus, uint32_t kvm_features);

#endif

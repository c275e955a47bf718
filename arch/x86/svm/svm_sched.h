/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The SVM rules that scheduling brings in, pure so that host unit tests run
 * them (tests/unit/test_svm_sched.c); no emulator here checks them (QEMU
 * ignores ASIDs, none has VMCB clean bits or a pause-filter threshold).
 *
 * ASIDs are per host CPU. A vCPU keeps its ASID while it runs on the CPU
 * that gave it, within that CPU's ASID generation. When it runs on another
 * CPU (it moved, or vcpu_unload dropped its ASID) it gets a fresh one, with
 * a TLB flush (the ASID may have served another vCPU there, and the vCPU's
 * own old translations on this CPU may be stale) and every VMCB clean bit
 * cleared (what a CPU cached of a VMCB is valid only on that CPU). A CPU
 * that runs out of ASIDs starts a new generation, so every vCPU that runs
 * there next takes a fresh ASID (and flushes), as KVM does.
 */
#ifndef POLLUX_ARCH_X86_SVM_SVM_SCHED_H
#define POLLUX_ARCH_X86_SVM_SVM_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/virt.h"

#define SVM_TLB_FLUSH_ALL 1 /* TLB_CONTROL: flush every ASID's entries */

struct svm_asid_cpu {
    uint32_t next_asid; /* starts at 1: ASID 0 is the host's */
    uint64_t generation;
};

struct svm_asid_vcpu {
    uint32_t asid;
    uint64_t generation;
    int cpu; /* the CPU that gave the ASID, -1 for none */
};

/* What VMRUN on this CPU needs besides the ASID. */
struct svm_asid_entry {
    bool fresh;          /* a new ASID: the fields below apply */
    uint8_t tlb_control; /* SVM_TLB_FLUSH_ALL */
    bool clear_clean;    /* every VMCB clean bit cleared */
};

/* The vCPU's ASID is still valid on cpu: the common case, tested before every VMRUN. */
static inline bool svm_asid_current(const struct svm_asid_vcpu *v, const struct svm_asid_cpu *c,
                                    unsigned cpu)
{
    return v->cpu == (int)cpu && v->generation == c->generation;
}

/* Before VMRUN on cpu, whose ASIDs are 1 .. max_asid - 1. */
struct svm_asid_entry svm_asid_assign(struct svm_asid_vcpu *v, struct svm_asid_cpu *c, unsigned cpu,
                                      uint32_t max_asid);

/* The VMCB's pause fields for a set_pause_exiting request. */
struct svm_pause_fields {
    bool intercept;
    uint16_t count, thresh;
};

/*
 * FILTERED: the count is the window (at most 65535) and the threshold the gap,
 * where the CPU has a threshold (else 0: count-only filtering).
 */
struct svm_pause_fields svm_pause_filter(enum pause_exiting mode, uint32_t window, uint32_t gap,
                                         bool has_thresh);

#endif

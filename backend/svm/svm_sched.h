/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The SVM rules that scheduling brings in, pure so that host unit tests run
 * them (tests/unit/test_svm_sched.c); no emulator here checks them (none
 * keeps TLB entries per ASID: QEMU TCG and Bochs flush or ignore them; none
 * has VMCB clean bits or a pause-filter threshold).
 *
 * ASIDs are per host CPU, handed out as KVM's new_asid() does: each CPU
 * counts its ASIDs up within a generation. An ASID given since the CPU's
 * last wrap has no TLB entry there (the wrap flushed them all), so a fresh
 * one needs no flush; only the wrap, when the counter passes the CPU's last
 * ASID, starts a generation at the first ASID and flushes every ASID's
 * entries (TLB_CONTROL_FLUSH_ALL_ASID). A vCPU keeps its ASID while it runs
 * on the CPU that gave it, within that generation. One that runs on another
 * CPU (it moved, or vcpu_unload or a reset dropped its ASID) takes a fresh
 * ASID there and has every VMCB clean bit cleared (what a CPU cached of a
 * VMCB is valid only on that CPU); its old ASID on the CPU it left is never
 * given again before that CPU's next wrap, so its translations there cannot
 * be reused. A CPU's counter starts past its last ASID, so the first ASID it
 * gives wraps: entries left from before pollux are flushed before any guest
 * runs with an ASID.
 */
#ifndef POLLUX_BACKEND_SVM_SVM_SCHED_H
#define POLLUX_BACKEND_SVM_SVM_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/virt.h"
#include "arch/x86/vmcb.h"

#define SVM_MIN_ASID 1 /* ASID 0 is the host's */

struct svm_asid_cpu {
    uint32_t next_asid; /* past max_asid: the next ASID given wraps */
    uint32_t max_asid;  /* the CPU's last ASID */
    uint64_t generation;
};

/* When SVM is enabled on a CPU with nr_asids ASIDs (CPUID 8000_000A EBX, at least 2). */
static inline struct svm_asid_cpu svm_asid_cpu_init(uint32_t nr_asids)
{
    return (struct svm_asid_cpu){.next_asid = nr_asids, .max_asid = nr_asids - 1, .generation = 1};
}

struct svm_asid_vcpu {
    uint32_t asid;
    uint64_t generation; /* of the CPU that gave the ASID; 0 matches none */
    int cpu;             /* the CPU that gave the ASID, -1 for none */
};

/* What VMRUN on this CPU needs. */
struct svm_asid_entry {
    bool fresh;          /* a new ASID: it goes into the VMCB */
    uint8_t tlb_control; /* SVM_TLB_FLUSH_ALL on a wrap, else 0 */
    bool clear_clean;    /* a move: every VMCB clean bit cleared */
};

/* The vCPU's ASID is still valid on cpu: the common case, tested before every VMRUN. */
static inline bool svm_asid_current(const struct svm_asid_vcpu *v, const struct svm_asid_cpu *c,
                                    unsigned cpu)
{
    return v->cpu == (int)cpu && v->generation == c->generation;
}

/* Before VMRUN on cpu (KVM's pre_svm_run and new_asid). */
struct svm_asid_entry svm_asid_assign(struct svm_asid_vcpu *v, struct svm_asid_cpu *c,
                                      unsigned cpu);

/* Every SVM CPU can intercept PAUSE; a pause filter makes it exit only on a loop. */
enum pause_hw svm_pause_hw_of(const struct virt_features *f);

/*
 * What a flush of one guest's TLB does at its next VMRUN (KVM's
 * svm_flush_tlb_current): TLB_CONTROL 3 with FlushByASID, else a new ASID
 * (SVM_TLB_FLUSH_NEW_ASID). KVM's nested SVM offers FlushByASID since Linux
 * 6.x and flushes at every nested transition anyway.
 */
#define SVM_TLB_FLUSH_NEW_ASID 0
uint8_t svm_flush_tlb_control(const struct virt_features *f);

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

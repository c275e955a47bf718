/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/svm/svm_sched.h"

struct svm_asid_entry svm_asid_assign(struct svm_asid_vcpu *v, struct svm_asid_cpu *c, unsigned cpu,
                                      uint32_t max_asid)
{
    if (svm_asid_current(v, c, cpu))
        return (struct svm_asid_entry){0};
    if (c->next_asid >= max_asid) {
        c->generation++;
        c->next_asid = 1;
    }
    v->asid = c->next_asid++;
    v->generation = c->generation;
    v->cpu = (int)cpu;
    return (struct svm_asid_entry){
        .fresh = true, .tlb_control = SVM_TLB_FLUSH_ALL, .clear_clean = true};
}

struct svm_pause_fields svm_pause_filter(enum pause_exiting mode, uint32_t window, uint32_t gap,
                                         bool has_thresh)
{
    if (mode == PAUSE_EXIT_NEVER)
        return (struct svm_pause_fields){0};
    if (mode == PAUSE_EXIT_EVERY)
        return (struct svm_pause_fields){.intercept = true};
    return (struct svm_pause_fields){
        .intercept = true,
        .count = (uint16_t)(window > 0xffff ? 0xffff : window),
        .thresh = (uint16_t)(has_thresh ? (gap > 0xffff ? 0xffff : gap) : 0),
    };
}

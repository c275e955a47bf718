/* SPDX-License-Identifier: GPL-2.0-only */
#include "backend/svm/svm_sched.h"

struct svm_asid_entry svm_asid_assign(struct svm_asid_vcpu *v, struct svm_asid_cpu *c, unsigned cpu)
{
    struct svm_asid_entry e = {0};
    if (v->cpu != (int)cpu) {
        v->cpu = (int)cpu;
        v->generation = 0; /* an ASID of another CPU, or none: not this CPU's */
        e.clear_clean = true;
    }
    if (v->generation == c->generation)
        return e;
    if (c->next_asid > c->max_asid) {
        c->generation++;
        c->next_asid = SVM_MIN_ASID;
        e.tlb_control = SVM_TLB_FLUSH_ALL;
    }
    v->asid = c->next_asid++;
    v->generation = c->generation;
    e.fresh = true;
    return e;
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

enum pause_hw svm_pause_hw_of(const struct virt_features *f)
{
    if (!f->pause_filter)
        return PAUSE_HW_EVERY;
    return f->pause_filter_thresh ? PAUSE_HW_FILTER_THRESH : PAUSE_HW_FILTER;
}

uint8_t svm_flush_tlb_control(const struct virt_features *f)
{
    return f->flush_by_asid ? SVM_TLB_FLUSH_ASID : SVM_TLB_FLUSH_NEW_ASID;
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "backend/svm/svm_intr.h"

#include "arch/x86/vmcb.h"

struct svm_hlt_bits svm_hlt_intercept(enum hlt_intercept mode, struct svm_hlt_bits in)
{
    struct svm_hlt_bits out = in;
    out.misc1 &= ~SVM_INTERCEPT_HLT;
    out.misc3 &= ~SVM_INTERCEPT_IDLE_HLT;
    if (mode == HLT_INTERCEPT_IDLE)
        out.misc3 |= SVM_INTERCEPT_IDLE_HLT;
    else
        out.misc1 |= SVM_INTERCEPT_HLT;
    return out;
}

uint32_t svm_cr8_write_intercept(uint32_t intercept_cr, int tpr, int max_irr)
{
    intercept_cr &= ~SVM_INTERCEPT_CR8_WRITE;
    if (max_irr >= 0 && max_irr <= tpr)
        intercept_cr |= SVM_INTERCEPT_CR8_WRITE;
    return intercept_cr;
}

uint64_t svm_vintr_offer(uint64_t vintr, int vector, uint32_t tpr, enum svm_virq_check check)
{
    const uint64_t fields = SVM_VINTR_V_TPR | SVM_VINTR_V_IRQ | SVM_VINTR_PRIO_MAX |
                            SVM_VINTR_IGN_TPR | SVM_VINTR_VECTOR_MASK;
    vintr = (vintr & ~fields) | ((tpr >> 4) & SVM_VINTR_V_TPR);
    if (vector < 0)
        return vintr;
    /* V_IGN_TPR stays clear: a guest raising CR8 without an exit holds the vector back. */
    unsigned prio = (unsigned)vector >> 4;
    if (check == SVM_VIRQ_AT_EQUAL && prio > 0)
        prio--;
    return vintr | SVM_VINTR_V_IRQ | ((uint64_t)prio << SVM_VINTR_PRIO_SHIFT) |
           ((uint64_t)(unsigned)vector << SVM_VINTR_VECTOR_SHIFT);
}

struct svm_vintr_exit svm_vintr_after_exit(int offered, uint64_t vintr, uint64_t exit_int_info)
{
    struct svm_vintr_exit r = {.taken = -1, .still_offered = -1, .reinject = 0};
    /* Whatever the exit interrupted, a taken V_IRQ included, is delivered again as it was. */
    if (exit_int_info & SVM_EVTINJ_VALID)
        r.reinject = exit_int_info;
    if (offered < 0)
        return r;
    if (vintr & SVM_VINTR_V_IRQ)
        r.still_offered = offered;
    else
        r.taken = offered;
    return r;
}

enum svm_virq_check svm_virq_classify(bool above_delivered, bool equal_delivered)
{
    if (!above_delivered)
        return SVM_VIRQ_NONE;
    return equal_delivered ? SVM_VIRQ_AT_EQUAL : SVM_VIRQ_EXACT;
}

const char *svm_virq_check_name(enum svm_virq_check c)
{
    switch (c) {
    case SVM_VIRQ_EXACT:
        return "exact";
    case SVM_VIRQ_AT_EQUAL:
        return "delivers_at_equal_tpr";
    case SVM_VIRQ_NONE:
        return "none";
    default:
        return "unprobed";
    }
}

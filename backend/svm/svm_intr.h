/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How SVM makes a guest's HLT exit, and virtual interrupts offered through
 * V_IRQ (docs/virtual_interrupts.md has the protocol). Pure, so host unit
 * tests run it (tests/unit/test_svm_intr.c): no emulator here has Idle HLT.
 *
 * An offered vector stays in the local APIC's IRR while the CPU holds it in
 * V_IRQ; the CPU delivers it by itself once the guest has IF=1, no
 * interrupt shadow and V_TPR below V_INTR_PRIO, clearing V_IRQ. At the next
 * exit pollux sees V_IRQ clear and moves the vector from IRR to ISR. If the
 * delivery was cut short by an intercept (a nested page fault on the IDT or
 * the stack), EXITINTINFO holds the vector: it stays in ISR and goes back
 * through EVENTINJ, like any event the exit interrupted; it is not in IRR
 * any more, so it is never offered twice.
 */
#ifndef POLLUX_BACKEND_SVM_SVM_INTR_H
#define POLLUX_BACKEND_SVM_SVM_INTR_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/virt.h"

/* The VMCB intercept words the HLT intercept mode touches. */
struct svm_hlt_bits {
    uint32_t misc1; /* offset 0x0C: bit 24 HLT */
    uint32_t misc3; /* offset 0x14: bit 6 Idle HLT */
};

/* misc1/misc3 with exactly one of the two HLT intercepts set, every other bit kept. */
struct svm_hlt_bits svm_hlt_intercept(enum hlt_intercept mode, struct svm_hlt_bits in);

/* What an exit says about the vector offered at VMRUN. */
struct svm_vintr_exit {
    int taken;         /* the vector the CPU took (to move from IRR to ISR), or -1 */
    int still_offered; /* the vector V_IRQ still holds, or -1 */
    uint64_t reinject; /* EVENTINJ for the next entry: the event the exit cut short, or 0 */
};

struct svm_vintr_exit svm_vintr_after_exit(int offered, uint64_t vintr, uint64_t exit_int_info);

/*
 * How a CPU compares V_INTR_PRIO with V_TPR, found by a probe at boot.
 * EXACT: delivers only when V_INTR_PRIO > V_TPR (the APM, Bochs 2.7).
 * AT_EQUAL: also at V_INTR_PRIO == V_TPR (QEMU 7.2 TCG), which would let
 * a guest take an interrupt its TPR masks. NONE: never delivers V_IRQ.
 */
enum svm_virq_check { SVM_VIRQ_EXACT, SVM_VIRQ_AT_EQUAL, SVM_VIRQ_NONE, SVM_VIRQ_UNPROBED };

/*
 * From the probe's two exits: one with V_INTR_PRIO above V_TPR, one with
 * them equal; each either took the VINTR intercept (the CPU would have
 * delivered) or ran into the HLT behind it.
 */
enum svm_virq_check svm_virq_classify(bool above_delivered, bool equal_delivered);

const char *svm_virq_check_name(enum svm_virq_check c);

/*
 * VMCB offset 0x60 with the V_IRQ fields of an offer of vector (-1: none)
 * at task priority tpr: V_TPR = TPR[7:4], V_INTR_PRIO = vector[7:4],
 * V_IGN_TPR = 0. On a CPU that delivers at V_INTR_PRIO == V_TPR, the
 * priority is one class lower, which makes its >= the APIC's >.
 */
uint64_t svm_vintr_offer(uint64_t vintr, int vector, uint32_t tpr, enum svm_virq_check check);

/*
 * The VMCB's CR intercept word (offset 0x00) with the CR8-write intercept set
 * exactly when the highest pending vector's class max_irr (IRR[7:4], -1: none)
 * is held back by the task priority tpr (CR8, TPR[7:4]): max_irr <= tpr. The
 * guest's MOV CR8 changes V_TPR without an exit otherwise, so lowering it
 * below that class would release the vector only at the next unrelated
 * exit. KVM's svm_update_cr8_intercept; every other bit kept.
 */
uint32_t svm_cr8_write_intercept(uint32_t intercept_cr, int tpr, int max_irr);

#endif

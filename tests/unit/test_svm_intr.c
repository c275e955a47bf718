/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The SVM HLT intercept bits and the V_IRQ protocol (backend/svm/svm_intr.c)
 * together with the local APIC's IRR/ISR (vmm/dev/vlapic.c). No emulator here
 * has Idle HLT, and none can cut a V_IRQ delivery short on demand, so these
 * are the checks of both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "arch/x86/vmcb.h"
#include "backend/svm/svm_intr.h"
#include "vmm/dev/vlapic.h"

_Static_assert(offsetof(struct vmcb, intercept_misc1) == 0x0c, "HLT intercept word");
_Static_assert(offsetof(struct vmcb, intercept_misc3) == 0x14, "Idle HLT intercept word");
_Static_assert(offsetof(struct vmcb, vintr) == 0x60, "V_IRQ word");
_Static_assert(offsetof(struct vmcb, intercept_cr) == 0x00, "CR intercept word");
_Static_assert(SVM_INTERCEPT_CR8_WRITE == 1u << (16 + 8), "CR8 write: bit 16 + 8");

static void test_hlt_intercept_bits(void **state)
{
    (void)state;
    struct svm_hlt_bits in = {.misc1 = 0x80000001u | (1u << 24), .misc3 = 0x5u};
    struct svm_hlt_bits idle = svm_hlt_intercept(HLT_INTERCEPT_IDLE, in);
    assert_int_equal(idle.misc1, 0x80000001u);      /* bit 24 (HLT) cleared */
    assert_int_equal(idle.misc3, 0x5u | (1u << 6)); /* bit 6 (Idle HLT) set */
    struct svm_hlt_bits plain = svm_hlt_intercept(HLT_INTERCEPT_PLAIN, idle);
    assert_int_equal(plain.misc1, 0x80000001u | (1u << 24));
    assert_int_equal(plain.misc3, 0x5u);
    struct svm_hlt_bits zero = svm_hlt_intercept(HLT_INTERCEPT_PLAIN, (struct svm_hlt_bits){0, 0});
    assert_int_equal(zero.misc1, 1u << 24);
    assert_int_equal(zero.misc3, 0);
}

static void test_offer_fields(void **state)
{
    (void)state;
    uint64_t vintr = svm_vintr_offer(SVM_VINTR_MASKING, 0x51, 0x35, SVM_VIRQ_EXACT);
    assert_int_equal(vintr & 0xf, 3);             /* V_TPR = TPR[7:4] */
    assert_true(vintr & (1ull << 8));             /* V_IRQ */
    assert_int_equal((vintr >> 16) & 0xf, 5);     /* V_INTR_PRIO = vector[7:4] */
    assert_false(vintr & (1ull << 20));           /* V_IGN_TPR = 0 */
    assert_true(vintr & (1ull << 24));            /* V_INTR_MASKING kept */
    assert_int_equal((vintr >> 32) & 0xff, 0x51); /* V_INTR_VECTOR */
    /* Withdrawn: no V_IRQ, no stale priority or vector, V_TPR and masking kept. */
    uint64_t none = svm_vintr_offer(vintr | SVM_VINTR_IGN_TPR, -1, 0x35, SVM_VIRQ_EXACT);
    assert_int_equal(none, SVM_VINTR_MASKING | 3);
}

/* The APM's check (and Bochs'), and QEMU 7.2's. */
static bool delivers_exact(uint64_t vintr)
{
    return (vintr & SVM_VINTR_V_IRQ) && ((vintr >> 16) & 0xf) > (vintr & 0xf);
}

static bool delivers_at_equal(uint64_t vintr)
{
    return (vintr & SVM_VINTR_V_IRQ) && ((vintr >> 16) & 0xf) >= (vintr & 0xf);
}

/*
 * With the class-lower priority, a CPU that delivers at equal priority takes
 * an offered vector for exactly the guest TPRs the APIC would: after any CR8
 * the guest writes without an exit.
 */
static void test_at_equal_compensated(void **state)
{
    (void)state;
    for (int vector = 16; vector < 256; vector++) {
        for (uint32_t offer_tpr = 0; offer_tpr < 0x100; offer_tpr += 0x10) {
            uint64_t exact = svm_vintr_offer(0, vector, offer_tpr, SVM_VIRQ_EXACT);
            uint64_t lowered = svm_vintr_offer(0, vector, offer_tpr, SVM_VIRQ_AT_EQUAL);
            for (uint64_t cr8 = 0; cr8 < 16; cr8++) {
                uint64_t e = (exact & ~0xfull) | cr8, l = (lowered & ~0xfull) | cr8;
                bool apic = ((unsigned)vector >> 4) > cr8;
                assert_int_equal(delivers_exact(e), apic);
                assert_int_equal(delivers_at_equal(l), apic);
                /* Uncompensated, the equal case goes wrong. */
                if (((unsigned)vector >> 4) == cr8)
                    assert_true(delivers_at_equal(e));
            }
        }
    }
}

static struct vlapic apic(void)
{
    struct vlapic a;
    vlapic_reset(&a, 0, true, 48);
    uint32_t svr = 0x1ff;
    struct vlapic_ipi ipi;
    bool out;
    assert_true(vlapic_mmio_write(&a, 0xf0, svr, 0, &ipi, &out));
    return a;
}

static bool in_irr(const struct vlapic *a, int v)
{
    return (a->irr[v / 32] >> (v % 32)) & 1;
}

static bool in_isr(const struct vlapic *a, int v)
{
    return (a->isr[v / 32] >> (v % 32)) & 1;
}

static void test_taken_moves_irr_to_isr(void **state)
{
    (void)state;
    struct vlapic a = apic();
    vlapic_accept(&a, 0x40);
    int offered = vlapic_highest_pending(&a);
    assert_int_equal(offered, 0x40);
    uint64_t vintr = svm_vintr_offer(SVM_VINTR_MASKING, offered, a.tpr, SVM_VIRQ_EXACT);
    /* An exit before the guest could take it: V_IRQ still set, nothing moves. */
    struct svm_vintr_exit x = svm_vintr_after_exit(offered, vintr, 0);
    assert_int_equal(x.taken, -1);
    assert_int_equal(x.still_offered, 0x40);
    assert_int_equal(x.reinject, 0);
    /* The CPU took it: V_IRQ clear. */
    x = svm_vintr_after_exit(offered, vintr & ~SVM_VINTR_V_IRQ, 0);
    assert_int_equal(x.taken, 0x40);
    assert_int_equal(x.still_offered, -1);
    assert_int_equal(x.reinject, 0);
    vlapic_ack(&a, (uint8_t)x.taken);
    assert_false(in_irr(&a, 0x40));
    assert_true(in_isr(&a, 0x40));
    assert_int_equal(vlapic_highest_pending(&a), -1); /* never offered twice */
}

/*
 * Issue 37 (kvm-unit-tests' vmexit ipi): the CPU takes an offered vector
 * without an exit, so until the exit its IRR bit may stand for an interrupt
 * already in the handler. The same vector sent then pends again once the
 * exit says it was taken; one sent while it was still waiting merges.
 */
static void test_resent_while_offered(void **state)
{
    (void)state;
    struct vlapic a = apic();
    assert_true(vlapic_accept(&a, 0x40));
    vlapic_offer(&a, vlapic_highest_pending(&a));
    assert_true(vlapic_accept(&a, 0x40)); /* a new interrupt: its sender kicks the vCPU */
    vlapic_offer_end(&a, 0x40);
    assert_true(in_isr(&a, 0x40));
    assert_true(in_irr(&a, 0x40));
    assert_int_equal(vlapic_highest_pending(&a), -1); /* after the EOI */
    assert_false(vlapic_accept(&a, 0x40)); /* nothing offered now: it merges, as on hardware */
    struct vlapic_ipi ipi;
    bool out;
    vlapic_mmio_write(&a, 0xb0, 0, 0, &ipi, &out); /* EOI */
    assert_int_equal(vlapic_highest_pending(&a), 0x40);
    /* Offered and not taken (the guest kept IF=0): the second merges with it. */
    vlapic_offer(&a, 0x40);
    assert_true(vlapic_accept(&a, 0x40));
    vlapic_offer_end(&a, -1);
    assert_false(in_isr(&a, 0x40));
    vlapic_offer_end(&a, 0x40); /* taken at last, once */
    assert_true(in_isr(&a, 0x40));
    assert_false(in_irr(&a, 0x40));
}

static void test_cut_short_reinjected_not_reoffered(void **state)
{
    (void)state;
    struct vlapic a = apic();
    vlapic_accept(&a, 0x40);
    uint64_t vintr = svm_vintr_offer(SVM_VINTR_MASKING, 0x40, 0, SVM_VIRQ_EXACT);
    /* Delivery hit a nested page fault on the IDT: EXITINTINFO holds the vector. */
    uint64_t info = 0x40 | SVM_EVTINJ_TYPE_INTR | SVM_EVTINJ_VALID;
    struct svm_vintr_exit x = svm_vintr_after_exit(0x40, vintr & ~SVM_VINTR_V_IRQ, info);
    assert_int_equal(x.taken, 0x40);
    assert_int_equal(x.reinject, info); /* EVENTINJ at the next entry */
    vlapic_ack(&a, (uint8_t)x.taken);
    assert_true(in_isr(&a, 0x40)); /* stays in service while it is re-delivered */
    assert_int_equal(vlapic_highest_pending(&a), -1);
    /* Nothing offered at the next entry: only EVENTINJ carries it. */
    uint64_t next = svm_vintr_offer(vintr & ~SVM_VINTR_V_IRQ, vlapic_highest_pending(&a), a.tpr,
                                    SVM_VIRQ_EXACT);
    assert_false(next & SVM_VINTR_V_IRQ);
    /* An exit that cut short some other event, with nothing offered, is re-delivered too. */
    uint64_t nmi = 2 | SVM_EVTINJ_TYPE_NMI | SVM_EVTINJ_VALID;
    x = svm_vintr_after_exit(-1, 0, nmi);
    assert_int_equal(x.taken, -1);
    assert_int_equal(x.reinject, nmi);
}

static void test_higher_vector_replaces_offer(void **state)
{
    (void)state;
    struct vlapic a = apic();
    vlapic_accept(&a, 0x40);
    uint64_t vintr =
        svm_vintr_offer(SVM_VINTR_MASKING, vlapic_highest_pending(&a), 0, SVM_VIRQ_EXACT);
    /* Not taken yet (guest IF=0); 0x60 arrives and the next entry offers it instead. */
    struct svm_vintr_exit x = svm_vintr_after_exit(0x40, vintr, 0);
    assert_int_equal(x.still_offered, 0x40);
    vlapic_accept(&a, 0x60);
    int offered = vlapic_highest_pending(&a);
    assert_int_equal(offered, 0x60);
    vintr = svm_vintr_offer(vintr, offered, a.tpr, SVM_VIRQ_EXACT);
    assert_int_equal((vintr >> 32) & 0xff, 0x60);
    assert_int_equal((vintr >> 16) & 0xf, 6);
    assert_true(in_irr(&a, 0x40)); /* the replaced one was never taken */
    x = svm_vintr_after_exit(offered, vintr & ~SVM_VINTR_V_IRQ, 0);
    assert_int_equal(x.taken, 0x60);
    vlapic_ack(&a, 0x60);
    /* 0x60 in service blocks 0x40 (PPR): not offered until its EOI. */
    assert_int_equal(vlapic_highest_pending(&a), -1);
    struct vlapic_ipi ipi;
    bool out;
    vlapic_mmio_write(&a, 0xb0, 0, 0, &ipi, &out); /* EOI */
    assert_int_equal(vlapic_highest_pending(&a), 0x40);
}

static void test_tpr_masking(void **state)
{
    (void)state;
    struct vlapic a = apic();
    struct vlapic_ipi ipi;
    bool out;
    vlapic_accept(&a, 0x45);
    vlapic_mmio_write(&a, 0x80, 0x40, 0, &ipi, &out); /* TPR class 4: masks class 4 */
    assert_int_equal(vlapic_highest_pending(&a), -1);
    uint64_t vintr =
        svm_vintr_offer(SVM_VINTR_MASKING, vlapic_highest_pending(&a), a.tpr, SVM_VIRQ_EXACT);
    assert_false(vintr & SVM_VINTR_V_IRQ);
    assert_int_equal(vintr & 0xf, 4);
    vlapic_mmio_write(&a, 0x80, 0x3f, 0, &ipi, &out);
    int v = vlapic_highest_pending(&a);
    assert_int_equal(v, 0x45);
    vintr = svm_vintr_offer(vintr, v, a.tpr, SVM_VIRQ_EXACT);
    assert_true(delivers_exact(vintr));
    /* The guest raising CR8 to 4 without an exit holds it back on the CPU. */
    assert_false(delivers_exact((vintr & ~0xfull) | 4));
}

/*
 * The CR8-write intercept is on exactly while the TPR holds the highest IRR
 * vector back (its class <= CR8): every CR8 the guest then writes exits,
 * the one that releases it included; with nothing held back, none does.
 */
static void test_cr8_write_intercept(void **state)
{
    (void)state;
    const uint32_t others = 0xffffffffu & ~SVM_INTERCEPT_CR8_WRITE;
    for (int tpr = 0; tpr < 16; tpr++) {
        assert_int_equal(svm_cr8_write_intercept(0, tpr, -1), 0);
        assert_int_equal(svm_cr8_write_intercept(0xffffffffu, tpr, -1), others);
        for (int irr = 1; irr < 16; irr++) {
            bool held_back = irr <= tpr;
            uint32_t cr = svm_cr8_write_intercept(0, tpr, irr);
            assert_int_equal(cr, held_back ? SVM_INTERCEPT_CR8_WRITE : 0);
            assert_int_equal(svm_cr8_write_intercept(others, tpr, irr),
                             others | (held_back ? SVM_INTERCEPT_CR8_WRITE : 0));
            /* Cleared again once nothing is held back. */
            assert_int_equal(svm_cr8_write_intercept(cr, tpr, held_back ? -1 : irr), 0);
        }
    }
}

/*
 * The case of docs/virtual_interrupts.md: CR8 = 15 holds a vector of class 4
 * back, so it is not offered; the intercept makes the guest's MOV CR8 exit
 * instead of changing only V_TPR, and after it the vector is deliverable
 * and the intercept comes off.
 */
static void test_cr8_lowering_releases_held_back(void **state)
{
    (void)state;
    struct vlapic a = apic();
    a.tpr = 15 << 4;
    vlapic_accept(&a, 0x42);
    assert_int_equal(vlapic_highest_pending(&a), -1);
    assert_int_equal(vlapic_highest_irr(&a), 0x42);
    uint64_t vintr =
        svm_vintr_offer(SVM_VINTR_MASKING, vlapic_highest_pending(&a), a.tpr, SVM_VIRQ_EXACT);
    assert_false(vintr & SVM_VINTR_V_IRQ);
    uint32_t cr = svm_cr8_write_intercept(0, (int)(a.tpr >> 4), vlapic_highest_irr(&a) >> 4);
    assert_true(cr & SVM_INTERCEPT_CR8_WRITE);
    a.tpr = 0; /* the intercepted MOV CR8, 0 */
    int v = vlapic_highest_pending(&a);
    assert_int_equal(v, 0x42);
    assert_false(svm_cr8_write_intercept(cr, 0, v >> 4) & SVM_INTERCEPT_CR8_WRITE);
    /* Held back by the in-service vector alone, not by the TPR: no CR8 write can release it. */
    vlapic_accept(&a, 0x61);
    vlapic_ack(&a, 0x61);
    assert_int_equal(vlapic_highest_pending(&a), -1);
    assert_false(svm_cr8_write_intercept(0, 0, vlapic_highest_irr(&a) >> 4) &
                 SVM_INTERCEPT_CR8_WRITE);
}

static void test_probe_classification(void **state)
{
    (void)state;
    assert_int_equal(svm_virq_classify(true, false), SVM_VIRQ_EXACT);
    assert_int_equal(svm_virq_classify(true, true), SVM_VIRQ_AT_EQUAL);
    assert_int_equal(svm_virq_classify(false, false), SVM_VIRQ_NONE);
    assert_int_equal(svm_virq_classify(false, true), SVM_VIRQ_NONE);
    assert_string_equal(svm_virq_check_name(SVM_VIRQ_EXACT), "exact");
    assert_string_equal(svm_virq_check_name(SVM_VIRQ_AT_EQUAL), "delivers_at_equal_tpr");
    assert_string_equal(svm_virq_check_name(SVM_VIRQ_NONE), "none");
    assert_string_equal(svm_virq_check_name(SVM_VIRQ_UNPROBED), "unprobed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hlt_intercept_bits),
        cmocka_unit_test(test_offer_fields),
        cmocka_unit_test(test_at_equal_compensated),
        cmocka_unit_test(test_taken_moves_irr_to_isr),
        cmocka_unit_test(test_resent_while_offered),
        cmocka_unit_test(test_cut_short_reinjected_not_reoffered),
        cmocka_unit_test(test_higher_vector_replaces_offer),
        cmocka_unit_test(test_tpr_masking),
        cmocka_unit_test(test_cr8_write_intercept),
        cmocka_unit_test(test_cr8_lowering_releases_held_back),
        cmocka_unit_test(test_probe_classification),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

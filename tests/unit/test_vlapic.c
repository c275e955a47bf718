/* SPDX-License-Identifier: GPL-2.0-only */
/* The virtual local APIC's register semantics: priorities, IPIs, destinations, timer, modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vmm/dev/vlapic.h"

#define ID_REG   0x020
#define VER      0x030
#define TPR      0x080
#define APR      0x090
#define PPR      0x0a0
#define EOI      0x0b0
#define LDR      0x0d0
#define DFR      0x0e0
#define SVR      0x0f0
#define ISR      0x100
#define TMR      0x180
#define IRR      0x200
#define ESR      0x280
#define ICR_LO   0x300
#define ICR_HI   0x310
#define LVT_TMR  0x320
#define LVT_THM  0x330
#define LVT_PERF 0x340
#define LINT0    0x350
#define LINT1    0x360
#define LVT_ERR  0x370
#define TMICT    0x380
#define TMCCT    0x390
#define TDCR     0x3e0

#define MASKED   0x10000u
#define PERIODIC (1u << 17)
#define TSCDL    (2u << 17)
#define BASE     ((uint64_t)VLAPIC_BASE_DEFAULT)
#define EN       ((uint64_t)APIC_BASE_ENABLE)
#define EXTD     ((uint64_t)APIC_BASE_EXTD)
#define BSP      ((uint64_t)APIC_BASE_BSP)

#define MAXPHYADDR 40          /* the vCPU's physical address bits */
#define MOVED      0xfed40000u /* somewhere else for the xAPIC page */

static struct vlapic a;
static struct vlapic_ipi ipi;
static bool sent;

static const uint32_t lvts[] = {LVT_TMR, LVT_THM, LVT_PERF, LINT0, LINT1, LVT_ERR};

static int setup(void **state)
{
    (void)state;
    memset(&a, 0xaa, sizeof(a)); /* reset must not rely on a zeroed struct */
    vlapic_reset(&a, 3, true, MAXPHYADDR);
    memset(&ipi, 0, sizeof(ipi));
    sent = false;
    return 0;
}

static uint32_t rd(uint32_t off, uint64_t now)
{
    uint32_t v = 0xdeadbeef;
    assert_true(vlapic_mmio_read(&a, off, &v, now));
    return v;
}

static void wr(uint32_t off, uint32_t v, uint64_t now)
{
    assert_true(vlapic_mmio_write(&a, off, v, now, &ipi, &sent));
}

static bool mrd(uint32_t msr, uint64_t *v)
{
    return vlapic_msr_read(&a, msr, v, 0);
}

static uint64_t mrd_ok(uint32_t msr, uint64_t now)
{
    uint64_t v = 0xdeadbeef;
    assert_true(vlapic_msr_read(&a, msr, &v, now));
    return v;
}

static bool mwr(uint32_t msr, uint64_t v, uint64_t now)
{
    return vlapic_msr_write(&a, msr, v, now, &ipi, &sent);
}

static void sw_enable(void)
{
    wr(SVR, 0x1ff, 0);
}

static void to_x2apic(void)
{
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN | EXTD, 0));
    assert_true(vlapic_x2apic(&a));
}

static bool irr_has(unsigned v)
{
    return (a.irr[v / 32] >> (v % 32)) & 1;
}

static bool isr_has(unsigned v)
{
    return (a.isr[v / 32] >> (v % 32)) & 1;
}

/* ---------------------------------------------------------------- reset */

static void test_reset_values(void **state)
{
    (void)state;
    assert_int_equal(a.id, 3);
    assert_int_equal(a.apic_base, BASE | EN | BSP);
    assert_true(vlapic_enabled(&a));
    assert_false(vlapic_sw_enabled(&a));
    assert_false(vlapic_x2apic(&a));
    assert_int_equal(rd(ID_REG, 0), 3u << 24);
    assert_int_equal(rd(VER, 0), 0x50014);
    assert_int_equal(rd(TPR, 0), 0);
    assert_int_equal(rd(APR, 0), 0);
    assert_int_equal(rd(PPR, 0), 0);
    assert_int_equal(rd(LDR, 0), 0);
    assert_int_equal(rd(DFR, 0), 0xffffffffu);
    assert_int_equal(rd(SVR, 0), 0xff);
    assert_int_equal(rd(ESR, 0), 0);
    assert_int_equal(rd(ICR_LO, 0), 0);
    assert_int_equal(rd(ICR_HI, 0), 0);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(rd(lvts[i], 0), MASKED);
    assert_int_equal(rd(TMICT, 0), 0);
    assert_int_equal(rd(TMCCT, 0), 0);
    assert_int_equal(rd(TDCR, 0), 0);
    for (uint32_t i = 0; i < 8; i++) {
        assert_int_equal(rd(ISR + i * 16, 0), 0);
        assert_int_equal(rd(TMR + i * 16, 0), 0);
        assert_int_equal(rd(IRR + i * 16, 0), 0);
    }
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_int_equal(vlapic_highest_pending(&a), -1);
    assert_int_equal(mrd_ok(MSR_IA32_APIC_BASE, 0), BASE | EN | BSP);
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 0), 0);

    vlapic_reset(&a, 7, false, MAXPHYADDR);
    assert_int_equal(a.apic_base, BASE | EN);
    assert_int_equal(rd(ID_REG, 0), 7u << 24);
}

/* ---------------------------------------------------------------- priority */

static void test_accept_needs_enabled_apic(void **state)
{
    (void)state;
    assert_false(vlapic_accept(&a, 0x40)); /* software-disabled after reset */
    assert_false(irr_has(0x40));
    sw_enable();
    assert_true(vlapic_accept(&a, 0x40));
    assert_false(vlapic_accept(&a, 0x40)); /* already pending */
    assert_true(irr_has(0x40));
    assert_int_equal(rd(IRR + 0x20, 0), 1u << 0);
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE, 0));
    assert_false(vlapic_accept(&a, 0x41));
}

static void test_accept_clears_tmr(void **state)
{
    (void)state;
    sw_enable();
    a.tmr[1] = 1u << 16; /* vector 0x30 left level-triggered */
    assert_true(vlapic_accept(&a, 0x30));
    assert_int_equal(a.tmr[1], 0);
}

static void test_nested_priority_and_eoi_order(void **state)
{
    (void)state;
    sw_enable();
    vlapic_accept(&a, 0x31);
    vlapic_accept(&a, 0x52);
    assert_int_equal(vlapic_highest_pending(&a), 0x52);
    vlapic_ack(&a, 0x52);
    assert_false(irr_has(0x52));
    assert_true(isr_has(0x52));
    assert_int_equal(vlapic_ppr(&a), 0x50);
    assert_int_equal(rd(PPR, 0), 0x50);
    assert_int_equal(vlapic_highest_pending(&a), -1); /* 0x31 is below the ISR class */

    vlapic_accept(&a, 0x55); /* same class as in service: held */
    assert_int_equal(vlapic_highest_pending(&a), -1);
    vlapic_accept(&a, 0x61);
    assert_int_equal(vlapic_highest_pending(&a), 0x61);
    vlapic_ack(&a, 0x61);
    assert_int_equal(vlapic_ppr(&a), 0x60);
    assert_int_equal(rd(ISR + 0x30, 0), 1u << 1);
    assert_int_equal(rd(ISR + 0x20, 0), 1u << 18);

    wr(EOI, 0x12345678, 0); /* any value in xAPIC mode; the highest ISR vector goes */
    assert_false(isr_has(0x61));
    assert_true(isr_has(0x52));
    assert_int_equal(vlapic_ppr(&a), 0x50);
    assert_int_equal(vlapic_highest_pending(&a), -1);
    wr(EOI, 0, 0);
    assert_false(isr_has(0x52));
    assert_int_equal(vlapic_ppr(&a), 0);
    assert_int_equal(vlapic_highest_pending(&a), 0x55);
    vlapic_ack(&a, 0x55);
    assert_int_equal(vlapic_highest_pending(&a), -1);
    wr(EOI, 0, 0);
    assert_int_equal(vlapic_highest_pending(&a), 0x31);
    vlapic_ack(&a, 0x31);
    assert_int_equal(vlapic_ppr(&a), 0x30);
    wr(EOI, 0, 0);
    wr(EOI, 0, 0); /* ISR empty: nothing happens */
    assert_int_equal(rd(ISR + 0x30, 0) | rd(ISR + 0x50, 0), 0);
    assert_int_equal(vlapic_ppr(&a), 0);
}

static void test_tpr_and_ppr(void **state)
{
    (void)state;
    sw_enable();
    wr(TPR, 0x12345645, 0);
    assert_int_equal(rd(TPR, 0), 0x45); /* bits 31:8 reserved */
    assert_int_equal(vlapic_ppr(&a), 0x45);
    vlapic_accept(&a, 0x4f);
    assert_int_equal(vlapic_highest_pending(&a), -1); /* class 4 is not above 4 */
    vlapic_accept(&a, 0x50);
    assert_int_equal(vlapic_highest_pending(&a), 0x50);
    vlapic_ack(&a, 0x50);
    vlapic_ack(&a, 0x4f);
    wr(EOI, 0, 0); /* EOI takes 0x50, the highest, not the last acked */
    assert_true(isr_has(0x4f));
    assert_false(isr_has(0x50));
    assert_int_equal(vlapic_ppr(&a), 0x45); /* TPR class 4 >= ISR class 4 */

    vlapic_accept(&a, 0x62);
    vlapic_ack(&a, 0x62);
    assert_int_equal(vlapic_ppr(&a), 0x60);
    wr(TPR, 0x7a, 0);
    assert_int_equal(vlapic_ppr(&a), 0x7a);
    vlapic_accept(&a, 0x7f);
    assert_int_equal(vlapic_highest_pending(&a), -1);
    vlapic_accept(&a, 0x80);
    assert_int_equal(vlapic_highest_pending(&a), 0x80);
    wr(TPR, 0xff, 0);
    assert_int_equal(vlapic_highest_pending(&a), -1);
}

static void test_vector_255(void **state)
{
    (void)state;
    sw_enable();
    assert_true(vlapic_accept(&a, 0xff));
    assert_int_equal(rd(IRR + 0x70, 0), 1u << 31);
    assert_int_equal(vlapic_highest_pending(&a), 0xff);
    vlapic_ack(&a, 0xff);
    assert_int_equal(vlapic_ppr(&a), 0xf0);
    wr(EOI, 0, 0);
    assert_int_equal(rd(ISR + 0x70, 0), 0);
}

/* ---------------------------------------------------------------- ESR */

static void test_illegal_vectors_set_esr(void **state)
{
    (void)state;
    sw_enable();
    for (unsigned v = 0; v < 16; v++)
        assert_false(vlapic_accept(&a, (uint8_t)v));
    assert_int_equal(a.irr[0], 0);
    assert_int_equal(rd(ESR, 0), 0x40);
    wr(ESR, 0, 0);
    assert_int_equal(rd(ESR, 0), 0);

    wr(ICR_LO, 0x0000000f, 0); /* fixed, vector 15 */
    assert_false(sent);
    assert_int_equal(rd(ESR, 0), 0x20);
    wr(ICR_LO, 0x00000105, 0); /* lowest priority, vector 5 */
    assert_false(sent);
    wr(ESR, 0xffffffff, 0);
    assert_int_equal(rd(ESR, 0), 0);
    wr(ICR_LO, 0x00000400, 0); /* NMI: the vector is ignored */
    assert_true(sent);
    assert_int_equal(ipi.mode, APIC_DM_NMI);
    wr(ICR_LO, 0x00000600, 0); /* SIPI vector 0 is page 0, legal */
    assert_true(sent);
    assert_int_equal(rd(ESR, 0), 0);
    wr(ICR_LO, 0x00000010, 0);
    assert_true(sent);
    assert_int_equal(rd(ESR, 0), 0);
}

static void test_esr_sw_disabled_accept_ignored(void **state)
{
    (void)state;
    assert_false(vlapic_accept(&a, 3)); /* ignored entirely while software-disabled */
    assert_int_equal(rd(ESR, 0), 0);
}

static void test_error_interrupt(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_ERR, 0xfe, 0);
    vlapic_accept(&a, 2);
    assert_int_equal(rd(ESR, 0), 0x40);
    assert_int_equal(vlapic_highest_pending(&a), 0xfe);
    wr(ESR, 0, 0);
    vlapic_ack(&a, 0xfe);
    wr(EOI, 0, 0);

    wr(LVT_ERR, 0x05, 0); /* an illegal error vector: only the receive bit is added */
    wr(ICR_LO, 0x3, 0);
    assert_int_equal(rd(ESR, 0), 0x60);
    assert_int_equal(vlapic_highest_pending(&a), -1);
    assert_int_equal(a.irr[0], 0);
}

/* ---------------------------------------------------------------- ICR */

static const unsigned modes[] = {APIC_DM_FIXED, APIC_DM_LOWEST, APIC_DM_SMI,
                                 APIC_DM_NMI,   APIC_DM_INIT,   APIC_DM_STARTUP};

static void test_icr_xapic_every_field(void **state)
{
    (void)state;
    wr(ICR_HI, 0xab123456, 0); /* only bits 31:24 exist */
    assert_false(sent);
    assert_int_equal(rd(ICR_HI, 0), 0xab000000);
    for (size_t m = 0; m < 6; m++)
        for (unsigned logical = 0; logical < 2; logical++)
            for (unsigned level = 0; level < 2; level++)
                for (unsigned sh = 0; sh < 4; sh++) {
                    uint32_t lo = (0x20 + (uint32_t)m) | modes[m] << 8 | logical << 11 |
                                  level << 14 | sh << 18;
                    memset(&ipi, 0xff, sizeof(ipi));
                    wr(ICR_LO, lo, 0);
                    assert_true(sent);
                    assert_int_equal(ipi.vector, 0x20 + m);
                    assert_int_equal(ipi.mode, modes[m]);
                    assert_int_equal(ipi.logical, logical);
                    assert_int_equal(ipi.level, level);
                    assert_int_equal(ipi.shorthand, sh);
                    assert_int_equal(ipi.dest, 0xab);
                    assert_int_equal(rd(ICR_LO, 0), lo);
                }
}

static void test_icr_xapic_readback_and_reserved(void **state)
{
    (void)state;
    wr(ICR_HI, 0x01000000, 0);
    wr(ICR_LO, 0xffffffff & ~0x700u, 0); /* fixed, every other bit set */
    assert_true(sent);
    assert_int_equal(ipi.vector, 0xff);
    assert_int_equal(ipi.shorthand, APIC_DEST_ALL_BUT_SELF);
    assert_int_equal(ipi.dest, 1);
    /* Delivery status (12) reads 0: delivery is immediate; reserved bits are dropped. */
    assert_int_equal(rd(ICR_LO, 0), 0x000cc8ff);
    assert_int_equal(rd(ICR_LO, 0) & (1u << 12), 0);

    wr(ICR_LO, 0x00000330, 0); /* delivery mode 3: reserved */
    assert_false(sent);
    wr(ICR_LO, 0x00000730, 0); /* delivery mode 7: reserved */
    assert_false(sent);
    assert_int_equal(rd(ESR, 0), 0);
}

static void test_icr_xapic_sw_disabled_still_sends(void **state)
{
    (void)state;
    wr(ICR_HI, 0x02000000, 0);
    wr(ICR_LO, 0x0000c500, 0); /* INIT assert, level */
    assert_true(sent);
    assert_int_equal(ipi.mode, APIC_DM_INIT);
    assert_true(ipi.level);
    assert_int_equal(ipi.dest, 2);
}

static void test_icr_x2apic_every_field(void **state)
{
    (void)state;
    to_x2apic();
    for (size_t m = 0; m < 6; m++)
        for (unsigned logical = 0; logical < 2; logical++)
            for (unsigned level = 0; level < 2; level++)
                for (unsigned sh = 0; sh < 4; sh++) {
                    uint64_t lo = (0x90 + (uint32_t)m) | modes[m] << 8 | logical << 11 |
                                  level << 14 | sh << 18;
                    uint64_t v = 0x12345678ull << 32 | lo;
                    memset(&ipi, 0xff, sizeof(ipi));
                    assert_true(mwr(0x830, v, 0));
                    assert_true(sent);
                    assert_int_equal(ipi.vector, 0x90 + m);
                    assert_int_equal(ipi.mode, modes[m]);
                    assert_int_equal(ipi.logical, logical);
                    assert_int_equal(ipi.level, level);
                    assert_int_equal(ipi.shorthand, sh);
                    assert_int_equal(ipi.dest, 0x12345678);
                    assert_int_equal(mrd_ok(0x830, 0), v);
                }
    assert_true(mwr(0x830, 0xffffffffull << 32 | 0x40, 0));
    assert_int_equal(ipi.dest, 0xffffffffu);
}

static void test_icr_x2apic_reserved_bits(void **state)
{
    (void)state;
    uint64_t v;
    to_x2apic();
    static const uint32_t reserved[] = {1u << 13, 1u << 16, 1u << 17, 1u << 20, 1u << 31};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
        assert_false(mwr(0x830, 0x40 | reserved[i], 0));
        assert_false(sent);
    }
    assert_int_equal(mrd_ok(0x830, 0), 0);
    assert_true(mwr(0x830, 0x40 | 1u << 12, 0)); /* delivery status is read-only */
    assert_true(sent);
    assert_int_equal(mrd_ok(0x830, 0), 0x40);
    assert_false(mwr(0x831, 0, 0));
    assert_false(mrd(0x831, &v));
    assert_int_equal(v, 0);
    assert_true(mwr(0x830, 0x05, 0)); /* illegal vector: ESR, no IPI */
    assert_false(sent);
    assert_int_equal(mrd_ok(0x828, 0), 0x20);
}

static void test_self_ipi(void **state)
{
    (void)state;
    uint64_t v;
    assert_false(mwr(0x83f, 0x40, 0)); /* x2APIC only */
    assert_false(vlapic_mmio_write(&a, 0x3f0, 0x40, 0, &ipi, &sent));
    to_x2apic();
    assert_true(mwr(0x83f, 0x40, 0));
    assert_true(sent);
    assert_int_equal(ipi.vector, 0x40);
    assert_int_equal(ipi.mode, APIC_DM_FIXED);
    assert_int_equal(ipi.shorthand, APIC_DEST_SELF);
    assert_false(ipi.logical);
    assert_int_equal(ipi.dest, 3);
    assert_false(mrd(0x83f, &v)); /* write-only */
    assert_false(mwr(0x83f, 0x140, 0));
    assert_false(mwr(0x83f, 1ull << 32 | 0x40, 0));
    assert_false(sent);
    assert_true(mwr(0x83f, 0x0e, 0)); /* illegal vector */
    assert_false(sent);
    assert_int_equal(mrd_ok(0x828, 0), 0x20);
}

/* ---------------------------------------------------------------- destinations */

static void test_match_physical_xapic(void **state)
{
    (void)state;
    assert_true(vlapic_match_dest(&a, 3, false));
    assert_false(vlapic_match_dest(&a, 4, false));
    assert_false(vlapic_match_dest(&a, 0, false));
    assert_true(vlapic_match_dest(&a, 0xff, false));
    assert_true(vlapic_match_dest(&a, 0x103, false)); /* 8-bit compare */
    vlapic_reset(&a, 0x1ff, false, MAXPHYADDR);       /* an ID above 255: its low byte */
    assert_true(vlapic_match_dest(&a, 0xff, false));
    vlapic_reset(&a, 0x105, false, MAXPHYADDR);
    assert_true(vlapic_match_dest(&a, 5, false));
}

static void test_match_logical_flat(void **state)
{
    (void)state;
    assert_false(vlapic_match_dest(&a, 0x01, true)); /* LDR 0 */
    assert_true(vlapic_match_dest(&a, 0xff, true));  /* broadcast matches even LDR 0 */
    wr(LDR, 0x0c345678, 0);
    assert_int_equal(rd(LDR, 0), 0x0c000000); /* bits 23:0 reserved */
    assert_true(vlapic_match_dest(&a, 0x04, true));
    assert_true(vlapic_match_dest(&a, 0x08, true));
    assert_true(vlapic_match_dest(&a, 0x85, true));
    assert_false(vlapic_match_dest(&a, 0x03, true));
    assert_false(vlapic_match_dest(&a, 0xf0, true));
    assert_true(vlapic_match_dest(&a, 0xff, true));
    assert_false(vlapic_match_dest(&a, 0x0c, false)); /* physical compares the ID */
}

static void test_match_logical_cluster(void **state)
{
    (void)state;
    wr(DFR, 0x00000000, 0);
    assert_int_equal(rd(DFR, 0), 0x0fffffff); /* bits 27:0 read as ones */
    wr(LDR, 0x32000000, 0);                   /* cluster 3, member bit 1 */
    assert_true(vlapic_match_dest(&a, 0x32, true));
    assert_true(vlapic_match_dest(&a, 0x36, true));
    assert_true(vlapic_match_dest(&a, 0x3f, true));
    assert_false(vlapic_match_dest(&a, 0x31, true));
    assert_false(vlapic_match_dest(&a, 0x22, true));
    assert_false(vlapic_match_dest(&a, 0x30, true));
    assert_true(vlapic_match_dest(&a, 0xff, true));
    wr(DFR, 0x50000000, 0); /* neither flat nor cluster */
    assert_false(vlapic_match_dest(&a, 0x32, true));
    assert_true(vlapic_match_dest(&a, 0xff, true));
    wr(DFR, 0xffffffff, 0);
    assert_true(vlapic_match_dest(&a, 0x22, true)); /* flat again: bit 1 of 0x32 */
}

static void test_match_x2apic(void **state)
{
    (void)state;
    uint64_t v;
    vlapic_reset(&a, 0x123, false, MAXPHYADDR);
    to_x2apic();
    /* Cluster 0x12, bit 3. */
    assert_int_equal(mrd_ok(0x80d, 0), 0x00120008);
    assert_false(mwr(0x80d, 0x00120008, 0));
    assert_false(mrd(0x80e, &v));
    assert_true(vlapic_match_dest(&a, 0x123, false));
    assert_false(vlapic_match_dest(&a, 0x23, false));
    assert_false(vlapic_match_dest(&a, 0xff, false)); /* not a broadcast in x2APIC mode */
    assert_true(vlapic_match_dest(&a, 0xffffffffu, false));
    assert_true(vlapic_match_dest(&a, 0x00120008, true));
    assert_true(vlapic_match_dest(&a, 0x0012ffff, true));
    assert_false(vlapic_match_dest(&a, 0x00120004, true));
    assert_false(vlapic_match_dest(&a, 0x00130008, true));
    assert_false(vlapic_match_dest(&a, 0x00020008, true));
    assert_false(vlapic_match_dest(&a, 0xff, true));
    assert_true(vlapic_match_dest(&a, 0xffffffffu, true));

    vlapic_reset(&a, 0x7, false, MAXPHYADDR);
    to_x2apic();
    assert_int_equal(mrd_ok(0x80d, 0), 0x00000080);
    assert_true(vlapic_match_dest(&a, 0x000000ff, true));
    vlapic_reset(&a, 0x1234f, false, MAXPHYADDR);
    to_x2apic();
    assert_int_equal(mrd_ok(0x80d, 0), 0x12348000);
    assert_int_equal(mrd_ok(0x802, 0), 0x1234f);
}

static void test_match_disabled(void **state)
{
    (void)state;
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE, 0));
    assert_false(vlapic_match_dest(&a, 3, false));
    assert_false(vlapic_match_dest(&a, 0xff, false));
    assert_false(vlapic_match_dest(&a, 0xff, true));
}

/* ---------------------------------------------------------------- timer */

static const struct {
    uint32_t tdcr;
    uint64_t div;
} dividers[] = {{0x0, 2},  {0x1, 4},  {0x2, 8},   {0x3, 16},
                {0x8, 32}, {0x9, 64}, {0xa, 128}, {0xb, 1}};

static void test_timer_oneshot_every_divider(void **state)
{
    (void)state;
    sw_enable();
    for (size_t i = 0; i < 8; i++) {
        uint64_t div = dividers[i].div, t0 = 10000 + i;
        wr(LVT_TMR, 0x40, 0);
        wr(TDCR, dividers[i].tdcr, 0);
        assert_int_equal(rd(TDCR, 0), dividers[i].tdcr);
        wr(TMICT, 1000, t0);
        uint64_t dl = t0 + 1000 * div;
        assert_int_equal(vlapic_timer_deadline(&a), dl);
        assert_int_equal(a.timer_start, t0);
        assert_int_equal(rd(TMICT, t0), 1000);
        assert_int_equal(rd(TMCCT, t0), 1000);
        assert_int_equal(rd(TMCCT, t0 + 1), div == 1 ? 999 : 1000); /* rounds up */
        assert_int_equal(rd(TMCCT, t0 + div), 999);
        assert_int_equal(rd(TMCCT, t0 + 500 * div), 500);
        assert_int_equal(rd(TMCCT, dl - 1), 1);
        assert_int_equal(rd(TMCCT, dl), 0);
        assert_int_equal(rd(TMCCT, dl + 12345), 0);
        assert_false(vlapic_timer_expire(&a, dl - 1));
        assert_false(irr_has(0x40));
        assert_true(vlapic_timer_expire(&a, dl));
        assert_true(irr_has(0x40));
        assert_int_equal(vlapic_timer_deadline(&a), 0);
        assert_int_equal(rd(TMCCT, dl), 0);
        assert_int_equal(rd(TMICT, dl), 1000); /* kept after expiry */
        assert_false(vlapic_timer_expire(&a, dl + 1000 * div));
        vlapic_ack(&a, 0x40);
        wr(EOI, 0, 0);
    }
}

static void test_timer_tdcr_reserved_bits(void **state)
{
    (void)state;
    wr(TDCR, 0xffffffff, 0);
    assert_int_equal(rd(TDCR, 0), 0xb);
}

static void test_timer_oneshot_stop_restart(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, 0x41, 0);
    wr(TDCR, 0xb, 0);
    wr(TMICT, 500, 100);
    assert_int_equal(vlapic_timer_deadline(&a), 600);
    wr(TMICT, 0, 200); /* stops */
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_int_equal(rd(TMCCT, 200), 0);
    assert_false(vlapic_timer_expire(&a, 1000));
    wr(TMICT, 300, 1000); /* restarts from now */
    assert_int_equal(vlapic_timer_deadline(&a), 1300);
    wr(TMICT, 50, 1100); /* rewriting while counting restarts with the new count */
    assert_int_equal(vlapic_timer_deadline(&a), 1150);
    assert_int_equal(rd(TMCCT, 1100), 50);
    assert_true(vlapic_timer_expire(&a, 2000)); /* late expiry of a one-shot: one interrupt */
    assert_true(irr_has(0x41));
    assert_int_equal(vlapic_timer_deadline(&a), 0);
}

static void test_timer_tdcr_change_while_counting(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, 0x40, 0);
    wr(TMICT, 100, 0); /* divide by 2: deadline 200 */
    assert_int_equal(vlapic_timer_deadline(&a), 200);
    assert_int_equal(rd(TMCCT, 50), 75);
    wr(TDCR, 0x2, 50); /* divide by 8: 75 counts left, now 8 ticks each */
    assert_int_equal(vlapic_timer_deadline(&a), 50 + 75 * 8);
    assert_int_equal(rd(TMCCT, 50), 75);
    assert_int_equal(rd(TMCCT, 58), 74);
    wr(TMICT, 0, 60);
    wr(TDCR, 0xb, 70); /* stopped: stays stopped */
    assert_int_equal(vlapic_timer_deadline(&a), 0);
}

static void test_timer_periodic(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, PERIODIC | 0x40, 0);
    wr(TDCR, 0xb, 0);
    wr(TMICT, 100, 1000);
    assert_int_equal(vlapic_timer_deadline(&a), 1100);
    assert_false(vlapic_timer_expire(&a, 1099));
    assert_true(vlapic_timer_expire(&a, 1100));
    assert_true(irr_has(0x40));
    assert_int_equal(vlapic_timer_deadline(&a), 1200);
    assert_int_equal(a.timer_start, 1100);
    assert_int_equal(rd(TMCCT, 1150), 50);
    vlapic_ack(&a, 0x40);
    wr(EOI, 0, 0);

    /* A little late: the next period still counts from the previous deadline. */
    assert_true(vlapic_timer_expire(&a, 1230));
    assert_int_equal(vlapic_timer_deadline(&a), 1300);
    assert_false(vlapic_timer_expire(&a, 1299));
    vlapic_ack(&a, 0x40);

    /* Periods missed: one interrupt, the next a full period from now, never early. */
    assert_true(vlapic_timer_expire(&a, 1750));
    assert_true(irr_has(0x40));
    assert_int_equal(vlapic_timer_deadline(&a), 1850);
    assert_int_equal(a.timer_start, 1750);
    assert_false(vlapic_timer_expire(&a, 1751));
    assert_true(irr_has(0x40)); /* the first is still pending: nothing more was raised */

    /* Exactly one period late: prev + period == now counts as missed. */
    assert_true(vlapic_timer_expire(&a, 1950));
    assert_int_equal(vlapic_timer_deadline(&a), 2050);
    assert_int_equal(rd(TMICT, 1950), 100);

    wr(TMICT, 0, 2000);
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_false(vlapic_timer_expire(&a, 5000));
}

/* Every period is accounted for: delivered, coalesced into a pending one, or skipped late. */
static void test_timer_stats(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, PERIODIC | 0x40, 0);
    wr(TDCR, 0xb, 0);
    wr(TMICT, 100, 1000);
    assert_true(vlapic_timer_expire(&a, 1100));
    assert_true(vlapic_timer_expire(&a, 1200)); /* the first still pending */
    vlapic_ack(&a, 0x40);
    assert_true(vlapic_timer_expire(&a, 1750)); /* due at 1300; 1400-1700 passed over */
    assert_int_equal(a.timer_stats.delivered, 2);
    assert_int_equal(a.timer_stats.coalesced, 1);
    assert_int_equal(a.timer_stats.skipped, 4);
    /* 7 whole periods from 1000 to 1750, each counted once. */
    assert_int_equal(a.timer_stats.delivered + a.timer_stats.coalesced + a.timer_stats.skipped, 7);

    wr(LVT_TMR, PERIODIC | MASKED | 0x40, 1760);
    wr(TMICT, 100, 1760);
    assert_true(vlapic_timer_expire(&a, 1860)); /* masked: raises nothing, counts nothing */
    assert_int_equal(a.timer_stats.delivered + a.timer_stats.coalesced, 3);
}

static void test_timer_periodic_divider(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, PERIODIC | 0x40, 0);
    wr(TDCR, 0xa, 0); /* 128 */
    wr(TMICT, 10, 0);
    assert_int_equal(vlapic_timer_deadline(&a), 1280);
    assert_true(vlapic_timer_expire(&a, 1280));
    assert_int_equal(vlapic_timer_deadline(&a), 2560);
    assert_int_equal(rd(TMCCT, 1281), 10);
    assert_int_equal(rd(TMCCT, 1280 + 128), 9);
}

static void test_timer_deadline_saturates(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, 0x40, 0);
    wr(TDCR, 0xa, 0);
    wr(TMICT, 0xffffffff, UINT64_MAX - 10);
    assert_int_equal(vlapic_timer_deadline(&a), UINT64_MAX);
}

static void test_timer_masked(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, MASKED | 0x40, 0);
    wr(TDCR, 0xb, 0);
    wr(TMICT, 100, 0);
    assert_true(vlapic_timer_expire(&a, 100)); /* expires, raises nothing */
    assert_false(irr_has(0x40));
    assert_int_equal(vlapic_timer_deadline(&a), 0);

    wr(LVT_TMR, MASKED | PERIODIC | 0x40, 0);
    wr(TMICT, 100, 200);
    assert_true(vlapic_timer_expire(&a, 300));
    assert_false(irr_has(0x40));
    assert_int_equal(vlapic_timer_deadline(&a), 400); /* still re-armed */
    wr(LVT_TMR, PERIODIC | 0x40, 300);                /* unmask, same mode: keeps counting */
    assert_int_equal(vlapic_timer_deadline(&a), 400);
    assert_true(vlapic_timer_expire(&a, 400));
    assert_true(irr_has(0x40));
}

static void test_timer_sw_disabled_apic(void **state)
{
    (void)state;
    wr(LVT_TMR, 0x40, 0); /* forced masked */
    assert_int_equal(rd(LVT_TMR, 0), MASKED | 0x40);
    wr(TDCR, 0xb, 0);
    wr(TMICT, 10, 0);
    assert_true(vlapic_timer_expire(&a, 10));
    assert_false(irr_has(0x40));
}

/* One-shot <-> periodic keeps the count running; only TSC-deadline changes disarm (SDM 10.5.4.1).
 */
static void test_timer_mode_change(void **state)
{
    (void)state;
    uint64_t v;
    sw_enable();
    wr(TDCR, 0xb, 0);
    wr(LVT_TMR, 0x40, 0);
    wr(TMICT, 100, 0);
    wr(LVT_TMR, 0x41, 10); /* same mode, new vector: keeps counting */
    assert_int_equal(vlapic_timer_deadline(&a), 100);
    wr(LVT_TMR, PERIODIC | 0x41, 20);
    assert_int_equal(vlapic_timer_deadline(&a), 100);
    assert_int_equal(rd(TMICT, 20), 100);
    assert_int_equal(rd(TMCCT, 20), 80);
    assert_true(vlapic_timer_expire(&a, 100));
    assert_true(irr_has(0x41));
    assert_int_equal(vlapic_timer_deadline(&a), 200); /* now periodic: re-armed */
    wr(LVT_TMR, 0x41, 150);                           /* back to one-shot */
    assert_int_equal(vlapic_timer_deadline(&a), 200);
    assert_int_equal(rd(TMCCT, 150), 50);
    assert_true(vlapic_timer_expire(&a, 200));
    assert_int_equal(vlapic_timer_deadline(&a), 0); /* one-shot: done */
    assert_int_equal(rd(TMICT, 250), 100);
    wr(LVT_TMR, PERIODIC | 0x41, 250); /* an expired one-shot timer stays stopped */
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_false(vlapic_timer_expire(&a, 1000));

    /* To and from TSC-deadline mode: disarmed, TMICT cleared. */
    wr(TMICT, 100, 0);
    wr(LVT_TMR, TSCDL | 0x41, 20);
    assert_int_equal(rd(TMICT, 20), 0);
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_true(mwr(MSR_TSC_DEADLINE, 500, 30));
    wr(LVT_TMR, 0x41, 40); /* TSC-deadline -> one-shot clears the MSR */
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_true(mrd(MSR_TSC_DEADLINE, &v));
    assert_int_equal(v, 0);
    wr(LVT_TMR, TSCDL | 0x41, 50);
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 50), 0);
    assert_false(vlapic_timer_expire(&a, 1000));
}

static void test_timer_reserved_mode(void **state)
{
    (void)state;
    sw_enable();
    assert_false(vlapic_mmio_write(&a, LVT_TMR, 3u << 17 | 0x40, 0, &ipi, &sent));
    assert_int_equal(rd(LVT_TMR, 0), MASKED);
    to_x2apic();
    assert_false(mwr(0x832, 3u << 17 | 0x40, 0));
    assert_int_equal(mrd_ok(0x832, 0), MASKED);
}

/*
 * The guest moves its TSC mid-countdown (IA32_TSC or IA32_TSC_ADJUST): a
 * one-shot or periodic count goes on as if nothing happened, at the same
 * host time; a TSC deadline is a TSC value and stays one.
 */
static void test_timer_keeps_its_time_across_a_tsc_write(void **state)
{
    (void)state;
    const uint64_t step = 1ull << 40;
    sw_enable();
    wr(LVT_TMR, 0x40, 0);
    wr(TDCR, 0x0, 0); /* divide by 2 */
    wr(TMICT, 1000, 10000);
    vlapic_tsc_moved(&a, 10600, 10600 + step); /* 300 counts later: 700 left */
    assert_int_equal(vlapic_timer_deadline(&a), 12000 + step);
    assert_int_equal(rd(TMCCT, 10600 + step), 700);
    assert_int_equal(a.timer_start, 10000 + step);
    vlapic_tsc_moved(&a, 10800 + step, 10800 - 5000); /* and back further than it came */
    assert_int_equal(vlapic_timer_deadline(&a), 12000 - 5000);
    assert_int_equal(rd(TMCCT, 10800 - 5000), 600);
    assert_false(vlapic_timer_expire(&a, 12000 - 5000 - 1));
    assert_true(vlapic_timer_expire(&a, 12000 - 5000));
    vlapic_ack(&a, 0x40);
    wr(EOI, 0, 0);
    vlapic_tsc_moved(&a, 20000, 30000); /* nothing armed: nothing to move */
    assert_int_equal(vlapic_timer_deadline(&a), 0);

    /* Periodic: the period in progress keeps its end, the next ones follow from it. */
    wr(LVT_TMR, PERIODIC | 0x40, 0);
    wr(TDCR, 0xb, 0);
    wr(TMICT, 100, 1000);
    vlapic_tsc_moved(&a, 1040, 1040 + step);
    assert_int_equal(vlapic_timer_deadline(&a), 1100 + step);
    assert_true(vlapic_timer_expire(&a, 1100 + step));
    assert_int_equal(vlapic_timer_deadline(&a), 1200 + step);
    vlapic_ack(&a, 0x40);
    /* Already due when the TSC moved: still due at once. */
    vlapic_tsc_moved(&a, 1250 + step, 1250);
    assert_int_equal(vlapic_timer_deadline(&a), 1250);
    assert_true(vlapic_timer_expire(&a, 1250));
    vlapic_ack(&a, 0x40);
    /* Moved to just below 2^64: the end saturates rather than wrapping into the past. */
    vlapic_tsc_moved(&a, 1300, UINT64_MAX - 10);
    assert_int_equal(vlapic_timer_deadline(&a), UINT64_MAX);

    wr(LVT_TMR, TSCDL | 0x50, 0);
    assert_true(mwr(MSR_TSC_DEADLINE, 5000, 100));
    vlapic_tsc_moved(&a, 200, 200 + step);
    assert_int_equal(vlapic_timer_deadline(&a), 5000);
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 200 + step), 5000);
}

static void test_tsc_deadline(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, TSCDL | 0x50, 0);
    wr(TMICT, 1000, 0); /* ignored in TSC-deadline mode */
    assert_int_equal(rd(TMICT, 0), 0);
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_true(mwr(MSR_TSC_DEADLINE, 5000, 100));
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 100), 5000);
    assert_int_equal(vlapic_timer_deadline(&a), 5000);
    assert_int_equal(rd(TMCCT, 100), 0); /* always 0 in this mode */
    wr(TMICT, 1000, 200);
    assert_int_equal(vlapic_timer_deadline(&a), 5000);
    wr(TDCR, 0x3, 300); /* the divider does not apply */
    assert_int_equal(vlapic_timer_deadline(&a), 5000);
    assert_false(vlapic_timer_expire(&a, 4999));
    assert_true(vlapic_timer_expire(&a, 5000));
    assert_true(irr_has(0x50));
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 5000), 0);
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_false(vlapic_timer_expire(&a, 6000));

    assert_true(mwr(MSR_TSC_DEADLINE, 7000, 6000));
    assert_true(mwr(MSR_TSC_DEADLINE, 0, 6100)); /* 0 disarms */
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_false(vlapic_timer_expire(&a, 8000));

    /* Already passed (or now): it fires as the write retires, and the MSR reads 0. */
    vlapic_ack(&a, 0x50);
    assert_true(mwr(MSR_TSC_DEADLINE, 100, 6200));
    assert_true(irr_has(0x50));
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 6200), 0);
    assert_false(vlapic_timer_expire(&a, 6200));
    vlapic_ack(&a, 0x50);
    assert_true(mwr(MSR_TSC_DEADLINE, 6300, 6300));
    assert_true(irr_has(0x50));
    assert_int_equal(vlapic_timer_deadline(&a), 0);

    wr(LVT_TMR, MASKED | TSCDL | 0x50, 0);
    vlapic_ack(&a, 0x50);
    assert_true(mwr(MSR_TSC_DEADLINE, 9000, 8000));
    assert_true(vlapic_timer_expire(&a, 9000));
    assert_false(irr_has(0x50));
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 9000), 0);
}

/*
 * KVM's timer advance: in TSC-deadline mode the timer expires `advance`
 * cycles early (main refused any expiry before the deadline), the vector is
 * raised then, and the deadline is kept for the entry that injects it.
 */
static void test_tsc_deadline_advance_expires_early(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, TSCDL | 0x50, 0);
    assert_true(mwr(MSR_TSC_DEADLINE, 10000, 100));
    assert_int_equal(vlapic_timer_fire_at(&a, 0), 10000);
    assert_int_equal(vlapic_timer_fire_at(&a, 300), 9700);
    assert_false(vlapic_timer_expire_advanced(&a, 9699, 300));
    assert_true(vlapic_timer_expire_advanced(&a, 9700, 300));
    assert_true(irr_has(0x50));
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 9700), 0); /* as KVM: expired, the MSR reads 0 */
    assert_int_equal(a.timer_due, 10000);
    assert_true(a.timer_due_advanced);
    assert_int_equal(vlapic_timer_due(&a, 0x50), 10000);
    assert_int_equal(vlapic_timer_due(&a, 0x51), 0); /* another vector */
    vlapic_ack(&a, 0x50);
    assert_int_equal(vlapic_timer_due(&a, 0x50), 0);
    assert_false(a.timer_due_advanced);

    /* A deadline nearer than the advance fires at once (KVM's start_sw_tscdeadline). */
    assert_true(mwr(MSR_TSC_DEADLINE, 20000, 19900));
    assert_int_equal(vlapic_timer_fire_at(&a, 30000), 1);
    assert_true(vlapic_timer_expire_advanced(&a, 19900, 300));
    assert_int_equal(vlapic_timer_due(&a, 0x50), 20000);

    /* Expired at or after its deadline: nothing to wait for. */
    vlapic_ack(&a, 0x50);
    assert_true(mwr(MSR_TSC_DEADLINE, 30000, 20000));
    assert_true(vlapic_timer_expire_advanced(&a, 30050, 300));
    assert_int_equal(a.timer_due, 30000);
    assert_false(a.timer_due_advanced);
}

/* The advance is TSC-deadline mode's only, as KVM's: one-shot and periodic never fire early. */
static void test_advance_other_modes(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, 0x40, 0);
    wr(TDCR, 0xb, 0);
    wr(TMICT, 1000, 0);
    assert_int_equal(vlapic_timer_fire_at(&a, 300), 1000);
    assert_false(vlapic_timer_expire_advanced(&a, 999, 300));
    assert_true(vlapic_timer_expire_advanced(&a, 1200, 300));
    assert_int_equal(vlapic_timer_due(&a, 0x40), 1000);
    assert_false(a.timer_due_advanced);

    /* A late periodic expiry is due from the deadline it missed, not the re-armed one. */
    vlapic_ack(&a, 0x40);
    wr(LVT_TMR, PERIODIC | 0x40, 1200);
    wr(TMICT, 100, 2000);
    assert_true(vlapic_timer_expire_advanced(&a, 2350, 300));
    assert_int_equal(vlapic_timer_due(&a, 0x40), 2100);
    /* Coalesced into the pending one: it keeps the first deadline. */
    assert_true(vlapic_timer_expire(&a, 2450));
    assert_int_equal(vlapic_timer_due(&a, 0x40), 2100);
    assert_int_equal(a.timer_stats.coalesced, 1);
}

#define KHZ_100MHZ 100000 /* Bochs's TSC in the tests: a cycle is 10 ns */

/* timer_advance_ns=: -1 adaptive from 2000 cycles, 0 off, N fixed; shown in ns at the TSC rate. */
static void test_advance_init(void **state)
{
    (void)state;
    struct vlapic_advance adv;
    vlapic_advance_init(&adv, VLAPIC_ADVANCE_ADAPTIVE, KHZ_100MHZ);
    assert_true(adv.adaptive);
    assert_int_equal(adv.ns, 20000);
    assert_int_equal(adv.cycles, VLAPIC_ADVANCE_INIT);
    vlapic_advance_init(&adv, VLAPIC_ADVANCE_ADAPTIVE, 2000000); /* KVM's own figures at 2 GHz */
    assert_int_equal(adv.ns, 1000);
    vlapic_advance_init(&adv, 0, KHZ_100MHZ);
    assert_false(adv.adaptive);
    assert_int_equal(adv.ns, 0);
    assert_int_equal(adv.cycles, 0);
    vlapic_advance_init(&adv, 5000, KHZ_100MHZ);
    assert_false(adv.adaptive);
    assert_int_equal(adv.ns, 5000);
    assert_int_equal(adv.cycles, 500);
    vlapic_advance_adjust(&adv, 5000); /* fixed: never tuned */
    assert_int_equal(adv.ns, 5000);
}

/* KVM's adjust_lapic_timer_advance, its cycle limits kept and its ns ones scaled (vlapic.h). */
static void test_advance_adjust(void **state)
{
    (void)state;
    struct vlapic_advance adv;
    vlapic_advance_init(&adv, VLAPIC_ADVANCE_ADAPTIVE, KHZ_100MHZ);
    vlapic_advance_adjust(&adv, 800); /* 800 cycles late: + 8000 ns / 8 */
    assert_int_equal(adv.ns, 21000);
    assert_int_equal(adv.cycles, 2100);
    vlapic_advance_adjust(&adv, -400); /* early: - 4000 ns / 8 */
    assert_int_equal(adv.ns, 20500);
    vlapic_advance_adjust(&adv, 99); /* noise */
    vlapic_advance_adjust(&adv, -99);
    vlapic_advance_adjust(&adv, 10001); /* a spike */
    vlapic_advance_adjust(&adv, -10001);
    assert_int_equal(adv.ns, 20500);
    /* Past 10000 cycles (100 us here) it starts again from 2000 cycles. */
    for (int i = 0; i < 6; i++)
        vlapic_advance_adjust(&adv, 10000);
    assert_int_equal(adv.ns, 95500);
    vlapic_advance_adjust(&adv, 10000);
    assert_int_equal(adv.ns, 20000);
    /* Below 0 (KVM's u32 wraps past its maximum) the same. */
    vlapic_advance_adjust(&adv, -10000);
    assert_int_equal(adv.ns, 7500);
    vlapic_advance_adjust(&adv, -10000);
    assert_int_equal(adv.ns, 20000);
    assert_int_equal(adv.cycles, 2000);
}

/* The entry that injects an early expiry tunes the advance once and waits, at most the advance. */
static void test_timer_entry_waits_for_deadline(void **state)
{
    (void)state;
    struct vlapic_advance adv;
    vlapic_advance_init(&adv, VLAPIC_ADVANCE_ADAPTIVE, KHZ_100MHZ);
    sw_enable();
    wr(LVT_TMR, TSCDL | 0x50, 0);
    assert_true(mwr(MSR_TSC_DEADLINE, 10000, 0));
    assert_true(vlapic_timer_expire_advanced(&a, 8000, adv.cycles));
    struct vlapic_timer_entry e = vlapic_timer_entry(&a, &adv, 0x51, 8500);
    assert_int_equal(e.due, 0); /* not the timer's vector */
    e = vlapic_timer_entry(&a, &adv, 0x50, 8500);
    assert_int_equal(e.due, 10000);
    assert_int_equal(e.wait_until, 10000);
    assert_int_equal(adv.ns, 18125); /* 1500 cycles early: - 15000 ns / 8 */
    /* Offered again (V_IRQ not taken): no second tuning, no second wait. */
    e = vlapic_timer_entry(&a, &adv, 0x50, 9000);
    assert_int_equal(e.due, 10000);
    assert_int_equal(e.wait_until, 0);
    assert_int_equal(adv.ns, 18125);

    /* The wait is capped by the advance just tuned (KVM's __wait_lapic_expire). */
    vlapic_ack(&a, 0x50);
    vlapic_advance_init(&adv, VLAPIC_ADVANCE_ADAPTIVE, KHZ_100MHZ);
    assert_true(mwr(MSR_TSC_DEADLINE, 20000, 11000));
    assert_true(vlapic_timer_expire_advanced(&a, 18000, adv.cycles));
    e = vlapic_timer_entry(&a, &adv, 0x50, 18000);
    assert_int_equal(adv.cycles, 1750);
    assert_int_equal(e.wait_until, 19750);

    /* Late: the advance grows, nothing to wait for. */
    vlapic_ack(&a, 0x50);
    assert_true(mwr(MSR_TSC_DEADLINE, 30000, 20000));
    assert_true(vlapic_timer_expire_advanced(&a, 28250, adv.cycles));
    e = vlapic_timer_entry(&a, &adv, 0x50, 30800);
    assert_int_equal(e.wait_until, 0);
    assert_int_equal(adv.ns, 17500 + 1000);
}

static void test_tsc_deadline_other_modes(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, 0x40, 0);
    assert_true(mwr(MSR_TSC_DEADLINE, 5000, 0)); /* ignored */
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 0), 0);
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    wr(LVT_TMR, PERIODIC | 0x40, 0);
    assert_true(mwr(MSR_TSC_DEADLINE, 5000, 0));
    assert_int_equal(mrd_ok(MSR_TSC_DEADLINE, 0), 0);
    assert_int_equal(vlapic_timer_deadline(&a), 0);
}

static void test_tsc_deadline_x2apic(void **state)
{
    (void)state;
    to_x2apic();
    assert_true(mwr(0x80f, 0x1ff, 0));
    assert_true(mwr(0x832, TSCDL | 0x60, 0));
    assert_true(mwr(MSR_TSC_DEADLINE, 300, 0));
    assert_int_equal(mrd_ok(0x839, 0), 0);
    assert_true(vlapic_timer_expire(&a, 301));
    assert_true(irr_has(0x60));
}

/* ---------------------------------------------------------------- LVTs and SVR */

static void test_lvt_writable_bits(void **state)
{
    (void)state;
    sw_enable();
    wr(LVT_TMR, 0xfffbffff, 0); /* mode 1; delivery status and reserved bits dropped */
    assert_int_equal(rd(LVT_TMR, 0), 0x000300ff);
    wr(LVT_THM, 0xffffffff, 0);
    assert_int_equal(rd(LVT_THM, 0), 0x000107ff);
    wr(LVT_PERF, 0xffffffff, 0);
    assert_int_equal(rd(LVT_PERF, 0), 0x000107ff);
    wr(LINT0, 0xffffffff, 0);
    assert_int_equal(rd(LINT0, 0), 0x0001a7ff);
    wr(LINT1, 0xffffffff, 0);
    assert_int_equal(rd(LINT1, 0), 0x0001a7ff);
    wr(LVT_ERR, 0xffffffff, 0);
    assert_int_equal(rd(LVT_ERR, 0), 0x000100ff);
    wr(LINT0, 0x700, 0);
    assert_int_equal(rd(LINT0, 0), 0x700);
}

/* The 8259's INT passes LINT0 in ExtINT mode unmasked, or a hardware-disabled APIC. */
static void test_accept_pic_intr(void **state)
{
    (void)state;
    assert_false(vlapic_accept_pic_intr(&a)); /* reset: LINT0 masked */
    vlapic_set_lint0_extint(&a);
    assert_int_equal(rd(LINT0, 0), 0x700);
    assert_true(vlapic_accept_pic_intr(&a)); /* though SVR says software-disabled */
    sw_enable();
    wr(LINT0, 0x700 | MASKED, 0);
    assert_false(vlapic_accept_pic_intr(&a));
    wr(LINT0, 0x400, 0); /* NMI */
    assert_false(vlapic_accept_pic_intr(&a));
    wr(LINT0, 0x000, 0); /* fixed */
    assert_false(vlapic_accept_pic_intr(&a));
    wr(LINT0, 0x700, 0);
    assert_true(vlapic_accept_pic_intr(&a));
    wr(SVR, 0xff, 0); /* software disable masks it */
    assert_false(vlapic_accept_pic_intr(&a));
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE, 0)); /* hardware disable: LINT0 is INTR */
    assert_true(vlapic_accept_pic_intr(&a));
}

static void test_sw_disable_masks_lvts(void **state)
{
    (void)state;
    for (size_t i = 0; i < 6; i++) {
        wr(lvts[i], 0x30, 0); /* an unmask attempt while software-disabled */
        assert_int_equal(rd(lvts[i], 0), MASKED | 0x30);
    }
    sw_enable();
    for (size_t i = 0; i < 6; i++) {
        wr(lvts[i], 0x31, 0);
        assert_int_equal(rd(lvts[i], 0), 0x31);
    }
    vlapic_accept(&a, 0x70);
    wr(SVR, 0xff, 0);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(rd(lvts[i], 0), MASKED | 0x31);
    assert_true(irr_has(0x70)); /* pending interrupts are held */
    assert_int_equal(vlapic_highest_pending(&a), 0x70);
    assert_false(vlapic_accept(&a, 0x71));
    wr(SVR, 0xffffffff, 0);
    assert_int_equal(rd(SVR, 0), 0x3ff);
    assert_true(vlapic_sw_enabled(&a));
}

/* ---------------------------------------------------------------- MMIO */

static void test_mmio_offsets(void **state)
{
    (void)state;
    static const uint32_t bad[] = {0x000, 0x010, 0x040, 0x050,  0x060, 0x070, 0x0c0,
                                   0x290, 0x2e0, 0x2f0, 0x3a0,  0x3b0, 0x3c0, 0x3d0,
                                   0x3f0, 0x400, 0xff0, 0x1000, 0x024, 0x021, 0x088};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint32_t v = 0x1234;
        assert_false(vlapic_mmio_read(&a, bad[i], &v, 0));
        assert_int_equal(v, 0);
        assert_false(vlapic_mmio_write(&a, bad[i], 0x1ff, 0, &ipi, &sent));
    }
    assert_int_equal(rd(EOI, 0), 0); /* write-only: reads 0 */
}

static void test_mmio_read_only_writes_ignored(void **state)
{
    (void)state;
    sw_enable();
    vlapic_accept(&a, 0x40);
    static const uint32_t ro[] = {ID_REG, VER, APR, PPR, ISR, TMR + 0x20, IRR + 0x20, TMCCT};
    for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
        wr(ro[i], 0xffffffff, 0);
    assert_int_equal(rd(ID_REG, 0), 3u << 24);
    assert_int_equal(rd(VER, 0), 0x50014);
    assert_int_equal(rd(APR, 0), 0);
    assert_int_equal(rd(IRR + 0x20, 0), 1);
    assert_int_equal(rd(TMR + 0x20, 0), 0);
    assert_int_equal(rd(ISR, 0), 0);
    assert_int_equal(vlapic_ppr(&a), 0);
}

static void test_write_clears_ipi_out(void **state)
{
    (void)state;
    sent = true;
    wr(TPR, 0, 0);
    assert_false(sent);
    sent = true;
    assert_false(vlapic_mmio_write(&a, 0x010, 0, 0, &ipi, &sent));
    assert_false(sent);
    sent = true;
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN | BSP, 0));
    assert_false(sent);
}

/* ---------------------------------------------------------------- IA32_APIC_BASE */

static void test_apic_base_checks(void **state)
{
    (void)state;
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN | BSP, 0));
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN, 0)); /* BSP is read-only */
    assert_int_equal(mrd_ok(MSR_IA32_APIC_BASE, 0), BASE | EN | BSP);
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | EN | 1, 0));
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | EN | 0x80, 0));
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | EN | 0x200, 0));
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | 1ull << MAXPHYADDR | EN, 0));
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | 1ull << 63 | EN, 0));
    assert_false(mwr(MSR_IA32_APIC_BASE, EXTD | BASE, 0)); /* EXTD without EN is invalid */
    assert_int_equal(mrd_ok(MSR_IA32_APIC_BASE, 0), BASE | EN | BSP);
    assert_int_equal(vlapic_base_address(&a), BASE);
    assert_true(vlapic_enabled(&a));
    /* MAXPHYADDR is the vCPU's: with 52 bits, bit 40 is an address bit. */
    vlapic_reset(&a, 3, true, 52);
    assert_true(mwr(MSR_IA32_APIC_BASE, 1ull << 40 | EN, 0));
    assert_false(mwr(MSR_IA32_APIC_BASE, 1ull << 52 | EN, 0));
    assert_int_equal(vlapic_base_address(&a), 1ull << 40);
}

/* A new base moves the xAPIC page, in every mode, and changes nothing else (KVM's rule). */
static void test_apic_base_moves_the_page(void **state)
{
    (void)state;
    sw_enable();
    wr(TPR, 0x20, 0);
    assert_true(mwr(MSR_IA32_APIC_BASE, MOVED | EN | BSP, 0));
    assert_int_equal(mrd_ok(MSR_IA32_APIC_BASE, 0), MOVED | EN | BSP);
    assert_int_equal(vlapic_base_address(&a), MOVED);
    assert_true(vlapic_enabled(&a) && !vlapic_x2apic(&a));
    assert_int_equal(rd(TPR, 0), 0x20); /* not a reset */
    assert_int_equal(rd(ID_REG, 0), 3u << 24);
    /* The highest address MAXPHYADDR allows; the faults leave the base where it was. */
    uint64_t top = (1ull << MAXPHYADDR) - 0x1000;
    assert_true(mwr(MSR_IA32_APIC_BASE, top | EN, 0));
    assert_int_equal(vlapic_base_address(&a), top);
    assert_false(mwr(MSR_IA32_APIC_BASE, MOVED | EN | 0x200, 0));
    assert_false(mwr(MSR_IA32_APIC_BASE, MOVED | 1ull << MAXPHYADDR | EN, 0));
    assert_int_equal(mrd_ok(MSR_IA32_APIC_BASE, 0), top | EN | BSP);
    /* Disabled, it keeps the base written; enabled again, its page is there. */
    assert_true(mwr(MSR_IA32_APIC_BASE, MOVED, 0));
    assert_false(vlapic_enabled(&a));
    assert_int_equal(vlapic_base_address(&a), MOVED);
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN, 0));
    assert_int_equal(vlapic_base_address(&a), BASE);
    /* x2APIC mode moves with it too; the transitions' rules are the same. */
    assert_true(mwr(MSR_IA32_APIC_BASE, MOVED | EN | EXTD, 0));
    assert_true(vlapic_x2apic(&a));
    assert_int_equal(vlapic_base_address(&a), MOVED);
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | EN, 0)); /* x2APIC -> xAPIC */
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN | EXTD, 0));
    assert_int_equal(vlapic_base_address(&a), BASE);
}

static void test_apic_base_disable_reenable(void **state)
{
    (void)state;
    uint32_t v;
    sw_enable();
    wr(TPR, 0x20, 0);
    wr(LDR, 0x01000000, 0);
    wr(LINT0, 0x700, 0);
    wr(TDCR, 0xb, 0);
    wr(TMICT, 100, 0);
    vlapic_accept(&a, 0x40);
    vlapic_accept(&a, 0x50);
    vlapic_ack(&a, 0x50);
    vlapic_accept(&a, 3);

    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | BSP, 0));
    assert_false(vlapic_enabled(&a));
    assert_int_equal(mrd_ok(MSR_IA32_APIC_BASE, 0), BASE | BSP);
    assert_false(vlapic_mmio_read(&a, ID_REG, &v, 0)); /* the MMIO page is gone */
    assert_int_equal(v, 0);
    assert_false(vlapic_mmio_write(&a, TPR, 0, 0, &ipi, &sent));
    assert_false(vlapic_accept(&a, 0x60));
    assert_int_equal(vlapic_timer_deadline(&a), 0);
    assert_false(vlapic_timer_expire(&a, 1000));
    assert_int_equal(vlapic_highest_pending(&a), -1);
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | EN | EXTD, 0)); /* disabled -> x2APIC */

    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN, 0));
    assert_false(vlapic_x2apic(&a));
    assert_int_equal(rd(ID_REG, 0), 3u << 24); /* ID kept */
    assert_int_equal(rd(SVR, 0), 0xff);
    assert_int_equal(rd(TPR, 0), 0);
    assert_int_equal(rd(LDR, 0), 0);
    assert_int_equal(rd(ESR, 0), 0);
    assert_int_equal(rd(TMICT, 0), 0);
    assert_int_equal(rd(TDCR, 0), 0);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(rd(lvts[i], 0), MASKED);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(rd(IRR + i * 16, 0) | rd(ISR + i * 16, 0), 0);
}

static void test_x2apic_switch(void **state)
{
    (void)state;
    uint32_t v;
    uint64_t m;
    vlapic_reset(&a, 0x41, false, MAXPHYADDR);
    assert_false(mrd(0x802, &m)); /* x2APIC MSRs need x2APIC mode */
    assert_int_equal(m, 0);
    assert_false(mwr(0x808, 0, 0));
    sw_enable();
    wr(TPR, 0x30, 0);
    to_x2apic();
    assert_int_equal(mrd_ok(MSR_IA32_APIC_BASE, 0), BASE | EN | EXTD);
    assert_false(vlapic_mmio_read(&a, ID_REG, &v, 0));
    assert_int_equal(v, 0);
    assert_false(vlapic_mmio_write(&a, TPR, 0, 0, &ipi, &sent));
    assert_int_equal(mrd_ok(0x802, 0), 0x41); /* the full 32-bit ID */
    assert_int_equal(mrd_ok(0x808, 0), 0x30); /* state carried over */
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN | EXTD, 0));
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | EN, 0)); /* x2APIC -> xAPIC */
    assert_false(mwr(MSR_IA32_APIC_BASE, BASE | EXTD, 0));
    assert_true(vlapic_x2apic(&a));

    assert_true(mwr(MSR_IA32_APIC_BASE, BASE, 0));
    assert_false(vlapic_x2apic(&a));
    assert_false(mrd(0x802, &m));
    assert_true(mwr(MSR_IA32_APIC_BASE, BASE | EN, 0));
    assert_int_equal(rd(ID_REG, 0), 0x41u << 24);
    assert_int_equal(rd(TPR, 0), 0);
    assert_int_equal(rd(LDR, 0), 0);
}

/* ---------------------------------------------------------------- x2APIC MSRs */

static void test_x2apic_msr_map(void **state)
{
    (void)state;
    uint64_t v;
    vlapic_reset(&a, 0x12345, false, MAXPHYADDR);
    to_x2apic();
    assert_int_equal(mrd_ok(0x802, 0), 0x12345);
    assert_int_equal(mrd_ok(0x803, 0), 0x50014);
    assert_int_equal(mrd_ok(0x80f, 0), 0xff);
    assert_int_equal(mrd_ok(0x828, 0), 0);
    assert_int_equal(mrd_ok(0x838, 0), 0);
    assert_int_equal(mrd_ok(0x83e, 0), 0);
    for (uint32_t msr = 0x832; msr <= 0x837; msr++)
        assert_int_equal(mrd_ok(msr, 0), MASKED);
    for (uint32_t msr = 0x810; msr <= 0x827; msr++)
        assert_int_equal(mrd_ok(msr, 0), 0);

    /* Not registers in x2APIC mode. */
    static const uint32_t absent[] = {0x800, 0x801, 0x804, 0x807, 0x809, 0x80c, 0x80e, 0x829,
                                      0x82e, 0x82f, 0x831, 0x83a, 0x83d, 0x840, 0x8ff};
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
        assert_false(mrd(absent[i], &v));
        assert_int_equal(v, 0);
        assert_false(mwr(absent[i], 0, 0));
    }
    assert_false(mrd(0x10, &v));
    assert_false(mwr(0x10, 0, 0));
    assert_false(mrd(0x7ff, &v));
    assert_false(mrd(0x900, &v));
}

static void test_x2apic_read_only_and_write_only(void **state)
{
    (void)state;
    uint64_t v;
    to_x2apic();
    static const uint32_t ro[] = {0x802, 0x803, 0x80a, 0x80d, 0x810, 0x817,
                                  0x818, 0x81f, 0x820, 0x827, 0x839};
    for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
        assert_true(mrd(ro[i], &v));
        assert_false(mwr(ro[i], 0, 0));
    }
    assert_false(mrd(0x80b, &v)); /* EOI is write-only */
    assert_false(mrd(0x83f, &v)); /* SELF_IPI too */
}

static void test_x2apic_reserved_bits(void **state)
{
    (void)state;
    to_x2apic();
    assert_true(mwr(0x808, 0xff, 0));
    assert_false(mwr(0x808, 0x100, 0));
    assert_false(mwr(0x808, 1ull << 32, 0));
    assert_int_equal(mrd_ok(0x808, 0), 0xff);

    assert_true(mwr(0x80f, 0x3ff, 0));
    assert_false(mwr(0x80f, 0x1ff | 1u << 12, 0)); /* no EOI-broadcast suppression */
    assert_false(mwr(0x80f, 0x1ff | 1u << 10, 0));
    assert_false(mwr(0x80f, 0x1ff | 1ull << 40, 0));
    assert_int_equal(mrd_ok(0x80f, 0), 0x3ff);

    assert_true(mwr(0x828, 0, 0));
    assert_false(mwr(0x828, 1, 0));

    assert_true(mwr(0x832, PERIODIC | 0x40 | 1u << 12, 0)); /* delivery status: ignored */
    assert_int_equal(mrd_ok(0x832, 0), PERIODIC | 0x40);
    assert_false(mwr(0x832, 0x140, 0));
    assert_false(mwr(0x833, 1u << 13, 0));
    assert_true(mwr(0x833, 0x4f2, 0));
    assert_false(mwr(0x834, 1u << 17, 0));
    assert_true(mwr(0x835, 0xa7ff | 1u << 14, 0)); /* remote IRR: ignored */
    assert_int_equal(mrd_ok(0x835, 0), 0xa7ff);
    assert_false(mwr(0x836, 1u << 20, 0));
    assert_false(mwr(0x837, 0x100, 0));
    assert_true(mwr(0x837, 0xfe, 0));

    assert_true(mwr(0x838, 0xffffffff, 0));
    assert_false(mwr(0x838, 1ull << 32, 0));
    assert_true(mwr(0x83e, 0xb, 0));
    assert_false(mwr(0x83e, 0x4, 0));
    assert_false(mwr(0x83e, 0x10, 0));
}

static void test_x2apic_eoi(void **state)
{
    (void)state;
    to_x2apic();
    assert_true(mwr(0x80f, 0x1ff, 0));
    vlapic_accept(&a, 0x40);
    vlapic_ack(&a, 0x40);
    assert_int_equal(mrd_ok(0x80a, 0), 0x40);
    assert_false(mwr(0x80b, 1, 0)); /* must be 0 */
    assert_false(mwr(0x80b, 1ull << 32, 0));
    assert_true(isr_has(0x40));
    assert_true(mwr(0x80b, 0, 0));
    assert_false(isr_has(0x40));
    assert_int_equal(mrd_ok(0x80a, 0), 0);
}

static void test_x2apic_timer(void **state)
{
    (void)state;
    to_x2apic();
    assert_true(mwr(0x80f, 0x1ff, 0));
    assert_true(mwr(0x832, 0x40, 0));
    assert_true(mwr(0x83e, 0x1, 0)); /* divide by 4 */
    assert_true(mwr(0x838, 25, 1000));
    assert_int_equal(vlapic_timer_deadline(&a), 1100);
    assert_int_equal(mrd_ok(0x839, 1050), 13);
    assert_true(vlapic_timer_expire(&a, 1100));
    assert_true(irr_has(0x40));
    assert_int_equal(mrd_ok(0x822, 0), 1); /* IRR bits 95:64 */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, setup)
    const struct CMUnitTest tests[] = {
        T(test_reset_values),
        T(test_accept_needs_enabled_apic),
        T(test_accept_clears_tmr),
        T(test_nested_priority_and_eoi_order),
        T(test_tpr_and_ppr),
        T(test_vector_255),
        T(test_illegal_vectors_set_esr),
        T(test_esr_sw_disabled_accept_ignored),
        T(test_error_interrupt),
        T(test_icr_xapic_every_field),
        T(test_icr_xapic_readback_and_reserved),
        T(test_icr_xapic_sw_disabled_still_sends),
        T(test_icr_x2apic_every_field),
        T(test_icr_x2apic_reserved_bits),
        T(test_self_ipi),
        T(test_match_physical_xapic),
        T(test_match_logical_flat),
        T(test_match_logical_cluster),
        T(test_match_x2apic),
        T(test_match_disabled),
        T(test_timer_oneshot_every_divider),
        T(test_timer_tdcr_reserved_bits),
        T(test_timer_oneshot_stop_restart),
        T(test_timer_tdcr_change_while_counting),
        T(test_timer_periodic),
        T(test_timer_periodic_divider),
        T(test_timer_stats),
        T(test_timer_deadline_saturates),
        T(test_timer_masked),
        T(test_timer_sw_disabled_apic),
        T(test_timer_mode_change),
        T(test_timer_reserved_mode),
        T(test_timer_keeps_its_time_across_a_tsc_write),
        T(test_tsc_deadline),
        T(test_tsc_deadline_advance_expires_early),
        T(test_advance_other_modes),
        T(test_advance_init),
        T(test_advance_adjust),
        T(test_timer_entry_waits_for_deadline),
        T(test_tsc_deadline_other_modes),
        T(test_tsc_deadline_x2apic),
        T(test_lvt_writable_bits),
        T(test_accept_pic_intr),
        T(test_sw_disable_masks_lvts),
        T(test_mmio_offsets),
        T(test_mmio_read_only_writes_ignored),
        T(test_write_clears_ipi_out),
        T(test_apic_base_checks),
        T(test_apic_base_moves_the_page),
        T(test_apic_base_disable_reenable),
        T(test_x2apic_switch),
        T(test_x2apic_msr_map),
        T(test_x2apic_read_only_and_write_only),
        T(test_x2apic_reserved_bits),
        T(test_x2apic_eoi),
        T(test_x2apic_timer),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

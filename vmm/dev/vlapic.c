/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/vlapic.h"

#include "lib/string.h"

/* xAPIC MMIO offsets; the x2APIC MSR of each is 0x800 + offset / 16. */
#define REG_ID          0x020
#define REG_VERSION     0x030
#define REG_TPR         0x080
#define REG_APR         0x090
#define REG_PPR         0x0a0
#define REG_EOI         0x0b0
#define REG_LDR         0x0d0
#define REG_DFR         0x0e0
#define REG_SVR         0x0f0
#define REG_ISR         0x100
#define REG_TMR         0x180
#define REG_IRR         0x200
#define REG_ESR         0x280
#define REG_ICR_LO      0x300
#define REG_ICR_HI      0x310
#define REG_LVT_TIMER   0x320
#define REG_LVT_THERMAL 0x330
#define REG_LVT_PERF    0x340
#define REG_LVT_LINT0   0x350
#define REG_LVT_LINT1   0x360
#define REG_LVT_ERROR   0x370
#define REG_TMICT       0x380
#define REG_TMCCT       0x390
#define REG_TDCR        0x3e0
#define REG_SELF_IPI    0x3f0

#define MSR_X2APIC_ICR 0x830

/* Version 0x14, max LVT entry 5 (six LVTs: no CMCI), no EOI-broadcast suppression. */
#define APIC_VERSION 0x50014u

#define SVR_SW_ENABLE (1u << 8)
#define LVT_VECTOR    0xffu

#define TIMER_ONESHOT  0u
#define TIMER_PERIODIC 1u
#define TIMER_TSC      2u

#define ESR_SEND_ILLEGAL (1u << 5)
#define ESR_RECV_ILLEGAL (1u << 6)

/* Delivery-status bit of the LVTs and the ICR: read-only, and always 0 here. */
#define STATUS_BIT    (1u << 12)
#define REMOTE_IRR    (1u << 14)
#define ICR_LO_BITS   0x000ccfffu /* vector, mode, dest mode, level, trigger, shorthand */
#define LVT_TIMER_RW  0x000700ffu /* vector, mask, mode 18:17 */
#define LVT_THERM_RW  0x000107ffu /* vector, delivery mode, mask */
#define LVT_LINT_RW   0x0001a7ffu /* vector, delivery mode, polarity, trigger, mask */
#define LVT_ERROR_RW  0x000100ffu
#define XAPIC_ID_BITS 0xff000000u

enum reg_kind { REG_NONE, REG_RO, REG_WO, REG_RW };

/* Bits a write stores (rw) and bits it may set but that are read-only and ignored (ro). */
struct reg_bits {
    uint32_t rw, ro;
};

bool vlapic_enabled(const struct vlapic *a)
{
    return (a->apic_base & APIC_BASE_ENABLE) != 0;
}

bool vlapic_sw_enabled(const struct vlapic *a)
{
    return (a->svr & SVR_SW_ENABLE) != 0;
}

bool vlapic_x2apic(const struct vlapic *a)
{
    return vlapic_enabled(a) && (a->apic_base & APIC_BASE_EXTD);
}

void vlapic_reset(struct vlapic *a, uint32_t id, bool bsp, unsigned maxphyaddr)
{
    memset(a, 0, sizeof(*a));
    a->id = id;
    a->maxphyaddr = maxphyaddr;
    a->apic_base = VLAPIC_BASE_DEFAULT | APIC_BASE_ENABLE | (bsp ? APIC_BASE_BSP : 0);
    a->dfr = 0xffffffffu;
    a->svr = 0xff;
    a->lvt_timer = a->lvt_thermal = a->lvt_perf = LVT_MASKED;
    a->lvt_lint0 = a->lvt_lint1 = a->lvt_error = LVT_MASKED;
    a->offered = -1;
}

void vlapic_set_lint0_extint(struct vlapic *a)
{
    a->lvt_lint0 = (uint32_t)APIC_DM_EXTINT << 8;
}

bool vlapic_accept_pic_intr(const struct vlapic *a)
{
    uint32_t lvt0 = a->lvt_lint0;
    return !vlapic_enabled(a) ||
           (!(lvt0 & LVT_MASKED) && ((lvt0 >> 8) & 7) == (uint32_t)APIC_DM_EXTINT);
}

/* ---------------------------------------------------------------- priority */

static int highest_bit(const uint32_t reg[8])
{
    for (int i = 7; i >= 0; i--)
        if (reg[i])
            return i * 32 + 31 - __builtin_clz(reg[i]);
    return -1;
}

static bool test_bit(const uint32_t reg[8], unsigned v)
{
    return (reg[v / 32] >> (v % 32)) & 1;
}

static void set_bit(uint32_t reg[8], unsigned v)
{
    reg[v / 32] |= 1u << (v % 32);
}

static void clear_bit(uint32_t reg[8], unsigned v)
{
    reg[v / 32] &= ~(1u << (v % 32));
}

uint32_t vlapic_ppr(const struct vlapic *a)
{
    int isrv = highest_bit(a->isr);
    uint32_t isr_class = isrv < 0 ? 0 : (uint32_t)isrv & 0xf0;
    if ((a->tpr & 0xf0) >= isr_class)
        return a->tpr & 0xff;
    return isr_class;
}

int vlapic_highest_irr(const struct vlapic *a)
{
    return highest_bit(a->irr);
}

int vlapic_highest_pending(const struct vlapic *a)
{
    /* Only the highest IRR vector can be above PPR if any is. */
    int v = highest_bit(a->irr);
    if (v < 0 || ((uint32_t)v & 0xf0) <= (vlapic_ppr(a) & 0xf0))
        return -1;
    return v;
}

void vlapic_ack(struct vlapic *a, uint8_t vector)
{
    clear_bit(a->irr, vector);
    set_bit(a->isr, vector);
    if (vector == (a->lvt_timer & LVT_VECTOR)) {
        a->timer_due = 0;
        a->timer_due_advanced = false;
    }
}

void vlapic_offer(struct vlapic *a, int vector)
{
    a->offered = vector;
    a->offered_again = false;
}

void vlapic_offer_end(struct vlapic *a, int taken)
{
    if (taken >= 0) {
        vlapic_ack(a, (uint8_t)taken);
        if (a->offered_again && taken == a->offered)
            set_bit(a->irr, (unsigned)taken);
    }
    vlapic_offer(a, -1);
}

static void eoi(struct vlapic *a)
{
    int v = highest_bit(a->isr);
    if (v < 0)
        return;
    clear_bit(a->isr, (unsigned)v);
    /* A level-triggered vector's EOI goes on to the I/O APIC (no broadcast suppression). */
    if (test_bit(a->tmr, (unsigned)v))
        set_bit(a->eoi_broadcast, (unsigned)v);
    clear_bit(a->tmr, (unsigned)v);
}

int vlapic_take_eoi_broadcast(struct vlapic *a)
{
    int v = highest_bit(a->eoi_broadcast);
    if (v >= 0)
        clear_bit(a->eoi_broadcast, (unsigned)v);
    return v;
}

/*
 * An error the APIC detected: ESR accumulates it and, if the LVT error entry
 * is unmasked, raises its vector. An illegal error vector only adds the
 * receive-illegal bit, so a bad LVT error entry cannot recurse.
 */
static void apic_error(struct vlapic *a, uint32_t bit)
{
    a->esr |= bit;
    if (a->lvt_error & LVT_MASKED)
        return;
    uint8_t v = a->lvt_error & LVT_VECTOR;
    if (v < 16) {
        a->esr |= ESR_RECV_ILLEGAL;
        return;
    }
    set_bit(a->irr, v);
    clear_bit(a->tmr, v);
}

bool vlapic_accept_trigger(struct vlapic *a, uint8_t vector, bool level)
{
    if (!vlapic_enabled(a) || !vlapic_sw_enabled(a))
        return false;
    if (vector < 16) {
        apic_error(a, ESR_RECV_ILLEGAL);
        return false;
    }
    bool was = test_bit(a->irr, vector);
    set_bit(a->irr, vector);
    if (level)
        set_bit(a->tmr, vector);
    else
        clear_bit(a->tmr, vector);
    if (was && vector == a->offered) {
        /* The guest may be in its handler already: the CPU's exit, kicked, tells (offer_end). */
        a->offered_again = true;
        return true;
    }
    return !was;
}

bool vlapic_accept(struct vlapic *a, uint8_t vector)
{
    return vlapic_accept_trigger(a, vector, false);
}

/* ---------------------------------------------------------------- timer */

static unsigned timer_mode(const struct vlapic *a)
{
    return (a->lvt_timer >> 17) & 3;
}

/* TDCR bits 3,1:0 as a 3-bit value: 0-6 divide by 2 << value, 7 by 1. */
static uint64_t timer_divide(const struct vlapic *a)
{
    unsigned v = ((a->tdcr >> 1) & 4) | (a->tdcr & 3);
    return v == 7 ? 1 : 2u << v;
}

/* A guest can write its TSC close to 2^64: saturate rather than wrap to an early deadline. */
static uint64_t add_sat(uint64_t x, uint64_t y)
{
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

static uint64_t timer_period(const struct vlapic *a)
{
    return (uint64_t)a->tmict * timer_divide(a);
}

static void timer_start_period(struct vlapic *a, uint64_t start)
{
    a->timer_start = start;
    a->timer_deadline = add_sat(start, timer_period(a));
}

static uint32_t timer_current_count(const struct vlapic *a, uint64_t now)
{
    if (timer_mode(a) == TIMER_TSC || a->timer_deadline <= now)
        return 0;
    uint64_t div = timer_divide(a);
    return (uint32_t)((a->timer_deadline - now + div - 1) / div);
}

uint64_t vlapic_timer_deadline(const struct vlapic *a)
{
    return a->timer_deadline;
}

uint64_t vlapic_timer_fire_at(const struct vlapic *a, uint64_t advance)
{
    uint64_t deadline = a->timer_deadline;
    if (!deadline || timer_mode(a) != TIMER_TSC)
        return deadline;
    return deadline > advance ? deadline - advance : 1;
}

bool vlapic_timer_expire(struct vlapic *a, uint64_t now)
{
    return vlapic_timer_expire_advanced(a, now, 0);
}

bool vlapic_timer_expire_advanced(struct vlapic *a, uint64_t now, uint64_t advance)
{
    uint64_t deadline = a->timer_deadline;
    if (!deadline || now < vlapic_timer_fire_at(a, advance))
        return false;
    switch (timer_mode(a)) {
    case TIMER_PERIODIC:
        /* Late by whole periods: one interrupt, and the next a full period from now. */
        if (add_sat(a->timer_deadline, timer_period(a)) <= now) {
            a->timer_stats.skipped += (now - a->timer_deadline) / timer_period(a);
            timer_start_period(a, now);
        } else
            timer_start_period(a, a->timer_deadline);
        break;
    case TIMER_TSC:
        a->tsc_deadline = 0;
        a->timer_deadline = 0;
        break;
    default:
        a->timer_deadline = 0;
        break;
    }
    if (!(a->lvt_timer & LVT_MASKED)) {
        if (vlapic_accept(a, a->lvt_timer & LVT_VECTOR)) {
            a->timer_stats.delivered++;
            a->timer_due = deadline;
            a->timer_due_advanced = now < deadline;
        } else {
            a->timer_stats.coalesced++; /* the pending one keeps its own deadline */
        }
    }
    return true;
}

uint64_t vlapic_timer_due(const struct vlapic *a, int vector)
{
    return vector == (int)(a->lvt_timer & LVT_VECTOR) ? a->timer_due : 0;
}

/* Guest TSC cycles as ns at tsc_khz, and back. */
static uint64_t advance_ns(uint64_t cycles, uint64_t tsc_khz)
{
    return cycles * 1000000 / tsc_khz;
}

static uint64_t advance_cycles(uint64_t ns, uint64_t tsc_khz)
{
    return ns * tsc_khz / 1000000;
}

void vlapic_advance_init(struct vlapic_advance *adv, int64_t option_ns, uint64_t tsc_khz)
{
    adv->tsc_khz = tsc_khz ? tsc_khz : 1;
    adv->adaptive = option_ns == VLAPIC_ADVANCE_ADAPTIVE;
    adv->ns = adv->adaptive   ? advance_ns(VLAPIC_ADVANCE_INIT, adv->tsc_khz)
              : option_ns > 0 ? (uint64_t)option_ns
                              : 0;
    adv->cycles = advance_cycles(adv->ns, adv->tsc_khz);
}

void vlapic_advance_adjust(struct vlapic_advance *adv, int64_t delta)
{
    uint64_t size = delta < 0 ? -(uint64_t)delta : (uint64_t)delta;
    if (!adv->adaptive || size > VLAPIC_ADVANCE_ADJUST_MAX || size < VLAPIC_ADVANCE_ADJUST_MIN)
        return;
    uint64_t step = advance_ns(size, adv->tsc_khz) / VLAPIC_ADVANCE_ADJUST_STEP;
    uint64_t max = advance_ns(VLAPIC_ADVANCE_MAX, adv->tsc_khz);
    /* KVM's u32 wraps below 0 to past the maximum: both start again. */
    if (delta < 0 ? step > adv->ns : adv->ns + step > max)
        adv->ns = advance_ns(VLAPIC_ADVANCE_INIT, adv->tsc_khz);
    else
        adv->ns = delta < 0 ? adv->ns - step : adv->ns + step;
    adv->cycles = advance_cycles(adv->ns, adv->tsc_khz);
}

struct vlapic_timer_entry vlapic_timer_entry(struct vlapic *a, struct vlapic_advance *adv,
                                             int vector, uint64_t now)
{
    struct vlapic_timer_entry e = {vlapic_timer_due(a, vector), 0};
    if (!e.due || !a->timer_due_advanced)
        return e;
    a->timer_due_advanced = false;
    vlapic_advance_adjust(adv, (int64_t)(now - e.due));
    if (now < e.due)
        e.wait_until = now + (e.due - now < adv->cycles ? e.due - now : adv->cycles);
    return e;
}

void vlapic_tsc_moved(struct vlapic *a, uint64_t before, uint64_t after)
{
    if (timer_mode(a) == TIMER_TSC || !a->timer_deadline)
        return;
    uint64_t left = a->timer_deadline > before ? a->timer_deadline - before : 0;
    a->timer_start = after - (before - a->timer_start);
    a->timer_deadline = add_sat(after, left);
}

/* A TDCR write changes the rate; the remaining count carries over at the new rate. */
static void write_tdcr(struct vlapic *a, uint32_t v, uint64_t now)
{
    uint32_t count = timer_current_count(a, now);
    a->tdcr = v;
    if (count)
        a->timer_deadline = add_sat(now, (uint64_t)count * timer_divide(a));
}

/*
 * A change to or from TSC-deadline mode disarms the timer (SDM 10.5.4.1).
 * TMICT is cleared as well, so that the registers read as a stopped timer
 * (TMICT 0, TMCCT 0) and a later TMICT or deadline write is what restarts
 * it. Between one-shot and periodic the count goes on: the new mode decides
 * what happens when it reaches 0.
 */
static bool write_lvt_timer(struct vlapic *a, uint32_t v)
{
    unsigned mode = (v >> 17) & 3;
    if (mode == 3) /* reserved */
        return false;
    if ((mode == TIMER_TSC) != (timer_mode(a) == TIMER_TSC)) {
        a->tmict = 0;
        a->timer_deadline = 0;
        a->tsc_deadline = 0;
    }
    a->lvt_timer = v;
    return true;
}

static void write_tmict(struct vlapic *a, uint32_t v, uint64_t now)
{
    if (timer_mode(a) == TIMER_TSC)
        return;
    a->tmict = v;
    if (v)
        timer_start_period(a, now);
    else
        a->timer_deadline = 0;
}

/* ---------------------------------------------------------------- IPIs */

/*
 * Reports the IPI an ICR write asks for. Reserved delivery modes (3, 7)
 * send nothing; a fixed or lowest-priority IPI with an illegal vector sets
 * ESR "send illegal vector" and is not sent either.
 */
static void send_ipi(struct vlapic *a, uint32_t lo, uint32_t dest, struct vlapic_ipi *ipi,
                     bool *ipi_out)
{
    unsigned mode = (lo >> 8) & 7;
    uint8_t vector = lo & 0xff;
    if (mode == 3 || mode == 7)
        return;
    if ((mode == APIC_DM_FIXED || mode == APIC_DM_LOWEST) && vector < 16) {
        apic_error(a, ESR_SEND_ILLEGAL);
        return;
    }
    /* Whole, so what the ICR does not say is zero: an ICR IPI is edge (trigger_level false). */
    *ipi = (struct vlapic_ipi){.vector = vector,
                               .mode = (enum apic_delivery)mode,
                               .shorthand = (enum apic_shorthand)((lo >> 18) & 3),
                               .logical = (lo >> 11) & 1,
                               .level = (lo >> 14) & 1,
                               .dest = dest};
    *ipi_out = true;
}

/* x2APIC SELF_IPI: a fixed, edge, asserted IPI to this APIC (dest = its own ID). */
static void self_ipi(struct vlapic *a, uint32_t vector, struct vlapic_ipi *ipi, bool *ipi_out)
{
    send_ipi(a, vector | (1u << 14) | ((uint32_t)APIC_DEST_SELF << 18), a->id, ipi, ipi_out);
}

bool vlapic_match_dest(const struct vlapic *a, uint32_t dest, bool logical)
{
    if (!vlapic_enabled(a))
        return false;
    if (vlapic_x2apic(a)) {
        if (dest == 0xffffffffu)
            return true;
        if (!logical)
            return dest == a->id;
        return (dest >> 16) == (a->ldr >> 16) && (dest & a->ldr & 0xffff) != 0;
    }
    /* xAPIC destinations are 8 bits: only the low byte of dest is compared. */
    dest &= 0xff;
    if (dest == 0xff)
        return true;
    if (!logical)
        return dest == (a->id & 0xff);
    uint32_t ldr = a->ldr >> 24;
    switch (a->dfr >> 28) {
    case 0xf: /* flat */
        return (ldr & dest) != 0;
    case 0x0: /* cluster */
        return (dest >> 4) == (ldr >> 4) && (dest & ldr & 0xf) != 0;
    default: /* a model the SDM does not define: nothing matches */
        return false;
    }
}

/* ---------------------------------------------------------------- registers */

static bool in_bank(uint32_t off, uint32_t bank)
{
    return off >= bank && off < bank + 0x80;
}

static enum reg_kind reg_kind(uint32_t off, bool x2)
{
    if (in_bank(off, REG_ISR) || in_bank(off, REG_TMR) || in_bank(off, REG_IRR))
        return REG_RO;
    switch (off) {
    case REG_ID:
    case REG_VERSION:
    case REG_PPR:
    case REG_TMCCT:
        return REG_RO;
    case REG_APR: /* no x2APIC MSR 0x809 */
        return x2 ? REG_NONE : REG_RO;
    case REG_EOI:
        return REG_WO;
    case REG_LDR: /* derived from the x2APIC ID in x2APIC mode */
        return x2 ? REG_RO : REG_RW;
    case REG_DFR:
    case REG_ICR_HI: /* x2APIC merges the ICR into MSR 0x830 */
        return x2 ? REG_NONE : REG_RW;
    case REG_SELF_IPI:
        return x2 ? REG_WO : REG_NONE;
    case REG_TPR:
    case REG_SVR:
    case REG_ESR:
    case REG_ICR_LO:
    case REG_LVT_TIMER:
    case REG_LVT_THERMAL:
    case REG_LVT_PERF:
    case REG_LVT_LINT0:
    case REG_LVT_LINT1:
    case REG_LVT_ERROR:
    case REG_TMICT:
    case REG_TDCR:
        return REG_RW;
    default:
        return REG_NONE;
    }
}

/*
 * The bits of each writable register. In x2APIC mode a write with any other
 * bit set is #GP (SDM 11.12.1.3); xAPIC drops them. Treated as reserved: TPR
 * 31:8, SVR 31:10 (bit 12 too, as the version offers no EOI-broadcast
 * suppression), all of EOI and ESR (x2APIC requires 0), ICR bits 13, 17:16
 * and 31:20, LVT bits outside the fields each entry has, TDCR 31:4 and bit
 * 2, SELF_IPI 31:8. Delivery status and remote IRR are read-only: writing
 * them is ignored, since software writes back what it read.
 */
static struct reg_bits reg_bits(uint32_t off)
{
    switch (off) {
    case REG_TPR:
    case REG_SELF_IPI:
        return (struct reg_bits){0xff, 0};
    case REG_LDR:
    case REG_ICR_HI:
        return (struct reg_bits){XAPIC_ID_BITS, 0};
    case REG_DFR:
        return (struct reg_bits){0xf0000000u, 0};
    case REG_SVR:
        return (struct reg_bits){0x3ff, 0};
    case REG_ICR_LO:
        return (struct reg_bits){ICR_LO_BITS, STATUS_BIT};
    case REG_LVT_TIMER:
        return (struct reg_bits){LVT_TIMER_RW, STATUS_BIT};
    case REG_LVT_THERMAL:
    case REG_LVT_PERF:
        return (struct reg_bits){LVT_THERM_RW, STATUS_BIT};
    case REG_LVT_LINT0:
    case REG_LVT_LINT1:
        return (struct reg_bits){LVT_LINT_RW, STATUS_BIT | REMOTE_IRR};
    case REG_LVT_ERROR:
        return (struct reg_bits){LVT_ERROR_RW, STATUS_BIT};
    case REG_TMICT:
        return (struct reg_bits){0xffffffffu, 0};
    case REG_TDCR:
        return (struct reg_bits){0xb, 0};
    default: /* EOI, ESR: nothing is stored */
        return (struct reg_bits){0, 0};
    }
}

/* The value of a readable register (reg_kind RO or RW). */
static uint32_t reg_read(const struct vlapic *a, uint32_t off, uint64_t now)
{
    bool x2 = vlapic_x2apic(a);
    if (in_bank(off, REG_ISR))
        return a->isr[(off - REG_ISR) >> 4];
    if (in_bank(off, REG_TMR))
        return a->tmr[(off - REG_TMR) >> 4];
    if (in_bank(off, REG_IRR))
        return a->irr[(off - REG_IRR) >> 4];
    switch (off) {
    case REG_ID:
        return x2 ? a->id : a->id << 24;
    case REG_VERSION:
        return APIC_VERSION;
    case REG_TPR:
        return a->tpr;
    case REG_PPR:
        return vlapic_ppr(a);
    case REG_LDR:
        return a->ldr;
    case REG_DFR:
        return a->dfr;
    case REG_SVR:
        return a->svr;
    case REG_ESR:
        return a->esr;
    case REG_ICR_LO:
        return a->icr_lo; /* delivery status: never stored, delivery is immediate */
    case REG_ICR_HI:
        return a->icr_hi;
    case REG_LVT_TIMER:
        return a->lvt_timer;
    case REG_LVT_THERMAL:
        return a->lvt_thermal;
    case REG_LVT_PERF:
        return a->lvt_perf;
    case REG_LVT_LINT0:
        return a->lvt_lint0;
    case REG_LVT_LINT1:
        return a->lvt_lint1;
    case REG_LVT_ERROR:
        return a->lvt_error;
    case REG_TMICT:
        return a->tmict;
    case REG_TMCCT:
        return timer_current_count(a, now);
    case REG_TDCR:
        return a->tdcr;
    default: /* APR */
        return 0;
    }
}

/*
 * A write to a writable register (reg_kind WO or RW), v already cut to the
 * register's bits. Returns false only for a reserved LVT timer mode.
 */
static bool reg_write(struct vlapic *a, uint32_t off, uint32_t v, uint64_t now,
                      struct vlapic_ipi *ipi, bool *ipi_out)
{
    bool x2 = vlapic_x2apic(a);
    /* A software-disabled APIC keeps every LVT masked (SDM 11.4.7.2). */
    if (off >= REG_LVT_TIMER && off <= REG_LVT_ERROR && !vlapic_sw_enabled(a))
        v |= LVT_MASKED;
    switch (off) {
    case REG_TPR:
        a->tpr = v;
        return true;
    case REG_EOI:
        eoi(a);
        return true;
    case REG_LDR:
        a->ldr = v;
        return true;
    case REG_DFR:
        a->dfr = v | 0x0fffffffu; /* bits 27:0 read as ones */
        return true;
    case REG_SVR:
        a->svr = v;
        if (!(v & SVR_SW_ENABLE)) {
            a->lvt_timer |= LVT_MASKED;
            a->lvt_thermal |= LVT_MASKED;
            a->lvt_perf |= LVT_MASKED;
            a->lvt_lint0 |= LVT_MASKED;
            a->lvt_lint1 |= LVT_MASKED;
            a->lvt_error |= LVT_MASKED;
        }
        return true;
    case REG_ESR:
        a->esr = 0;
        return true;
    case REG_ICR_LO:
        a->icr_lo = v;
        send_ipi(a, v, x2 ? a->icr_hi : a->icr_hi >> 24, ipi, ipi_out);
        return true;
    case REG_ICR_HI:
        a->icr_hi = v;
        return true;
    case REG_LVT_TIMER:
        return write_lvt_timer(a, v);
    case REG_TMICT:
        write_tmict(a, v, now);
        return true;
    case REG_TDCR:
        write_tdcr(a, v, now);
        return true;
    case REG_LVT_THERMAL:
        a->lvt_thermal = v;
        return true;
    case REG_LVT_PERF:
        a->lvt_perf = v;
        return true;
    case REG_LVT_LINT0:
        a->lvt_lint0 = v;
        return true;
    case REG_LVT_LINT1:
        a->lvt_lint1 = v;
        return true;
    case REG_LVT_ERROR:
        a->lvt_error = v;
        return true;
    default: /* SELF_IPI */
        self_ipi(a, v, ipi, ipi_out);
        return true;
    }
}

/* ---------------------------------------------------------------- MMIO */

static bool mmio_accessible(const struct vlapic *a, uint32_t offset)
{
    return vlapic_enabled(a) && !vlapic_x2apic(a) && offset <= 0xff0 && !(offset & 0xf);
}

bool vlapic_mmio_read(struct vlapic *a, uint32_t offset, uint32_t *value, uint64_t now)
{
    *value = 0;
    if (!mmio_accessible(a, offset))
        return false;
    switch (reg_kind(offset, false)) {
    case REG_NONE:
        return false;
    case REG_WO: /* EOI reads as 0 */
        return true;
    default:
        *value = reg_read(a, offset, now);
        return true;
    }
}

bool vlapic_mmio_write(struct vlapic *a, uint32_t offset, uint32_t value, uint64_t now,
                       struct vlapic_ipi *ipi, bool *ipi_out)
{
    *ipi_out = false;
    if (!mmio_accessible(a, offset))
        return false;
    switch (reg_kind(offset, false)) {
    case REG_NONE:
        return false;
    case REG_RO: /* the xAPIC ignores such writes without an error */
        return true;
    default:
        return reg_write(a, offset, value & reg_bits(offset).rw, now, ipi, ipi_out);
    }
}

/* ---------------------------------------------------------------- MSRs */

/*
 * IA32_APIC_BASE, as KVM's kvm_set_apic_base and kvm_lapic_set_base: bits
 * 7:0 and 9 are reserved, and so are those from MAXPHYADDR up; EXTD is not
 * (pollux always offers x2APIC). The address moves the xAPIC page, in any
 * mode. BSP is read-only and a written BSP bit is ignored. Mode transitions
 * per SDM 11.12.5: disabled -> xAPIC, xAPIC -> x2APIC, and any -> disabled;
 * everything else is #GP.
 */
static bool write_apic_base(struct vlapic *a, uint64_t v)
{
    const uint64_t mode_bits = APIC_BASE_ENABLE | APIC_BASE_EXTD;
    uint64_t reserved = APIC_BASE_RESERVED | (a->maxphyaddr < 64 ? ~0ull << a->maxphyaddr : 0);
    if (v & reserved)
        return false;
    uint64_t from = a->apic_base & mode_bits, to = v & mode_bits;
    if (to == APIC_BASE_EXTD)
        return false; /* EXTD without EN is an invalid state */
    if (to == APIC_BASE_ENABLE && from == mode_bits)
        return false; /* x2APIC -> xAPIC must go through disabled */
    if (to == mode_bits && from == 0)
        return false; /* x2APIC only from xAPIC */
    /* A disabled APIC keeps only its ID: its registers restart as after reset. */
    if (to == 0 && from != 0)
        vlapic_reset(a, a->id, a->apic_base & APIC_BASE_BSP, a->maxphyaddr);
    /* The logical x2APIC ID: cluster id >> 4 in 31:16, one bit for id & 0xF in 15:0. */
    if (to == mode_bits && from != mode_bits)
        a->ldr = ((a->id >> 4) << 16) | (1u << (a->id & 0xf));
    a->apic_base = (v & ~(uint64_t)APIC_BASE_BSP) | (a->apic_base & APIC_BASE_BSP);
    return true;
}

bool vlapic_msr_read(struct vlapic *a, uint32_t msr, uint64_t *value, uint64_t now)
{
    *value = 0;
    if (msr == MSR_IA32_APIC_BASE) {
        *value = a->apic_base;
        return true;
    }
    if (msr == MSR_TSC_DEADLINE) {
        if (timer_mode(a) == TIMER_TSC)
            *value = a->tsc_deadline;
        return true;
    }
    if (msr < MSR_X2APIC_FIRST || msr > MSR_X2APIC_LAST || !vlapic_x2apic(a))
        return false;
    if (msr == MSR_X2APIC_ICR) {
        *value = (uint64_t)a->icr_hi << 32 | a->icr_lo;
        return true;
    }
    uint32_t off = (msr - MSR_X2APIC_FIRST) << 4;
    enum reg_kind kind = reg_kind(off, true);
    if (kind != REG_RO && kind != REG_RW)
        return false;
    *value = reg_read(a, off, now);
    return true;
}

bool vlapic_msr_write(struct vlapic *a, uint32_t msr, uint64_t value, uint64_t now,
                      struct vlapic_ipi *ipi, bool *ipi_out)
{
    *ipi_out = false;
    if (msr == MSR_IA32_APIC_BASE)
        return write_apic_base(a, value);
    if (msr == MSR_TSC_DEADLINE) {
        /* Ignored outside TSC-deadline mode; 0 disarms. A deadline already passed fires
         * now, as the write retires (SDM 10.5.4.1): the guest's next instruction finds its
         * interrupt pending and the MSR 0, not a later timer exit's. */
        if (timer_mode(a) == TIMER_TSC) {
            a->tsc_deadline = a->timer_deadline = value;
            vlapic_timer_expire(a, now);
        }
        return true;
    }
    if (msr < MSR_X2APIC_FIRST || msr > MSR_X2APIC_LAST || !vlapic_x2apic(a))
        return false;
    uint32_t off = (msr - MSR_X2APIC_FIRST) << 4;
    enum reg_kind kind = reg_kind(off, true);
    if (kind != REG_WO && kind != REG_RW)
        return false;
    uint32_t lo = (uint32_t)value;
    struct reg_bits bits = reg_bits(off);
    if (lo & ~(bits.rw | bits.ro))
        return false;
    if (msr == MSR_X2APIC_ICR)
        a->icr_hi = (uint32_t)(value >> 32); /* the 32-bit destination */
    else if (value >> 32)
        return false; /* the upper half of every other x2APIC MSR is reserved */
    return reg_write(a, off, lo & bits.rw, now, ipi, ipi_out);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The virtual local APIC of one vCPU: register semantics only, no locking,
 * no knowledge of vCPUs or host timers, so it runs in host unit tests. The
 * caller (vmm/dev/lapic.c) routes guest accesses here, delivers the IPIs
 * an ICR write asks for, arms host timers from vlapic_timer_fire_at(), and
 * injects what vlapic_highest_pending() returns.
 *
 * Time: every function that needs it takes `now`, the guest TSC. The timer
 * counts at the TSC rate divided by TDCR (the "APIC timer rate" pollux
 * documents in CPUID 0x40000010 EBX is the TSC rate), so expiry times are
 * exact TSC values. TSC-deadline mode compares MSR 0x6E0 with the guest TSC.
 *
 * Registers follow the Intel SDM (vol. 3A ch. 11) for xAPIC (MMIO offsets
 * 0x000-0x3F0) and x2APIC (MSRs 0x800 + offset/16): ID, version (0x14 with
 * 6 LVT entries, i.e. 0x50014), TPR, APR (reads 0), PPR, EOI, LDR, DFR
 * (xAPIC only), SVR, ISR/TMR/IRR (8 x 32 bits), ESR, ICR (x2APIC: one
 * 64-bit MSR 0x830), LVT timer/thermal/perf/LINT0/LINT1/error, TMICT,
 * TMCCT, TDCR, SELF_IPI (x2APIC MSR 0x83F).
 */
#ifndef POLLUX_VMM_DEV_VLAPIC_H
#define POLLUX_VMM_DEV_VLAPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/regs.h"

#define VLAPIC_BASE_DEFAULT 0xfee00000u
#define MSR_IA32_APIC_BASE  0x1b
#define MSR_X2APIC_FIRST    0x800
#define MSR_X2APIC_LAST     0x8ff

/* IA32_APIC_BASE bits */
#define APIC_BASE_BSP      (1u << 8)
#define APIC_BASE_EXTD     (1u << 10)  /* x2APIC mode */
#define APIC_BASE_RESERVED 0x2ffull    /* bits 7:0 and 9; those from MAXPHYADDR up too */
#define APIC_BASE_ADDRESS  (~0xfffull) /* the xAPIC page, below MAXPHYADDR */

/* ICR delivery modes (bits 10:8) */
enum apic_delivery {
    APIC_DM_FIXED = 0,
    APIC_DM_LOWEST = 1,
    APIC_DM_SMI = 2,
    APIC_DM_NMI = 4,
    APIC_DM_INIT = 5,
    APIC_DM_STARTUP = 6,
    APIC_DM_EXTINT = 7, /* LVT only: the vector comes from the 8259 (an ICR's 7 sends nothing) */
};

/* ICR destination shorthand (bits 19:18) */
enum apic_shorthand {
    APIC_DEST_NONE = 0,
    APIC_DEST_SELF = 1,
    APIC_DEST_ALL = 2, /* all including self */
    APIC_DEST_ALL_BUT_SELF = 3,
};

/* An IPI requested by an ICR (or SELF_IPI) write, for the caller to deliver. */
struct vlapic_ipi {
    uint8_t vector;
    enum apic_delivery mode;
    enum apic_shorthand shorthand;
    bool logical; /* destination mode */
    bool level;   /* INIT level de-assert (level=0, mode INIT) is to be ignored by the caller */
    bool trigger_level; /* a level-triggered fixed interrupt (from the I/O APIC): EOI broadcasts */
    uint32_t dest;      /* xAPIC: 8 bits (ICR bits 63:56); x2APIC: 32 bits */
};

struct vlapic {
    uint32_t id;         /* APIC ID: the vCPU id */
    uint64_t apic_base;  /* IA32_APIC_BASE */
    unsigned maxphyaddr; /* the guest's (CPUID 0x80000008 EAX[7:0]): base bits from it up #GP */
    uint32_t tpr, ldr, dfr, svr, esr, icr_lo, icr_hi;
    uint32_t lvt_timer, lvt_thermal, lvt_perf, lvt_lint0, lvt_lint1, lvt_error;
    uint32_t tmict, tdcr;
    uint32_t irr[8], isr[8], tmr[8];
    uint32_t eoi_broadcast[8]; /* EOIs of level-triggered vectors, for the I/O APIC */
    /*
     * The vector the CPU was offered at this entry (SVM V_IRQ), -1 for none,
     * until its exit says whether the guest took it (vlapic_offer_end). The
     * CPU takes it without an exit, so until then its IRR bit may stand for
     * an interrupt already in the guest's handler: the same vector accepted
     * meanwhile is a new one (offered_again), not merged with that one.
     */
    int offered;
    bool offered_again;
    /* Timer state. */
    uint64_t timer_start;    /* guest TSC when TMICT was written / the period restarted */
    uint64_t timer_deadline; /* guest TSC of the next expiry, 0 = not armed */
    uint64_t tsc_deadline;   /* MSR 0x6E0 */
    /*
     * The deadline of the expiry whose interrupt waits in IRR, for the entry
     * that injects it (KVM's expired_tscdeadline, in every mode): 0 = none.
     * timer_due_advanced: it expired ahead of its deadline by the timer
     * advance (TSC-deadline mode), so the first entry to inject it waits for
     * the deadline and tunes the advance.
     */
    uint64_t timer_due;
    bool timer_due_advanced;
    /*
     * What became of the timer's expiries (counters; vlapic_reset clears
     * them, the vCPU's INIT keeps them):
     * delivered raised the vector in IRR, coalesced found it already pending
     * (or the APIC software-disabled) and merged, skipped counts the whole
     * periods a late periodic expiry passed over. Masked expiries count
     * nowhere.
     */
    struct {
        uint64_t delivered, coalesced, skipped;
    } timer_stats;
};

/*
 * Power-on / INIT state: xAPIC mode at 0xFEE00000, enabled, SVR 0xFF
 * (software disabled), for a CPU whose physical addresses have maxphyaddr bits.
 */
void vlapic_reset(struct vlapic *a, uint32_t id, bool bsp, unsigned maxphyaddr);

bool vlapic_enabled(const struct vlapic *a);    /* IA32_APIC_BASE enable bit */
bool vlapic_sw_enabled(const struct vlapic *a); /* SVR bit 8 */
bool vlapic_x2apic(const struct vlapic *a);

/*
 * Where the xAPIC page is (KVM's base_address): IA32_APIC_BASE's address
 * bits, in every mode. In xAPIC mode it holds the registers; disabled or in
 * x2APIC mode it is still this APIC's page, reading all ones and dropping
 * writes (KVM's LAPIC_MMIO_HOLE quirk).
 */
static inline uint64_t vlapic_base_address(const struct vlapic *a)
{
    return a->apic_base & APIC_BASE_ADDRESS;
}

/*
 * xAPIC MMIO access at a register offset (0x000-0xFF0, 32-bit aligned
 * accesses; others return false). A write may request an IPI: then *ipi is
 * filled and the function returns true with *ipi_out set. Writes that
 * change the timer update timer_deadline.
 * Returns false for an access the hardware would reject (it is then
 * ignored: reads give 0), true otherwise.
 */
bool vlapic_mmio_read(struct vlapic *a, uint32_t offset, uint32_t *value, uint64_t now);
bool vlapic_mmio_write(struct vlapic *a, uint32_t offset, uint32_t value, uint64_t now,
                       struct vlapic_ipi *ipi, bool *ipi_out);

/*
 * MSR access: IA32_APIC_BASE (0x1B), TSC_DEADLINE (0x6E0) and the x2APIC
 * range (0x800-0x8FF, only in x2APIC mode). Returns false when the guest
 * must get #GP: x2APIC MSRs outside x2APIC mode, reserved or read-only
 * registers written, write-only read, reserved bits set (e.g. EOI with a
 * non-zero value in x2APIC mode), an IA32_APIC_BASE with reserved bits set
 * (7:0, 9, or any from maxphyaddr up) or an illegal transition (x2APIC ->
 * xAPIC without disabling first, enabling x2APIC while disabled). A new
 * base address moves the xAPIC page (vlapic_base_address), in any mode.
 * Disabling the APIC (clearing the enable bit) resets it to the state of a
 * disabled APIC; re-enabling it comes back in xAPIC mode with the ID kept.
 */
bool vlapic_msr_read(struct vlapic *a, uint32_t msr, uint64_t *value, uint64_t now);
bool vlapic_msr_write(struct vlapic *a, uint32_t msr, uint64_t value, uint64_t now,
                      struct vlapic_ipi *ipi, bool *ipi_out);

/*
 * The BSP's LINT0 as a PC's firmware leaves it and KVM's vCPU reset sets it
 * (kvm_lapic_reset): ExtINT, unmasked, the virtual-wire mode that passes the
 * 8259's INT through, whatever SVR says. After vlapic_reset.
 */
void vlapic_set_lint0_extint(struct vlapic *a);

/*
 * Does the 8259's INT reach this CPU (KVM's kvm_apic_accept_pic_intr)? It
 * does while the APIC is disabled in IA32_APIC_BASE (LINT0 is then the
 * CPU's INTR pin) or LINT0 is unmasked in ExtINT mode.
 */
bool vlapic_accept_pic_intr(const struct vlapic *a);

/* Would this APIC accept an interrupt addressed (dest, logical) in its current mode? */
bool vlapic_match_dest(const struct vlapic *a, uint32_t dest, bool logical);

/*
 * Set the vector in IRR (fixed delivery, edge). Vectors 0-15 are illegal:
 * they set ESR bit 6 (receive illegal vector) and are dropped. Ignored while
 * the APIC is disabled or software-disabled. Returns true if IRR changed.
 */
bool vlapic_accept(struct vlapic *a, uint8_t vector);
/* The same for an interrupt of either trigger mode: a level one sets TMR, so its EOI broadcasts. */
bool vlapic_accept_trigger(struct vlapic *a, uint8_t vector, bool level);

/* A level-triggered vector's EOI waiting to reach the I/O APIC (then forgotten), or -1. */
int vlapic_take_eoi_broadcast(struct vlapic *a);

/* The highest IRR vector, deliverable or not, or -1 (KVM's kvm_lapic_find_highest_irr). */
int vlapic_highest_irr(const struct vlapic *a);

/*
 * The highest IRR vector whose priority class is above PPR's, or -1.
 * PPR = TPR if TPR[7:4] >= ISRV[7:4] else ISRV & 0xF0.
 */
int vlapic_highest_pending(const struct vlapic *a);

/* The vector was delivered to the guest: move it from IRR to ISR. */
void vlapic_ack(struct vlapic *a, uint8_t vector);

/*
 * The vector (or -1) is offered to the CPU for the coming entry, which
 * delivers it by itself when the guest can take it; vlapic_offer_end, after
 * the exit, with the vector the guest took (or -1): it moves to ISR, and
 * pends again if it was accepted again meanwhile.
 */
void vlapic_offer(struct vlapic *a, int vector);
void vlapic_offer_end(struct vlapic *a, int taken);

uint32_t vlapic_ppr(const struct vlapic *a);

/*
 * Timer. vlapic_timer_deadline is the guest TSC of the next expiry (0 =
 * none). vlapic_timer_expire(now): if the deadline has passed, raise the LVT
 * timer vector (unless masked), re-arm a periodic timer from the previous
 * deadline (missed periods coalesce into one interrupt, never early), and
 * return true. A raised vector records its expiry's deadline in timer_due.
 */
uint64_t vlapic_timer_deadline(const struct vlapic *a);
bool vlapic_timer_expire(struct vlapic *a, uint64_t now);

/*
 * KVM's timer advance (lapic_timer_advance_ns, adaptive since Linux 5.0),
 * TSC-deadline mode only: the host timer fires `advance` guest TSC cycles
 * before the deadline, the interrupt is raised then (timer_due_advanced),
 * and the entry that injects it waits out the rest (KVM's
 * kvm_wait_lapic_expire), so the guest takes it at its deadline, not the
 * cost of an exit and an entry after it. vlapic_timer_fire_at is when the
 * host timer is due (vlapic_timer_deadline less the advance in TSC-deadline
 * mode, at least 1), vlapic_timer_expire_advanced expires from then;
 * vlapic_timer_expire is the same with no advance. Other modes ignore it.
 */
uint64_t vlapic_timer_fire_at(const struct vlapic *a, uint64_t advance);
bool vlapic_timer_expire_advanced(struct vlapic *a, uint64_t now, uint64_t advance);

/*
 * The timer's expiry whose vector is about to be injected: its deadline if
 * vector is the LVT timer's and an expiry is recorded, else 0. Acknowledging
 * the vector (vlapic_ack) forgets it.
 */
uint64_t vlapic_timer_due(const struct vlapic *a, int vector);

/*
 * The advance's setting (KVM's timer_advance_ns and
 * lapic_timer_advance_dynamic), per vCPU. KVM's tuning works in guest TSC
 * cycles (deltas of 100 to 10000 count) and its advance in ns (from 1000,
 * reset to that when it passes 5000); the two agree at 2 GHz. pollux keeps
 * the cycles, which an emulator's TSC counts as instructions (Bochs ticks
 * once per instruction), as a ~1-IPC CPU's counts cycles, and turns KVM's
 * ns into cycles at 2 GHz: from 2000 cycles, reset past 10000, in ns at the
 * guest's TSC rate (20 and 100 us at Bochs's 100 MHz; KVM's 1 and 5 us at
 * 2 GHz).
 */
#define VLAPIC_ADVANCE_ADJUST_MIN  100   /* cycles: smaller deltas are noise */
#define VLAPIC_ADVANCE_ADJUST_MAX  10000 /* cycles: larger ones are spikes */
#define VLAPIC_ADVANCE_INIT        2000  /* cycles: KVM's 1000 ns at 2 GHz */
#define VLAPIC_ADVANCE_MAX         10000 /* cycles: KVM's 5000 ns at 2 GHz */
#define VLAPIC_ADVANCE_ADJUST_STEP 8     /* a delta moves the advance by an eighth of it */
#define VLAPIC_ADVANCE_ADAPTIVE    (-1)  /* timer_advance_ns=-1 */

struct vlapic_advance {
    uint64_t ns;      /* KVM's timer_advance_ns */
    uint64_t cycles;  /* the same in guest TSC cycles: how early the host timer fires */
    uint64_t tsc_khz; /* the guest TSC's rate */
    bool adaptive;    /* tuned from each wait (KVM's lapic_timer_advance_dynamic) */
};

/* timer_advance_ns: -1 adaptive (from VLAPIC_ADVANCE_INIT), 0 off, N ns fixed. */
void vlapic_advance_init(struct vlapic_advance *adv, int64_t option_ns, uint64_t tsc_khz);

/*
 * KVM's adjust_lapic_timer_advance, for an adaptive advance: delta is the
 * guest TSC at the entry that injects the interrupt less its deadline
 * (negative: the timer fired too early, so the advance shrinks; positive:
 * too late, it grows), by an eighth of it, deltas outside
 * [ADJUST_MIN, ADJUST_MAX] ignored; past VLAPIC_ADVANCE_MAX, or below 0, it
 * starts again from VLAPIC_ADVANCE_INIT.
 */
void vlapic_advance_adjust(struct vlapic_advance *adv, int64_t delta);

/*
 * An entry injects (or offers) vector at guest TSC now, before its
 * acknowledgement: KVM's __kvm_wait_lapic_expire. For the timer's expiry
 * (due: its deadline, else 0): if it expired early by the advance, the
 * first such entry tunes the advance with now - due and, before the
 * deadline, waits until wait_until (the deadline, or at most the advance
 * from now, as KVM's wait is capped); 0 = no wait.
 */
struct vlapic_timer_entry {
    uint64_t due, wait_until;
};
struct vlapic_timer_entry vlapic_timer_entry(struct vlapic *a, struct vlapic_advance *adv,
                                             int vector, uint64_t now);

/*
 * The vCPU's TSC read before and reads after at one instant (its guest wrote
 * IA32_TSC or IA32_TSC_ADJUST): a one-shot or periodic count keeps the time it
 * has left, as its counter does on hardware; a TSC deadline is a TSC value
 * and stays where it is.
 */
void vlapic_tsc_moved(struct vlapic *a, uint64_t before, uint64_t after);

#endif

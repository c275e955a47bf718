/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exit fast path: common exits handled right after the exit, with host
 * interrupts still off, and the guest entered again without the scheduler's
 * and event delivery's work, when nothing asks for that work.
 *
 * The vendor's vcpu_run calls it after every exit and enters again from
 * its own loop while it answers FASTPATH_REENTER (arch/x86/virt.h).
 *
 * The "something changed" summary word (struct vcpu.changed) is the whole
 * contract between the fast path and everything that can give a vCPU work:
 *
 * 1. A sender raises a bit in v->changed (vcpu_mark_changed) *before* it
 *    kicks v's CPU. Senders: vcpu_notify (every interrupt, NMI, INIT,
 *    startup IPI, timer expiry and stop request goes through it), and the
 *    host's timer and kick interrupts for the vCPU current on their CPU
 *    (slice ends, wake-ups queued behind it, migrations).
 * 2. The full path takes the word (vcpu_take_changes: read and clear in one
 *    step) *before* it looks at any state, so a bit raised after that look
 *    began stays raised for the next exit.
 * 3. The fast path reads the word once per exit, with host interrupts off,
 *    after handling the exit, and enters again only if it is zero. A sender
 *    on another CPU that raises a bit after that read kicks: the IPI stays
 *    pending while interrupts are off and makes the entry exit at once (an
 *    external-interrupt exit, which takes the full path). A sender on this
 *    CPU runs in an interrupt handler: before the read where the vendor
 *    lets host interrupts in after each exit (VMX), or not until the loop
 *    ends where it keeps GIF clear throughout (SVM), its interrupt making
 *    the next VMRUN exit at once, like a kick.
 *
 * The fast path also needs RFLAGS.TF clear (a single-step #DB follows an
 * emulated instruction), and the vendor re-enters only when its entry is
 * plain (nothing injected or offered through V_IRQ, no window open), which
 * it checks itself after FASTPATH_REENTER (arch/x86/virt.h).
 */
#ifndef POLLUX_VMM_EXIT_FASTPATH_H
#define POLLUX_VMM_EXIT_FASTPATH_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/virt.h"

struct vcpu;

/* Why the word was raised: for reading dumps, every bit means "take the full path". */
enum vcpu_change {
    CHANGE_EVENT = 1u << 0, /* vcpu_notify: an event, a wake-up or a stop */
    CHANGE_HOST = 1u << 1,  /* the host's timer or kick interrupt on the vCPU's CPU */
    CHANGE_APIC = 1u << 2,  /* the exit itself made a local APIC interrupt deliverable */
};

static inline void vcpu_changes_raise(uint32_t *word, uint32_t why)
{
    __atomic_fetch_or(word, why, __ATOMIC_SEQ_CST);
}

static inline uint32_t vcpu_changes_take(uint32_t *word)
{
    return __atomic_exchange_n(word, 0, __ATOMIC_SEQ_CST);
}

static inline uint32_t vcpu_changes_peek(const uint32_t *word)
{
    return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

/* The generic side of the decision: the summary word read once, and TF. */
static inline bool fastpath_may_reenter(const uint32_t *changed, uint64_t rflags)
{
    return !vcpu_changes_peek(changed) && !(rflags & RFLAGS_TF);
}

#endif

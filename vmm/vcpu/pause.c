/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vcpu/pause.h"

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "sched/sched.h"
#include "vmm/console/trace.h"
#include "vmm/vm.h"
#include "vmm/vm_policy.h"

/* What the CPU offers and needs, read once at boot; each VM chooses from it (pause_vm_init). */
static enum pause_hw hw;
static bool hw_backstop;
/* The hypervisor options' choice: what the boot line reports, and every VM's by default. */
static struct spin_choice hv_choice;

enum spin_detector pause_detector(void)
{
    return hv_choice.detector;
}

bool pause_backstop(void)
{
    return hv_choice.backstop;
}

static void choose(const struct spin_params *p, struct spin_choice *c)
{
    spin_choose(p, hw, hw_backstop, tsc_khz, c);
    c->window_by_l0 =
        c->window && c->mode == PAUSE_EXIT_FILTERED && virt_features.pause_filter_by_l0;
}

void pause_setup(void)
{
    if (!virt)
        return;
    hw = virt->pause_hw();
    hw_backstop = virt->pause_backstop;
    struct spin_choice *c = &hv_choice;
    const struct spin_params *p = &vm_policy_hv.spin;
    choose(p, c);
    switch (c->detector) {
    case SPIN_DETECT_PLE:
    case SPIN_DETECT_PAUSE_FILTER:
        kprintf("pollux: spin detector: %s (window %llu, gap %u, grow %llu, shrink %llu, max "
                "%llu)%s%s\n",
                spin_detector_name(c->detector), (unsigned long long)c->window->base, c->gap,
                (unsigned long long)c->window->grow, (unsigned long long)c->window->shrink,
                (unsigned long long)c->window->max,
                c->count_only ? ", count-only filtering: the CPU has no threshold" : "",
                c->window_by_l0 ? "; window and gap requested only: under KVM the count and "
                                  "threshold in force are L0's unless it runs with pause-in-guest"
                                : "");
        break;
    case SPIN_DETECT_SOFTWARE:
        kprintf("pollux: spin detector: software (every PAUSE exits; a spin is %llu exits within "
                "%llu us)\n",
                (unsigned long long)p->sw_threshold, (unsigned long long)p->sw_window_us);
        break;
    default:
        if (c->backstop)
            kprintf("pollux: spin detector: off (%s); PAUSE exits stay on (pause filter "
                    "count %llu) only to preempt guests spinning with interrupts off, counted as "
                    "pause_exits_backstop\n",
                    p->enabled ? "pause_filter_count_only=off, KVM's choice without a threshold"
                               : "ple=off",
                    (unsigned long long)c->window->base);
        else
            kprintf("pollux: spin detector: off (%s)\n",
                    p->enabled ? "the CPU cannot intercept PAUSE" : "ple=off");
        break;
    }
}

void pause_vm_init(struct vm *vm)
{
    choose(&vm->cfg.policy.spin, &vm->pause);
}

static bool hardware(enum spin_detector d)
{
    return d == SPIN_DETECT_PLE || d == SPIN_DETECT_PAUSE_FILTER;
}

void pause_vcpu_init(struct vcpu *v)
{
    const struct spin_choice *c = &v->vm->pause;
    v->spin.detector = c->detector;
    v->spin.window = c->window && c->mode == PAUSE_EXIT_FILTERED ? c->window->base : 0;
    virt->set_pause_exiting(&v->hw, c->mode, (uint32_t)v->spin.window, c->gap);
}

static void set_window(struct vcpu *v, uint64_t window)
{
    uint64_t old = v->spin.window;
    if (window == old)
        return;
    v->spin.window = window;
    virt->set_pause_exiting(&v->hw, v->vm->pause.mode, (uint32_t)window, v->vm->pause.gap);
    if (trace_on(TRACE_PLE))
        trace_record(v->vm, TRACE_PLE, v->hw.id, window > old ? TRACE_PLE_GROW : TRACE_PLE_SHRINK,
                     window, old);
}

void pause_exit(struct vcpu *v)
{
    struct vcpu_stats *st = &v->stats;
    switch (v->spin.detector) {
    case SPIN_DETECT_SOFTWARE:
        st->pause_exits++;
        if (!spin_sw_pause(&v->spin.sw, &v->vm->pause.sw, rdtsc()))
            return;
        break;
    case SPIN_DETECT_PLE:
    case SPIN_DETECT_PAUSE_FILTER:
        st->pause_exits++;
        set_window(v, spin_window_grow(v->spin.window, v->vm->pause.window));
        break;
    default:
        st->pause_exits_backstop++;
        return;
    }
    st->spins_detected++;
    v->spin.detected = true;
    if (trace_on(TRACE_SCHED))
        trace_record(v->vm, TRACE_SCHED, v->hw.id, TRACE_SCHED_SPIN, 0, v->se.cpu);
}

void pause_sched_in(struct vcpu *v)
{
    yield_spin_end(&v->se.spin_loop);
    v->spin.sw.count = 0;
    if (hardware(v->spin.detector))
        set_window(v, spin_window_shrink(v->spin.window, v->vm->pause.window));
}

bool pause_directed_yield(struct vcpu *v)
{
    struct guest_mode m;
    virt->get_mode(&v->hw, &m);
    struct sched_spin_result r;
    enum sched_spin_decision d = sched_on_spin(&v->se, m.cpl == 0, &r);
    struct vcpu_stats *st = &v->stats;
    unsigned skipped = 0;
    for (unsigned i = 0; i < YIELD_SKIP_COUNT; i++) {
        st->spin_yield_skipped[i] += r.out.skipped[i];
        skipped += r.out.skipped[i];
    }
    st->spin_yield_attempted += r.pivot != YIELD_PIVOT_NONE;
    st->spin_yield_failed_tries += r.out.failed_tries;
    st->spin_yield_gave_up += r.out.gave_up;
    st->spin_yield_gone += r.out.gone;
    static const enum trace_ple traced[] = {
        [SCHED_SPIN_BOOSTED] = TRACE_YIELD_BOOSTED,
        [SCHED_SPIN_SLICE] = TRACE_YIELD_SLICE,
        [SCHED_SPIN_KEPT_CPU] = TRACE_YIELD_KEPT_CPU,
    };
    st->spin_yield_successful += d == SCHED_SPIN_BOOSTED;
    st->spin_slice_yields += d == SCHED_SPIN_SLICE;
    /* The spin's outcome: trace=ple's record, and the timeline's (trace=sched). */
    if (trace_mask & (1u << TRACE_PLE | 1u << TRACE_SCHED))
        trace_record(v->vm, TRACE_PLE, v->hw.id, traced[d], (uint64_t)(r.out.target + 1),
                     trace_yield_pack(r.pivot, skipped, r.out.failed_tries, r.out.gave_up));
    return d != SCHED_SPIN_KEPT_CPU;
}

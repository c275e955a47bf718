/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vcpu/pause.h"

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "sched/sched.h"
#include "vmm/console/trace.h"
#include "vmm/vm.h"

static enum spin_detector detector = SPIN_DETECT_OFF;
static enum pause_exiting mode = PAUSE_EXIT_NEVER;
static bool backstop;
static const struct spin_window_params *window_params; /* the hardware detectors' and backstop's */
static uint32_t gap;
static struct spin_sw_params sw_params;

enum spin_detector pause_detector(void)
{
    return detector;
}

bool pause_backstop(void)
{
    return backstop;
}

void pause_setup(void)
{
    if (!virt)
        return;
    enum pause_hw hw = virt->pause_hw();
    bool filter = hw == PAUSE_HW_FILTER || hw == PAUSE_HW_FILTER_THRESH;
    if (hw == PAUSE_HW_LOOP) {
        window_params = &spin_params.ple;
        gap = (uint32_t)spin_params.ple.gap;
    } else if (filter) {
        window_params = &spin_params.pause_filter;
        gap = hw == PAUSE_HW_FILTER_THRESH ? (uint32_t)spin_params.pause_filter.gap : 0;
    }
    if (!spin_params.enabled) {
        backstop = virt->pause_backstop && filter;
        mode = backstop ? PAUSE_EXIT_FILTERED : PAUSE_EXIT_NEVER;
    } else if (window_params) {
        detector = hw == PAUSE_HW_LOOP ? SPIN_DETECT_PLE : SPIN_DETECT_PAUSE_FILTER;
        mode = PAUSE_EXIT_FILTERED;
    } else if (hw == PAUSE_HW_EVERY) {
        detector = SPIN_DETECT_SOFTWARE;
        mode = PAUSE_EXIT_EVERY;
    }
    sw_params = (struct spin_sw_params){
        .threshold = spin_params.sw_threshold,
        .window_cycles = spin_params.sw_window_us * tsc_khz / 1000,
    };
    switch (detector) {
    case SPIN_DETECT_PLE:
    case SPIN_DETECT_PAUSE_FILTER:
        kprintf("pollux: spin detector: %s (window %llu, gap %u, grow %llu, shrink %llu, max "
                "%llu)%s\n",
                spin_detector_name(detector), (unsigned long long)window_params->base, gap,
                (unsigned long long)window_params->grow, (unsigned long long)window_params->shrink,
                (unsigned long long)window_params->max,
                filter && !gap ? ", count-only filtering: the CPU has no threshold" : "");
        break;
    case SPIN_DETECT_SOFTWARE:
        kprintf("pollux: spin detector: software (every PAUSE exits; a spin is %llu exits within "
                "%llu us)\n",
                (unsigned long long)spin_params.sw_threshold,
                (unsigned long long)spin_params.sw_window_us);
        break;
    default:
        if (backstop)
            kprintf("pollux: spin detector: off (ple=off); PAUSE exits stay on (pause filter "
                    "count %llu) only to preempt guests spinning with interrupts off, counted as "
                    "pause_exits_backstop\n",
                    (unsigned long long)window_params->base);
        else
            kprintf("pollux: spin detector: off (%s)\n",
                    spin_params.enabled ? "the CPU cannot intercept PAUSE" : "ple=off");
        break;
    }
}

static bool hardware(enum spin_detector d)
{
    return d == SPIN_DETECT_PLE || d == SPIN_DETECT_PAUSE_FILTER;
}

void pause_vcpu_init(struct vcpu *v)
{
    v->spin.detector = detector;
    v->spin.window = window_params && mode == PAUSE_EXIT_FILTERED ? window_params->base : 0;
    virt->set_pause_exiting(&v->hw, mode, (uint32_t)v->spin.window, gap);
}

static void set_window(struct vcpu *v, uint64_t window)
{
    uint64_t old = v->spin.window;
    if (window == old)
        return;
    v->spin.window = window;
    virt->set_pause_exiting(&v->hw, mode, (uint32_t)window, gap);
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
        if (!spin_sw_pause(&v->spin.sw, &sw_params, rdtsc()))
            return;
        break;
    case SPIN_DETECT_PLE:
    case SPIN_DETECT_PAUSE_FILTER:
        st->pause_exits++;
        set_window(v, spin_window_grow(v->spin.window, window_params));
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
        set_window(v, spin_window_shrink(v->spin.window, window_params));
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

/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/spin.h"

const char *const spin_count_only_names[] = {
    [SPIN_COUNT_ONLY_SPIN] = "spin",
    [SPIN_COUNT_ONLY_OFF] = "off",
    NULL,
};

void spin_choose(const struct spin_params *p, enum pause_hw hw, bool backstop, uint64_t tsc_khz,
                 struct spin_choice *out)
{
    bool filter = hw == PAUSE_HW_FILTER || hw == PAUSE_HW_FILTER_THRESH;
    *out = (struct spin_choice){
        .detector = SPIN_DETECT_OFF,
        .mode = PAUSE_EXIT_NEVER,
        .count_only = hw == PAUSE_HW_FILTER,
        .sw = {p->sw_threshold, p->sw_window_us * tsc_khz / 1000},
    };
    if (hw == PAUSE_HW_LOOP) {
        out->window = &p->ple;
        out->gap = (uint32_t)p->ple.gap;
    } else if (filter) {
        out->window = &p->pause_filter;
        out->gap = hw == PAUSE_HW_FILTER_THRESH ? (uint32_t)p->pause_filter.gap : 0;
    }
    bool detect = p->enabled && !(out->count_only && p->count_only == SPIN_COUNT_ONLY_OFF);
    if (!detect) {
        out->backstop = backstop && filter;
        out->mode = out->backstop ? PAUSE_EXIT_FILTERED : PAUSE_EXIT_NEVER;
    } else if (out->window) {
        out->detector = hw == PAUSE_HW_LOOP ? SPIN_DETECT_PLE : SPIN_DETECT_PAUSE_FILTER;
        out->mode = PAUSE_EXIT_FILTERED;
    } else if (hw == PAUSE_HW_EVERY) {
        out->detector = SPIN_DETECT_SOFTWARE;
        out->mode = PAUSE_EXIT_EVERY;
    }
}

const char *spin_detector_name(enum spin_detector d)
{
    switch (d) {
    case SPIN_DETECT_PLE:
        return "ple";
    case SPIN_DETECT_PAUSE_FILTER:
        return "pause_filter";
    case SPIN_DETECT_SOFTWARE:
        return "software";
    default:
        return "off";
    }
}

static uint64_t clamp(uint64_t v, const struct spin_window_params *p)
{
    uint64_t max = p->max > p->base ? p->max : p->base;
    return v < p->base ? p->base : v > max ? max : v;
}

uint64_t spin_window_grow(uint64_t window, const struct spin_window_params *p)
{
    if (!p->grow)
        return p->base;
    uint64_t v;
    if (p->grow < p->base)
        v = window > UINT64_MAX / p->grow ? UINT64_MAX : window * p->grow;
    else
        v = window > UINT64_MAX - p->grow ? UINT64_MAX : window + p->grow;
    return clamp(v, p);
}

uint64_t spin_window_shrink(uint64_t window, const struct spin_window_params *p)
{
    if (!p->shrink)
        return p->base;
    uint64_t v;
    if (p->shrink < p->base)
        v = window / p->shrink;
    else
        v = window > p->shrink ? window - p->shrink : 0;
    return clamp(v, p);
}

bool spin_sw_pause(struct spin_sw *s, const struct spin_sw_params *p, uint64_t now)
{
    if (!s->count || now - s->window_start > p->window_cycles) {
        s->window_start = now;
        s->count = 0;
    }
    if (++s->count < p->threshold)
        return false;
    s->count = 0;
    return true;
}

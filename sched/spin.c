/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/spin.h"

/*
 * KVM's module parameters and defaults (kvm_intel ple_*, kvm_amd
 * pause_filter_*). With shrink 0 a window goes back to its base whenever
 * the vCPU is scheduled in.
 *
 * The software detector sees one exit per PAUSE, each costing a full exit:
 * about 20 us of host time under QEMU TCG, a few us under nested KVM, while
 * a spin loop executes PAUSE every few dozen cycles natively. One PAUSE
 * proves nothing (a failed cmpxchg retried once, a short delay); 8 exits in
 * a row mean the vCPU went round its loop 8 times without the lock coming
 * free, the software analogue of PLE's window of 4096 cycles of PAUSEs. The
 * window of 1000 us (a quarter of the default slice) holds 8 exits even on
 * TCG's slowest path, and PAUSEs further apart than that are separate waits,
 * not one spin.
 */
struct spin_params spin_params = {
    .enabled = true,
    .ple = {.gap = 128, .base = 4096, .grow = 2, .shrink = 0, .max = 4294967295u},
    .pause_filter = {.gap = 128, .base = 3000, .grow = 2, .shrink = 0, .max = 65535},
    .sw_threshold = 8,
    .sw_window_us = 1000,
};

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

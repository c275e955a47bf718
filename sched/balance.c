/* SPDX-License-Identifier: GPL-2.0-only */
#include "sched/balance.h"

struct balance_params balance_params = {
    .enabled = true,
    .ms = 0,
};

int balance_place(const unsigned *placed, const bool *ready, unsigned ncpus)
{
    int best = -1;
    for (unsigned c = 0; c < ncpus; c++)
        if (ready[c] && (best < 0 || placed[c] < placed[best]))
            best = (int)c;
    return best;
}

bool balance_may_run_on(int pin, int tied_cpu, bool on_cpu, unsigned cpu)
{
    if (pin >= 0 && (unsigned)pin != cpu)
        return false;
    if (on_cpu)
        return false;
    return tied_cpu < 0 || (unsigned)tied_cpu == cpu;
}

unsigned balance_lock_order(unsigned a, unsigned b, unsigned order[2])
{
    order[0] = a < b ? a : b;
    order[1] = a < b ? b : a;
    return a == b ? 1 : 2;
}

unsigned balance_pull_order(const unsigned *waiting, unsigned ncpus, unsigned self, unsigned *order)
{
    unsigned n = 0;
    for (unsigned c = 0; c < ncpus; c++) {
        if (c == self || !waiting[c])
            continue;
        /* Insertion keeps the order stable: among equals, the lower index first. */
        unsigned at = n++;
        while (at > 0 && waiting[order[at - 1]] < waiting[c]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = c;
    }
    return n;
}

bool balance_pick_cpus(const struct balance_cpu *cpus, unsigned ncpus, unsigned start,
                       unsigned *src, unsigned *dst)
{
    int busiest = -1, least = -1;
    for (unsigned i = 0; i < ncpus; i++) {
        unsigned c = (start + i) % ncpus;
        if (!cpus[c].ready)
            continue;
        if (busiest < 0 || cpus[c].load > cpus[busiest].load)
            busiest = (int)c;
        if (least < 0 || cpus[c].load < cpus[least].load)
            least = (int)c;
    }
    if (busiest < 0 || cpus[busiest].load <= cpus[least].load)
        return false;
    *src = (unsigned)busiest;
    *dst = (unsigned)least;
    return true;
}

/* The movable waiting vCPU with the least (or most) run time, first on ties; -1 if none. */
static int pick(const struct balance_move *m, bool most)
{
    int best = -1;
    for (unsigned i = 0; i < m->nwaiting; i++) {
        const struct balance_vcpu *w = &m->waiting[i];
        if (!w->movable)
            continue;
        if (best < 0 || (most ? w->run_cycles > m->waiting[best].run_cycles
                              : w->run_cycles < m->waiting[best].run_cycles))
            best = (int)i;
    }
    return best;
}

int balance_choose(const struct balance_move *m)
{
    if (m->src_load >= m->dst_load + 2)
        return pick(m, false);
    if (m->src_load != m->dst_load + 1)
        return -1;
    int p = pick(m, true);
    if (p < 0 || m->dst_load == 0)
        return p;
    /* Everything that would stay behind must have run less than everything on the destination. */
    uint64_t left_max = m->src_running ? m->src_running_run : 0;
    for (unsigned i = 0; i < m->nwaiting; i++)
        if (i != (unsigned)p && m->waiting[i].run_cycles > left_max)
            left_max = m->waiting[i].run_cycles;
    return left_max < m->dst_least_run ? p : -1;
}

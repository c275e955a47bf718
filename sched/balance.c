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

int balance_pick_vcpu(const struct balance_vcpu *waiting, unsigned n)
{
    int best = -1;
    for (unsigned i = 0; i < n; i++)
        if (waiting[i].movable && (best < 0 || waiting[i].run_cycles < waiting[best].run_cycles))
            best = (int)i;
    return best;
}

bool balance_should_move(unsigned src_load, unsigned dst_load, uint64_t run_cycles,
                         uint64_t dst_least_run)
{
    if (src_load >= dst_load + 2)
        return true;
    return src_load == dst_load + 1 && (dst_load == 0 || run_cycles < dst_least_run);
}

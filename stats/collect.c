#include "stats/collect.h"

#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "lib/string.h"
#include "sched/sched.h"
#include "vmm/hlt_intercept.h"
#include "vmm/vmm.h"

static const char *reason_name(unsigned r)
{
    return exit_reason_name((enum exit_reason)r);
}

const struct stats_reasons stats_exit_reasons = {EXIT_REASON_COUNT, reason_name};

static uint64_t load(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

static uint64_t us(uint64_t cycles)
{
    return tsc_to_ns(cycles) / 1000;
}

void stats_collect_vcpu(const struct vcpu *v, struct stats_record *r,
                        uint64_t exit_ns[EXIT_REASON_COUNT])
{
    const struct vcpu_stats *st = &v->stats;
    union stats_value *x = r->v;
    memset(r, 0, sizeof(*r));
    r->scope = STATS_SCOPE_VCPU;
    x[STATS_vm].s = v->vm->cfg.name;
    x[STATS_vcpu].n = v->id;
    x[STATS_cpu].n = __atomic_load_n(&v->se.cpu, __ATOMIC_RELAXED);
    x[STATS_spin_detector].s = spin_detector_name(v->spin.detector);
    /* Completed time only: adding the current state's share could count it twice. */
    x[STATS_run_us].n = us(load(&v->se.cycles[SCHED_RUNNING]));
    x[STATS_wait_us].n = us(load(&v->se.cycles[SCHED_RUNNABLE]));
    x[STATS_polling_us].n = us(load(&v->se.cycles[SCHED_POLLING]));
    x[STATS_blocked_us].n = us(load(&v->se.cycles[SCHED_BLOCKED]));
    for (unsigned i = 0; i < EXIT_REASON_COUNT; i++)
        exit_ns[i] = tsc_to_ns(load(&st->exit_cycles[i]));
    x[STATS_exits].by = st->exits;
    x[STATS_exit_ns].by = exit_ns;
    x[STATS_halts].n = load(&st->halts);
    x[STATS_hlt_exits].n = load(&st->exits[EXIT_HLT]);
    x[STATS_idle_hlt_exits].n = load(&st->exits[EXIT_IDLE_HLT]);
    x[STATS_hlt_in_shadow].n = load(&st->hlt_in_shadow);
    x[STATS_halt_exits].n = x[STATS_hlt_exits].n + x[STATS_idle_hlt_exits].n;
    x[STATS_hlt_intercept].s = hlt_intercept_name(hlt_intercept_mode());
    x[STATS_halt_attempted_poll].n = load(&st->halt_attempted_poll);
    x[STATS_halt_successful_poll].n = load(&st->halt_successful_poll);
    x[STATS_halt_poll_invalid].n = load(&st->halt_poll_invalid);
    x[STATS_halt_wakeup].n = load(&st->halt_wakeup);
    x[STATS_halt_poll_success_ns].n = load(&st->halt_poll_success_ns);
    x[STATS_halt_poll_fail_ns].n = load(&st->halt_poll_fail_ns);
    x[STATS_halt_wait_ns].n = load(&st->halt_wait_ns);
    x[STATS_halt_poll_success_hist].hist = st->halt_poll_success_hist;
    x[STATS_halt_poll_fail_hist].hist = st->halt_poll_fail_hist;
    x[STATS_halt_wait_hist].hist = st->halt_wait_hist;
    x[STATS_halt_poll_ns].n = load(&v->halt_poll.window_ns);
    x[STATS_poll_control].n = load(&v->poll_control);
    x[STATS_halt_attempted_poll_optout].n = load(&st->halt_attempted_poll_optout);
    x[STATS_pause_exits].n = load(&st->pause_exits);
    x[STATS_pause_exits_backstop].n = load(&st->pause_exits_backstop);
    x[STATS_spins_detected].n = load(&st->spins_detected);
    x[STATS_ple_window].n = load(&v->spin.window);
    x[STATS_directed_yield_attempted].n = load(&st->directed_yield_attempted);
    x[STATS_directed_yield_successful].n = load(&st->directed_yield_successful);
    x[STATS_directed_yield_failed_tries].n = load(&st->directed_yield_failed_tries);
    x[STATS_directed_yield_gave_up].n = load(&st->directed_yield_gave_up);
    static const enum stats_key skipped[YIELD_SKIP_COUNT] = {
        [YIELD_SKIP_RUNNING] = STATS_directed_yield_skipped_running,
        [YIELD_SKIP_BLOCKED] = STATS_directed_yield_skipped_blocked,
        [YIELD_SKIP_USER_MODE] = STATS_directed_yield_skipped_user_mode,
        [YIELD_SKIP_NOT_ELIGIBLE] = STATS_directed_yield_skipped_not_eligible,
        [YIELD_SKIP_PINNED] = STATS_directed_yield_skipped_pinned,
    };
    for (unsigned i = 0; i < YIELD_SKIP_COUNT; i++)
        x[skipped[i]].n = load(&st->directed_yield_skipped[i]);
    x[STATS_spin_slice_yields].n = load(&st->spin_slice_yields);
    x[STATS_migrations].n = load(&v->se.migrations);
}

void stats_collect_vm(const struct vm *vm, const struct stats_record *vcpus, unsigned n,
                      struct stats_record *r, struct stats_vm_sums *sums)
{
    memset(r, 0, sizeof(*r));
    memset(sums, 0, sizeof(*sums));
    r->scope = STATS_SCOPE_VM;
    r->v[STATS_vm].s = vm->cfg.name;
    r->v[STATS_vcpus].n = vm->nvcpus;
    r->v[STATS_hlt_intercept].s = hlt_intercept_name(hlt_intercept_mode());
    r->v[STATS_spin_detector].s = spin_detector_name(vm->vcpus[0]->spin.detector);
    r->v[STATS_exits].by = sums->exits;
    r->v[STATS_exit_ns].by = sums->exit_ns;
    r->v[STATS_halt_poll_success_hist].hist = sums->hist[0];
    r->v[STATS_halt_poll_fail_hist].hist = sums->hist[1];
    r->v[STATS_halt_wait_hist].hist = sums->hist[2];
    for (unsigned i = 0; i < n; i++)
        stats_accumulate(r, &vcpus[i], &stats_exit_reasons);
}

void stats_collect_cpu(unsigned cpu, struct stats_record *r)
{
    struct sched_cpu_times t;
    sched_cpu_times(cpu, &t);
    memset(r, 0, sizeof(*r));
    r->scope = STATS_SCOPE_CPU;
    r->v[STATS_cpu].n = cpu;
    r->v[STATS_busy_us].n = us(t.busy);
    r->v[STATS_idle_us].n = us(t.idle);
    r->v[STATS_poll_us].n = us(t.poll);
    r->v[STATS_placed].n = t.placed;
}

void stats_collect_global(struct stats_record *r)
{
    memset(r, 0, sizeof(*r));
    r->scope = STATS_SCOPE_GLOBAL;
    r->v[STATS_cpus].n = cpu_count;
    vmm_counts(&r->v[STATS_vms_running].n, &r->v[STATS_vms_stopped].n);
    console_counts(&r->v[STATS_console_bytes].n, &r->v[STATS_console_full_waits].n);
}

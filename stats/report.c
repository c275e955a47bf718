#include "stats/report.h"

#include "arch/x86/percpu.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "sched/timer.h"
#include "stats/collect.h"
#include "stats/table.h"
#include "vmm/vmm.h"

unsigned stats_interval_ms;
bool stats_tables = true;

/*
 * One round at a time: the records are built in this scratch space (a VM's
 * vCPUs at once, for its table) and their lines never interleave with
 * another round's.
 */
static struct spinlock round_lock = SPINLOCK_INIT;
static uint64_t rounds;
static struct {
    struct stats_record vcpu[VM_MAX_VCPUS];
    uint64_t exit_ns[VM_MAX_VCPUS][EXIT_REASON_COUNT];
    struct stats_record vm;
    struct stats_vm_sums sums;
    struct stats_record cpu[MAX_CPUS];
    struct stats_record global;
    char json[4096];
} scratch;

struct round {
    uint64_t number, t;
    bool tables;
};

static void begin(struct round *r, bool tables)
{
    r->number = ++rounds;
    r->t = tsc_to_ns(rdtsc());
    r->tables = tables;
}

static void print_record(const struct round *r, struct stats_record *rec)
{
    rec->v[STATS_round].n = r->number;
    rec->v[STATS_t].n = r->t;
    kprintf("@stats %s\n",
            stats_json(rec, &stats_exit_reasons, scratch.json, sizeof(scratch.json)));
}

static void print_line(const char *text, void *ctx)
{
    (void)ctx;
    kprintf("%s\n", text);
}

/* The scheduler's counters per vCPU, under KVM's names. */
static const enum stats_key vcpu_rows[] = {
    STATS_cpu,
    STATS_run_us,
    STATS_wait_us,
    STATS_polling_us,
    STATS_blocked_us,
    STATS_halt_exits,
    STATS_halt_attempted_poll,
    STATS_halt_successful_poll,
    STATS_halt_wakeup,
    STATS_halt_poll_ns,
    STATS_halt_poll_success_ns,
    STATS_halt_poll_fail_ns,
    STATS_halt_wait_ns,
    STATS_pause_exits,
    STATS_spins_detected,
    STATS_ple_window,
    STATS_directed_yield_attempted,
    STATS_directed_yield_successful,
    STATS_spin_slice_yields,
    STATS_migrations,
};

static const enum stats_key cpu_rows[] = {STATS_busy_us, STATS_idle_us, STATS_poll_us,
                                          STATS_placed};

static void report_vm(struct vm *vm, void *ctx)
{
    const struct round *r = ctx;
    unsigned n = vm->nvcpus;
    for (unsigned i = 0; i < n; i++)
        stats_collect_vcpu(vm->vcpus[i], &scratch.vcpu[i], scratch.exit_ns[i]);
    stats_collect_vm(vm, scratch.vcpu, n, &scratch.vm, &scratch.sums);
    for (unsigned i = 0; i < n; i++)
        print_record(r, &scratch.vcpu[i]);
    print_record(r, &scratch.vm);
    if (!r->tables)
        return;
    char title[64];
    snprintf(title, sizeof(title), "VM %s, %u vCPUs, round %lu", vm->cfg.name, n,
             (unsigned long)r->number);
    kprintf("\n");
    stats_exit_table(title, scratch.sums.exits, scratch.sums.exit_ns, &stats_exit_reasons,
                     print_line, 0);
    kprintf("\n");
    stats_key_table(title, scratch.vcpu, n, STATS_vcpu, vcpu_rows,
                    sizeof(vcpu_rows) / sizeof(vcpu_rows[0]), print_line, 0);
    kprintf("\n");
}

static void report_host(const struct round *r)
{
    for (unsigned c = 0; c < cpu_count; c++) {
        stats_collect_cpu(c, &scratch.cpu[c]);
        print_record(r, &scratch.cpu[c]);
    }
    stats_collect_global(&scratch.global);
    print_record(r, &scratch.global);
    if (r->tables) {
        char title[48];
        snprintf(title, sizeof(title), "host CPUs, round %lu", (unsigned long)r->number);
        stats_key_table(title, scratch.cpu, cpu_count, STATS_cpu, cpu_rows,
                        sizeof(cpu_rows) / sizeof(cpu_rows[0]), print_line, 0);
        kprintf("\n");
    }
}

void stats_report_vm_stop(struct vm *vm)
{
    struct round r;
    uint64_t flags = spin_lock_irqsave(&round_lock);
    begin(&r, stats_tables);
    report_vm(vm, &r);
    spin_unlock_irqrestore(&round_lock, flags);
}

void stats_report_round(bool tables)
{
    struct round r;
    uint64_t flags = spin_lock_irqsave(&round_lock);
    begin(&r, tables);
    vmm_for_each_vm(report_vm, &r);
    report_host(&r);
    spin_unlock_irqrestore(&round_lock, flags);
}

void stats_report_shutdown(void)
{
    struct round r;
    uint64_t flags = spin_lock_irqsave(&round_lock);
    begin(&r, stats_tables);
    report_host(&r);
    spin_unlock_irqrestore(&round_lock, flags);
}

static struct timer periodic;
static bool round_due, tables_due;

static void periodic_fired(struct timer *t, uint64_t now)
{
    __atomic_store_n(&round_due, true, __ATOMIC_RELEASE);
    if (!vmm_all_stopped())
        timer_arm(t, this_cpu()->cpu, now + (uint64_t)stats_interval_ms * tsc_khz);
}

void stats_periodic_start(void)
{
    if (!stats_interval_ms)
        return;
    timer_init(&periodic, periodic_fired);
    timer_arm(&periodic, this_cpu()->cpu, rdtsc() + (uint64_t)stats_interval_ms * tsc_khz);
}

void stats_request_round(void)
{
    __atomic_store_n(&tables_due, true, __ATOMIC_RELAXED);
    __atomic_store_n(&round_due, true, __ATOMIC_RELEASE);
}

void stats_poll(void)
{
    if (__atomic_load_n(&round_due, __ATOMIC_ACQUIRE) &&
        __atomic_exchange_n(&round_due, false, __ATOMIC_ACQ_REL))
        stats_report_round(__atomic_exchange_n(&tables_due, false, __ATOMIC_RELAXED) ||
                           stats_tables);
}

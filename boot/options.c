/* SPDX-License-Identifier: GPL-2.0-only */
#include "boot/options.h"

#include "arch/x86/percpu.h"
#include "lib/options.h"
#include "lib/string.h"
#include "drivers/console.h"
#include "sched/balance.h"
#include "sched/sched.h"
#include "sched/watchdog.h"
#include "vmm/vcpu/hlt_intercept.h"
#include "stats/report.h"
#include "vmm/console/console_keys.h"
#include "vmm/console/profile.h"
#include "vmm/console/trace.h"
#include "vmm/vm_policy.h"

struct hv_options hv_options = {
    .maxcpus = MAX_CPUS,
    .fault_test = 0,
};

static const struct option own_options[] = {
    {"maxcpus", OPT_UINT, &hv_options.maxcpus, 1, MAX_CPUS, 0,
     "bring at most N CPUs online (at most 64)"},
    {"sched_slice_us", OPT_UINT, &sched_params.slice_us, 100, 1000000, 0,
     "a vCPU's time slice in microseconds"},
    {"sched_wakeup_granularity_us", OPT_UINT, &sched_params.wakeup_granularity_us, 0, 1000000, 0,
     "how long a running vCPU keeps the CPU before a woken one preempts it"},
    {"idle_exit_latency_us", OPT_UINT, &sched_params.idle_exit_latency_us, 0, 100000, 0,
     "a host C-state model: a CPU woken from idle waits N us before it runs anything"},
    {"seed", OPT_NUMBER, &sched_params.seed, 0, UINT64_MAX, 0,
     "stagger each vCPU's first entry by a delay drawn from this seed; 0: no stagger"},
    {"seed_stagger_us", OPT_UINT, &sched_params.seed_stagger_us, 0, 1000000, 0,
     "the longest such delay in us"},
    {"sched_balance", OPT_BOOL, &balance_params.enabled, 0, 0, 0,
     "move vCPUs between CPUs to even out the load: on or off"},
    {"sched_balance_ms", OPT_UINT, &balance_params.ms, 0, 60000, 0,
     "the periodic balance's interval in ms; 0: four time slices"},
    {"idle_hlt", OPT_ENUM, &idle_hlt_option, 0, 0, idle_hlt_option_names,
     "AMD Idle HLT intercept where the CPU has it: auto or off (plain HLT intercept)"},
    {"trace", OPT_FLAGS, &trace_mask, 0, 0, trace_names,
     "comma-separated traces to print: halt_poll, ple, sched"},
    {"trace_records", OPT_UINT, &trace_records, TRACE_RECORDS_MIN, TRACE_RECORDS_MAX, 0,
     "each VM's trace ring, in records (32 bytes each)"},
    {"profile_us", OPT_UINT, &profile_us, 0, PROFILE_US_MAX, 0,
     "sample each running vCPU's guest RIP every N us of host time, printed when its VM "
     "stops (docs/profile.md); 0: no profile"},
    {"trace_window", OPT_ENUM, &trace_window_mode, 0, 0, trace_window_names,
     "record traces from the VM's start (all) or inside the guest's marker window (marker)"},
    {"stats_interval_ms", OPT_UINT, &stats_interval_ms, 0, 3600000, 0,
     "print a statistics round (@stats, tables) every N ms; 0: only at VM stop"},
    {"stats_tables", OPT_BOOL, &stats_tables, 0, 0, 0,
     "print the human statistics tables with the @stats records: on or off"},
    {"console_keys", OPT_BOOL, &console_keys, 0, 0, 0,
     "read keys from COM1: s, v, t, q, h and Ctrl-A <n> (docs/console.md)"},
    {"watchdog_ms", OPT_UINT, &watchdog_params.ms, 0, 600000, 0,
     "a CPU without a heartbeat this long is locked up; 0 turns the watchdog off"},
    {"fault_test", OPT_UINT, &hv_options.fault_test, 0, 6, 0,
     "after boot, fault on purpose: 1 write to kernel text, 2 invalid opcode, 3 panic, "
     "4 the last CPU spins with interrupts off, 5 recurse without bound, "
     "6 recurse without bound in an NMI handler"},
};

static void report(struct token word, const char *reason, void *ctx)
{
    (void)ctx;
    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "kind", "bad_option");
    json_strn(&j, "option", word.s, word.len);
    json_str(&j, "reason", reason);
    console_event("warning", &j);
    kprintf("pollux: ignoring option '%.*s': %s\n", (int)word.len, word.s, reason);
}

#define NOWN     (sizeof(own_options) / sizeof(own_options[0]))
#define NOPTIONS (NOWN + VM_POLICY_OPTIONS)

/* The hypervisor's own options, then the scheduling policy's: every VM's defaults. */
static struct option option_table[NOPTIONS];

/* Each option's default is its variable's value before the command line: written nowhere else. */
static char option_defaults[NOPTIONS][32];

unsigned options_init(const char *cmdline)
{
    memcpy(option_table, own_options, sizeof(own_options));
    vm_policy_options(&vm_policy_hv, option_table + NOWN);
    for (unsigned i = 0; i < NOPTIONS; i++)
        option_format_value(&option_table[i], option_defaults[i], sizeof(option_defaults[i]));
    unsigned bad = options_parse(cmdline, option_table, NOPTIONS, report, 0);
    if (bad) {
        kprintf("pollux: valid options are:\n");
        for (unsigned i = 0; i < NOPTIONS; i++)
            kprintf("  %-27s %s (default %s)\n", option_table[i].name, option_table[i].help,
                    option_defaults[i]);
    }
    return bad;
}

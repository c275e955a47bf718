/* SPDX-License-Identifier: GPL-2.0-only */
#include "boot/options.h"

#include "arch/x86/percpu.h"
#include "lib/options.h"
#include "drivers/console.h"
#include "sched/balance.h"
#include "sched/halt_poll.h"
#include "sched/sched.h"
#include "sched/spin.h"
#include "sched/yield.h"
#include "sched/watchdog.h"
#include "vmm/vcpu/hlt_intercept.h"
#include "stats/report.h"
#include "vmm/console/console_keys.h"
#include "vmm/console/trace.h"

static const char *const halt_poll_modes[] = {
    [HALT_POLL_ADAPTIVE] = "adaptive",
    [HALT_POLL_FIXED] = "fixed",
    [HALT_POLL_PREDICT] = "predict",
    NULL,
};

struct hv_options hv_options = {
    .maxcpus = MAX_CPUS,
    .fault_test = 0,
};

static const struct option option_table[] = {
    {"maxcpus", OPT_UINT, &hv_options.maxcpus, 1, MAX_CPUS, 0,
     "bring at most N CPUs online (at most 64)"},
    {"sched_slice_us", OPT_UINT, &sched_params.slice_us, 100, 1000000, 0,
     "a vCPU's time slice in microseconds"},
    {"sched_wakeup_granularity_us", OPT_UINT, &sched_params.wakeup_granularity_us, 0, 1000000, 0,
     "how long a running vCPU keeps the CPU before a woken one preempts it"},
    {"sched_balance", OPT_BOOL, &balance_params.enabled, 0, 0, 0,
     "move vCPUs between CPUs to even out the load: on or off"},
    {"sched_balance_ms", OPT_UINT, &balance_params.ms, 0, 60000, 0,
     "the periodic balance's interval in ms; 0: four time slices"},
    {"halt_poll_ns", OPT_UINT, &halt_poll_params.max_ns, 0, 0xffffffffu, 0,
     "the longest halt poll in ns; 0 turns polling off"},
    {"halt_poll_ns_grow", OPT_UINT, &halt_poll_params.grow, 0, 0xffffffffu, 0,
     "factor a vCPU's poll window grows by; 0: it never grows"},
    {"halt_poll_ns_grow_start", OPT_UINT, &halt_poll_params.grow_start, 0, 0xffffffffu, 0,
     "the first non-zero poll window in ns"},
    {"halt_poll_ns_shrink", OPT_UINT, &halt_poll_params.shrink, 0, 0xffffffffu, 0,
     "divisor a poll window shrinks by; 0: back to 0 at once"},
    {"halt_poll_mode", OPT_ENUM, &halt_poll_params.mode, 0, 0, halt_poll_modes,
     "adaptive (KVM's rules), fixed (always the maximum) or predict"},
    {"ple", OPT_BOOL, &spin_params.enabled, 0, 0, 0,
     "spin detection from PAUSE exits (PLE, pause filter, software): on or off"},
    {"ple_gap", OPT_UINT, &spin_params.ple.gap, 1, 0xffffffffu, 0,
     "VMX: most TSC cycles between two PAUSEs of one loop"},
    {"ple_window", OPT_UINT, &spin_params.ple.base, 1, 0xffffffffu, 0,
     "VMX: TSC cycles of PAUSE loop before an exit, initially"},
    {"ple_window_grow", OPT_UINT, &spin_params.ple.grow, 0, 0xffffffffu, 0,
     "VMX: window growth per exit, a factor below ple_window, else added; 0 resets"},
    {"ple_window_shrink", OPT_UINT, &spin_params.ple.shrink, 0, 0xffffffffu, 0,
     "VMX: window shrink when scheduled in, as grow; 0 resets to ple_window"},
    {"ple_window_max", OPT_UINT, &spin_params.ple.max, 1, 0xffffffffu, 0,
     "VMX: the largest window"},
    {"pause_filter_count", OPT_UINT, &spin_params.pause_filter.base, 1, 0xffff, 0,
     "SVM: PAUSEs before an exit, initially"},
    {"pause_filter_thresh", OPT_UINT, &spin_params.pause_filter.gap, 0, 0xffff, 0,
     "SVM: most cycles between two counted PAUSEs, where the CPU has it"},
    {"pause_filter_count_grow", OPT_UINT, &spin_params.pause_filter.grow, 0, 0xffffffffu, 0,
     "SVM: count growth per exit, as ple_window_grow"},
    {"pause_filter_count_shrink", OPT_UINT, &spin_params.pause_filter.shrink, 0, 0xffffffffu, 0,
     "SVM: count shrink when scheduled in, as ple_window_shrink"},
    {"pause_filter_count_max", OPT_UINT, &spin_params.pause_filter.max, 1, 0xffff, 0,
     "SVM: the largest count"},
    {"spin_sw_threshold", OPT_UINT, &spin_params.sw_threshold, 1, 1000000, 0,
     "software detector: PAUSE exits that make a spin"},
    {"spin_sw_window_us", OPT_UINT, &spin_params.sw_window_us, 1, 1000000, 0,
     "software detector: ... within this many us"},
    {"idle_hlt", OPT_ENUM, &idle_hlt_option, 0, 0, idle_hlt_option_names,
     "AMD Idle HLT intercept where the CPU has it: auto or off (plain HLT intercept)"},
    {"yield_pivot", OPT_ENUM, &yield_pivot, 0, 0, yield_pivot_names,
     "where a directed yield's scan starts: vcpu_id, last_boosted or none"},
    {"trace", OPT_FLAGS, &trace_mask, 0, 0, trace_names,
     "comma-separated traces to print: halt_poll, ple, sched"},
    {"trace_records", OPT_UINT, &trace_records, TRACE_RECORDS_MIN, TRACE_RECORDS_MAX, 0,
     "each VM's trace ring, in records (32 bytes each)"},
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
    {"fault_test", OPT_UINT, &hv_options.fault_test, 0, 4, 0,
     "after boot, fault on purpose: 1 write to kernel text, 2 invalid opcode, 3 panic, "
     "4 the last CPU spins with interrupts off"},
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

#define NOPTIONS (sizeof(option_table) / sizeof(option_table[0]))

/* Each option's default is its variable's value before the command line: written nowhere else. */
static char option_defaults[NOPTIONS][32];

unsigned options_init(const char *cmdline)
{
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

/* SPDX-License-Identifier: GPL-2.0-only */
/* The statistics model: descriptors to JSON, the human tables, aggregation, histograms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <string.h>

#include "stats/table.h"
#include "tools/stats_tables.h"

uint64_t tsc_khz = 1000000; /* a cycle is a ns */
/* npf_exits' slot names: the devices' (vmm/dev/builtin.c links the devices themselves). */
static const struct device lapic_named = {.name = "lapic"}, net_named = {.name = "virtio-net"};
const struct device *const builtin_devices[BUILTIN_DEVICE_COUNT] = {
    [BUILTIN_LAPIC] = &lapic_named,
    [BUILTIN_VIRTIO_NET] = &net_named,
};

void kprintf(const char *fmt, ...)
{
    (void)fmt;
}

bool ktryprintf(const char *fmt, ...)
{
    (void)fmt;
    return true;
}

static const char *const reason_names[] = {"none", "cpuid", "hlt", "io"};

static const char *reason_name(unsigned r)
{
    return reason_names[r];
}

static const struct stats_reasons reasons = {4, reason_name};

/* The key's value in text, "" if the text has no such key (at the level of any object). */
static const char *value_of(const char *text, const char *key, char *out, size_t cap)
{
    char pat[64];
    out[0] = 0;
    for (const char *p = text; (p = strstr(p, "\"")) != 0; p++) {
        snprintf(pat, sizeof(pat), "\"%s\":", key);
        if ((p == text || p[-1] == '{' || p[-1] == ',') && !strncmp(p, pat, strlen(pat))) {
            const char *v = p + strlen(pat);
            int depth = 0;
            size_t n = 0;
            while (v[n] && (depth || (v[n] != ',' && v[n] != '}'))) {
                depth += v[n] == '{' ? 1 : v[n] == '}' ? -1 : 0;
                n++;
            }
            snprintf(out, cap, "%.*s", (int)n, v);
            return p;
        }
    }
    return 0;
}

/*
 * A vCPU whose every reported field holds its own value, times m, set here
 * by name and not through the tables: a row bound to the wrong field reads
 * another field's value.
 */
static struct vm vm;
static struct vcpu vcpus[2];

static void fill_vcpu(struct vcpu *v, unsigned id, uint64_t m)
{
    memset(v, 0, sizeof(*v));
    struct vcpu_stats *st = &v->stats;
    v->vm = &vm;
    v->hw.id = id;
    v->se.cpu = 3 + id;
    v->spin.detector = SPIN_DETECT_PAUSE_FILTER;
    v->se.cycles[SCHED_RUNNING] = 5000000 * m; /* 5000 us */
    v->se.cycles[SCHED_RUNNABLE] = 6000000 * m;
    v->se.cycles[SCHED_POLLING] = 7000000 * m;
    v->se.cycles[SCHED_BLOCKED] = 8000000 * m;
    st->exits[EXIT_CPUID] = 13 * m;
    st->exits[EXIT_HLT] = 7 * m;
    st->exits[EXIT_IDLE_HLT] = 11 * m;
    st->exit_cycles[EXIT_HLT] = 17000 * m;
    st->exit_max_cycles[EXIT_HLT] = 9000 * m;
    st->exit_max_cycles[EXIT_CPUID] = 300 * (3 - m); /* vCPU 0's is the VM's longest */
    st->npf_exits[BUILTIN_LAPIC] = 163 * m;
    st->npf_exits[BUILTIN_VIRTIO_NET] = 167 * m;
    st->npf_exits[NPF_UNBACKED] = 173 * m;
    st->npf_cycles[BUILTIN_LAPIC] = 4000 * m;
    st->npf_max_cycles[BUILTIN_LAPIC] = 1000 * m;
    st->halts = 19 * m;
    st->hlt_in_shadow = 23 * m;
    st->halt_attempted_poll = 29 * m;
    st->halt_successful_poll = 31 * m;
    st->halt_poll_invalid = 37 * m;
    st->halt_wakeup = 41 * m;
    st->halt_poll_success_ns = 43 * m;
    st->halt_poll_fail_ns = 47 * m;
    st->halt_wait_ns = 53 * m;
    st->halt_poll_success_hist[3] = 59 * m;
    st->halt_poll_fail_hist[4] = 61 * m;
    st->halt_wait_hist[5] = 67 * m;
    st->halt_hist[6] = 69 * m;
    v->halt_poll.window_ns = 71 * m;
    v->poll_control = 73 * m;
    st->halt_attempted_poll_optout = 79 * m;
    st->pause_exits = 83 * m;
    st->pause_exits_backstop = 89 * m;
    st->spins_detected = 97 * m;
    v->spin.window = 101 * m;
    st->spin_yield_attempted = 103 * m;
    st->spin_yield_successful = 107 * m;
    st->spin_yield_failed_tries = 109 * m;
    st->spin_yield_gave_up = 113 * m;
    st->spin_yield_gone = 179 * m;
    st->spin_yield_skipped[YIELD_SKIP_RUNNING] = 127 * m;
    st->spin_yield_skipped[YIELD_SKIP_BLOCKED] = 131 * m;
    st->spin_yield_skipped[YIELD_SKIP_USER_MODE] = 137 * m;
    st->spin_yield_skipped[YIELD_SKIP_NOT_ELIGIBLE] = 139 * m;
    st->spin_yield_skipped[YIELD_SKIP_PINNED] = 149 * m;
    st->spin_slice_yields = 151 * m;
    st->directed_yield_attempted = 181 * m;
    st->directed_yield_successful = 191 * m;
    st->pv_kicks = 193 * m;
    st->pv_send_ipis = 197 * m;
    st->pv_tlb_flushes = 199 * m;
    v->se.migrations = 157 * m;
    v->lapic.timer_stats.delivered = 163 * m;
    v->lapic.timer_stats.coalesced = 167 * m;
    v->lapic.timer_stats.skipped = 173 * m;
    st->timer_interrupts = 211 * m;
    st->timer_late_ns = 223 * m;
    st->timer_late_max_ns = 227 * m;
    st->timer_late_hist[8] = 229 * m;
    st->timer_idle_exit_ns = 233 * m;
    v->timer_advance.ns = 239 * m;
    st->timer_advance_waits = 241 * m;
    st->timer_advance_wait_ns = 251 * m;
}

static void fill_vm(void)
{
    memset(&vm, 0, sizeof(vm));
    snprintf(vm.cfg.name, sizeof(vm.cfg.name), "vm1");
    fill_vcpu(&vcpus[0], 0, 1);
    fill_vcpu(&vcpus[1], 1, 2);
    vm.vcpus[0] = &vcpus[0];
    vm.vcpus[1] = &vcpus[1];
    vm.nvcpus = 2;
}

/*
 * The value a key must have: fmt with a, b, c, times the sum's factor unless
 * not summed; a STATS_F_MAX row's (max) times the largest vCPU's factor.
 */
struct want {
    const char *key;
    const char *fmt;
    bool summed;
    uint64_t a, b, c;
    bool max;
};

// clang-format off
#define NUM(key, v)   {#key, "%lu", true, v, 0, 0, false}
#define GAUGE(key, v) {#key, "%lu", false, v, 0, 0, false}
// clang-format on

/* In the order of the old STATS_KEYS (docs/stats.md): the console's order. */
static const struct want vcpu_want[] = {
    {"scope", "\"vcpu\"", false, 0, 0, 0, false},
    GAUGE(round, 0),
    GAUGE(t, 0),
    {"vm", "\"vm1\"", false, 0, 0, 0, false},
    GAUGE(vcpu, 0),
    GAUGE(cpu, 3),
    GAUGE(vcpus, 2),
    {"hlt_intercept", "\"hlt\"", false, 0, 0, 0, false},
    {"spin_detector", "\"pause_filter\"", false, 0, 0, 0, false},
    NUM(run_us, 5000),
    NUM(wait_us, 6000),
    NUM(polling_us, 7000),
    NUM(blocked_us, 8000),
    {"exits", "{\"cpuid\":%lu,\"hlt\":%lu,\"idle_hlt\":%lu}", true, 13, 7, 11, false},
    {"exit_ns", "{\"hlt\":%lu}", true, 17000, 0, 0, false},
    /* cpuid's: vCPU 0's, the larger (fill_vcpu) */
    {"exit_max_ns", "{\"cpuid\":600,\"hlt\":%lu}", false, 9000, 0, 0, true},
    {"npf_exits", "{\"lapic\":%lu,\"virtio-net\":%lu,\"unbacked\":%lu}", true, 163, 167, 173,
     false},
    {"npf_ns", "{\"lapic\":%lu}", true, 4000, 0, 0, false},
    {"npf_max_ns", "{\"lapic\":%lu}", false, 1000, 0, 0, true},
    NUM(halts, 19),
    NUM(halt_exits, 18),
    NUM(hlt_exits, 7),
    NUM(idle_hlt_exits, 11),
    NUM(hlt_in_shadow, 23),
    NUM(halt_attempted_poll, 29),
    NUM(halt_successful_poll, 31),
    NUM(halt_poll_invalid, 37),
    NUM(halt_wakeup, 41),
    NUM(halt_poll_success_ns, 43),
    NUM(halt_poll_fail_ns, 47),
    NUM(halt_wait_ns, 53),
    {"halt_poll_success_hist", "{\"3\":%lu}", true, 59, 0, 0, false},
    {"halt_poll_fail_hist", "{\"4\":%lu}", true, 61, 0, 0, false},
    {"halt_wait_hist", "{\"5\":%lu}", true, 67, 0, 0, false},
    GAUGE(halt_poll_ns, 71),
    GAUGE(poll_control, 73),
    NUM(halt_attempted_poll_optout, 79),
    NUM(pause_exits, 83),
    NUM(pause_exits_backstop, 89),
    NUM(spins_detected, 97),
    GAUGE(ple_window, 101),
    NUM(spin_yield_attempted, 103),
    NUM(spin_yield_successful, 107),
    NUM(spin_yield_failed_tries, 109),
    NUM(spin_yield_gone, 179),
    NUM(spin_yield_gave_up, 113),
    NUM(spin_yield_skipped_running, 127),
    NUM(spin_yield_skipped_blocked, 131),
    NUM(spin_yield_skipped_user_mode, 137),
    NUM(spin_yield_skipped_not_eligible, 139),
    NUM(spin_yield_skipped_pinned, 149),
    NUM(spin_slice_yields, 151),
    NUM(directed_yield_attempted, 181),
    NUM(directed_yield_successful, 191),
    NUM(pv_kicks, 193),
    NUM(pv_send_ipis, 197),
    NUM(pv_tlb_flushes, 199),
    NUM(migrations, 157),
    NUM(timer_interrupts, 211),
    NUM(timer_late_ns, 223),
    GAUGE(timer_late_max_ns, 227),
    {"timer_late_hist", "{\"8\":%lu}", true, 229, 0, 0, false},
    NUM(timer_idle_exit_ns, 233),
    GAUGE(lapic_timer_advance_ns, 239),
    NUM(timer_advance_waits, 241),
    NUM(timer_advance_wait_ns, 251),
};

static const struct want *want_of(const char *key)
{
    for (unsigned i = 0; i < sizeof(vcpu_want) / sizeof(vcpu_want[0]); i++)
        if (!strcmp(vcpu_want[i].key, key))
            return &vcpu_want[i];
    return 0;
}

/*
 * Every row of the vCPU table, in the record of scope s: its key has the
 * value of the field it names (times factor where summed, top where the
 * largest), in the console's order; a key of another scope is absent.
 */
static void check_record(const char *text, enum stats_scope s, uint64_t factor, uint64_t top)
{
    char got[256], want[256];
    const char *last = text;
    for (unsigned i = 0; i < sizeof(vcpu_want) / sizeof(vcpu_want[0]); i++) {
        const struct want *w = &vcpu_want[i];
        unsigned slot;
        const struct stats_desc *d = stats_find(&vcpu_stats_table, w->key, &slot);
        bool in = d ? stats_in_scope(d, s) : true; /* the head's keys: every scope */
        const char *at = value_of(text, w->key, got, sizeof(got));
        if (!in) {
            assert_null(at);
            continue;
        }
        uint64_t f = w->summed ? factor : w->max ? top : 1;
        snprintf(want, sizeof(want), w->fmt, (unsigned long)(w->a * f), (unsigned long)(w->b * f),
                 (unsigned long)(w->c * f));
        if (!strcmp(w->key, "scope") && s == STATS_SCOPE_VM)
            snprintf(want, sizeof(want), "\"vm\"");
        if (strcmp(got, want))
            fail_msg("%s: %s, want %s", w->key, got, want);
        assert_true(at > last || i == 0); /* in order */
        last = at;
    }
}

static void test_every_vcpu_row_reads_its_field(void **state)
{
    (void)state;
    static char buf[8192];
    static struct stats_record recs[2], sum;
    fill_vm();
    /* Every row has an expectation: a new row needs its field set above. */
    for (unsigned k = 0; k < vcpu_stats_table.count; k++)
        if (!want_of(vcpu_stats_table.rows[k].name))
            fail_msg("row %s: no expectation in vcpu_want", vcpu_stats_table.rows[k].name);
    stats_read(&recs[0], STATS_SCOPE_VCPU, &vcpu_stats_table, &vcpus[0]);
    stats_read(&recs[1], STATS_SCOPE_VCPU, &vcpu_stats_table, &vcpus[1]);
    const char *text = stats_json(&recs[0], buf, sizeof(buf));
    check_record(text, STATS_SCOPE_VCPU, 1, 1);
    text = stats_json(&recs[1], buf, sizeof(buf));
    char got[64];
    value_of(text, "run_us", got, sizeof(got));
    assert_string_equal(got, "10000");
    value_of(text, "vcpu", got, sizeof(got));
    assert_string_equal(got, "1");
    /* The VM: vCPU 0's values and 1's (twice as many) summed, its own from vCPU 0. */
    stats_sum(&sum, STATS_SCOPE_VM, recs, 2);
    text = stats_json(&sum, buf, sizeof(buf));
    check_record(text, STATS_SCOPE_VM, 3, 2);
}

static void test_cpu_and_global_rows(void **state)
{
    (void)state;
    char buf[1024];
    static struct stats_record r;
    struct sched_cpu_times t = {.busy = 3000000,
                                .idle = 4000000,
                                .poll = 1000000,
                                .idle_exit = 500000,
                                .deferred = 250000,
                                .placed = 5,
                                .cpu = 2};
    stats_read(&r, STATS_SCOPE_CPU, &sched_cpu_stats_table, &t);
    r.head.round = 9;
    r.head.t = 10;
    assert_string_equal(
        stats_json(&r, buf, sizeof(buf)),
        "{\"scope\":\"cpu\",\"round\":9,\"t\":10,\"cpu\":2,\"busy_us\":3000,"
        "\"idle_us\":4000,\"poll_us\":1000,\"idle_exit_us\":500,\"deferred_us\":250,"
        "\"placed\":5}");
    struct stats_global g = {
        .cpus = 2, .vms_running = 3, .vms_stopped = 4, .console_bytes = 5, .console_full_waits = 6};
    stats_read(&r, STATS_SCOPE_GLOBAL, &stats_global_table, &g);
    assert_string_equal(stats_json(&r, buf, sizeof(buf)),
                        "{\"scope\":\"global\",\"round\":0,\"t\":0,\"cpus\":2,\"vms_running\":3,"
                        "\"vms_stopped\":4,\"console_bytes\":5,\"console_full_waits\":6}");
}

/* @vm_stop as vmm/vmm.c prints it, key for key (docs/console.md). */
static const char *vm_stop_json(char *buf, size_t cap)
{
    struct json j;
    json_begin(&j, buf, cap);
    stats_event_json(&j, &vm_stop_table, &vm);
    json_object(&j, "vcpus");
    for (unsigned i = 0; i < vm.nvcpus; i++) {
        char id[12];
        snprintf(id, sizeof(id), "%u", i);
        json_object(&j, id);
        stats_event_json(&j, &vm_stop_vcpu_table, vm.vcpus[i]);
        json_close(&j);
    }
    return json_end(&j);
}

static void test_vm_stop_keys(void **state)
{
    (void)state;
    static char buf[8192];
    fill_vm();
    vm.exit_code = -1;
    vm.stop_reason = "bad-access";
    snprintf(vm.stop_detail, sizeof(vm.stop_detail), "read from 0xf000");
    vm.stop_rip = 0x1234;
    vm.stop_has_address = true;
    vm.stop_address = 0xf000;
    vm.start_tsc = 0; /* run_us: since the host's TSC was 0 */
    vm.unhandled_io_reads = 1;
    vm.unhandled_io_writes = 2;
    vm.unbacked.reads = 3;
    vm.unbacked.writes = 4;
    vm.mark_rounds_dropped = 5;
    const char *text = vm_stop_json(buf, sizeof(buf));
    const char *run = strstr(text, "\"run_us\":");
    assert_non_null(run);
    const char *after = strchr(run, ',');
    assert_string_equal(
        after,
        ",\"exits\":{\"cpuid\":39,\"hlt\":21,\"idle_hlt\":33},"
        "\"exit_max_ns\":{\"cpuid\":600,\"hlt\":18000},"
        "\"npf_exits\":{\"lapic\":489,\"virtio-net\":501,\"unbacked\":519},"
        "\"unhandled_io_reads\":1,"
        "\"unhandled_io_writes\":2,\"unbacked_reads\":3,\"unbacked_writes\":4,\"mark_rounds_"
        "dropped\":5,"
        "\"vcpus\":{"
        "\"0\":{\"cpu\":3,\"run_us\":5000,\"wait_us\":6000,\"polling_us\":7000,\"blocked_us\":8000,"
        "\"halts\":19,\"timer\":{\"delivered\":163,\"coalesced\":167,\"skipped\":173,"
        "\"late_ns\":223,\"late_max_ns\":227,\"late_ns_log2\":{\"8\":229},\"idle_exit_ns\":233,"
        "\"advance_ns\":239,\"advance_wait_ns\":251},"
        "\"exits\":{\"cpuid\":13,\"hlt\":7,\"idle_hlt\":11},"
        "\"exit_max_ns\":{\"cpuid\":600,\"hlt\":9000},"
        "\"npf_exits\":{\"lapic\":163,\"virtio-net\":167,\"unbacked\":173},"
        "\"halt_ns_log2\":{\"6\":69}},"
        "\"1\":{\"cpu\":4,\"run_us\":10000,\"wait_us\":12000,\"polling_us\":14000,"
        "\"blocked_us\":16000,\"halts\":38,\"timer\":{\"delivered\":326,\"coalesced\":334,"
        "\"skipped\":346,\"late_ns\":446,\"late_max_ns\":454,\"late_ns_log2\":{\"8\":458},"
        "\"idle_exit_ns\":466,\"advance_ns\":478,\"advance_wait_ns\":502},\"exits\":{\"cpuid\":26,"
        "\"hlt\":14,\"idle_hlt\":22},\"exit_max_ns\":{\"cpuid\":300,\"hlt\":18000},"
        "\"npf_exits\":{\"lapic\":326,\"virtio-net\":334,\"unbacked\":346},"
        "\"halt_ns_log2\":{\"6\":138}}}}");
    assert_int_equal(strncmp(text,
                             "{\"vm\":\"vm1\",\"code\":-1,\"reason\":\"bad-access\",\"detail\":"
                             "\"read from 0xf000\",\"rip\":\"0x1234\",\"address\":\"0xf000\","
                             "\"run_us\":",
                             (size_t)(run + 9 - text)),
                     0);
    /* A voluntary stop: no detail, rip or address. */
    vm.exit_code = 0;
    vm.stop_reason = "debug-exit";
    vm.stop_detail[0] = 0;
    vm.stop_has_address = false;
    text = vm_stop_json(buf, sizeof(buf));
    assert_int_equal(
        strncmp(text, "{\"vm\":\"vm1\",\"code\":0,\"reason\":\"debug-exit\",\"run_us\":", 52), 0);
}

/* The devices' rows as the devices record prints them (vm_devices_stats), one device's. */
static const char *device_json(const struct stats_table *t, const void *state, char *buf,
                               size_t cap)
{
    struct json j;
    json_begin(&j, buf, cap);
    stats_event_json(&j, t, state);
    return json_end(&j);
}

/*
 * Each device's rows read the fields they name (set here by name, each its
 * own value), its transport's inlined in its object; the PIC and the PIT
 * have no keys until they have counted something.
 */
static void test_device_rows_read_their_fields(void **state)
{
    (void)state;
    static char buf[1024];
    static struct vpic pic;
    static struct vpit pit;
    static struct virtio_blk blk;
    static struct virtio_net net;
    assert_string_equal(device_json(&vpic_stats_table, &pic, buf, sizeof(buf)), "{}");
    assert_string_equal(device_json(&vpit_stats_table, &pit, buf, sizeof(buf)), "{}");
    pic.stats.spurious = 3;
    assert_string_equal(device_json(&vpic_stats_table, &pic, buf, sizeof(buf)),
                        "{\"raised\":0,\"acked\":0,\"spurious\":3}");
    pic.stats.raised = 1;
    pic.stats.acked = 2;
    assert_string_equal(device_json(&vpic_stats_table, &pic, buf, sizeof(buf)),
                        "{\"raised\":1,\"acked\":2,\"spurious\":3}");
    pit.stats.coalesced = 5;
    assert_string_equal(device_json(&vpit_stats_table, &pit, buf, sizeof(buf)), "{}");
    pit.stats.irqs = 4;
    assert_string_equal(device_json(&vpit_stats_table, &pit, buf, sizeof(buf)),
                        "{\"irqs\":4,\"coalesced\":5}");
    blk.stats = (struct virtio_blk_stats){.reads = 11,
                                          .writes = 12,
                                          .flushes = 13,
                                          .get_ids = 14,
                                          .read_bytes = 15,
                                          .write_bytes = 16,
                                          .errors = 17};
    blk.transport.notifies = 21;
    blk.transport.notifies_ignored = 22;
    blk.transport.interrupts = 23;
    blk.transport.faults = 24;
    blk.transport.budget_stops = 25;
    blk.transport.deferred_passes = 26;
    assert_string_equal(device_json(&virtio_blk_stats_table, &blk, buf, sizeof(buf)),
                        "{\"reads\":11,\"writes\":12,\"flushes\":13,\"get_ids\":14,"
                        "\"read_bytes\":15,\"write_bytes\":16,\"errors\":17,\"notifies\":21,"
                        "\"notifies_ignored\":22,\"interrupts\":23,\"faults\":24,"
                        "\"budget_stops\":25,\"deferred_passes\":26}");
    net.port.stats = (struct net_port_stats){.tx_packets = 31,
                                             .tx_bytes = 32,
                                             .tx_drops = 33,
                                             .rx_packets = 34,
                                             .rx_bytes = 35,
                                             .rx_drops = 36,
                                             .rx_drops_full = 37,
                                             .rx_drops_reset = 38,
                                             .rx_drops_device = 39,
                                             .rx_held = 40,
                                             .tx_lock_waits = 41,
                                             .tx_lock_wait_cycles = 42};
    net.transport = blk.transport;
    net.transport.deferred_passes = 43;
    assert_string_equal(device_json(&virtio_net_stats_table, &net, buf, sizeof(buf)),
                        "{\"tx_packets\":31,\"tx_bytes\":32,\"tx_drops\":33,\"rx_packets\":34,"
                        "\"rx_bytes\":35,\"rx_drops\":36,\"rx_drops_full\":37,"
                        "\"rx_drops_reset\":38,\"rx_drops_device\":39,\"rx_held\":40,"
                        "\"tx_lock_waits\":41,\"tx_lock_wait_cycles\":42,\"notifies\":21,"
                        "\"notifies_ignored\":22,\"interrupts\":23,\"faults\":24,"
                        "\"budget_stops\":25,\"deferred_passes\":43}");
}

/* A record of the test's own table: one row of each kind. */
struct test_base {
    uint64_t count, gauge, hist[STATS_HIST_BUCKETS], by[4], top[4];
    const char *name;
};
static const struct stats_desc test_rows[] = {
    STATS_ROW(name, STRING, NONE, S_ALL, struct test_base, name, "a name"),
    STATS_ROW(count, COUNTER, NONE, S_ALL, struct test_base, count, "a counter"),
    STATS_ROW(gauge, GAUGE, NONE, S_VCPU, struct test_base, gauge, "a gauge"),
    STATS_ROW(hist, HIST, NS, S_ALL, struct test_base, hist, "a histogram"),
    STATS_ROW(by, BY_REASON, NONE, S_ALL, struct test_base, by, "by reason"),
    STATS_ROW(top, BY_REASON, NS, S_ALL, struct test_base, top, "the largest by reason",
              .flags = STATS_F_MAX),
};
static const struct stats_table test_table = STATS_TABLE(test_rows, &reasons);

static void test_json_escapes_names(void **state)
{
    (void)state;
    char buf[1024];
    static struct stats_record r;
    struct test_base b = {.name = "a\"b\\c\n"};
    stats_read(&r, STATS_SCOPE_VM, &test_table, &b);
    const char *text = stats_json(&r, buf, sizeof(buf));
    assert_non_null(strstr(text, "\"name\":\"a\\\"b\\\\c\\u000a\""));
    assert_null(strchr(text, '\n'));
}

static void test_json_counters_are_plain_integers(void **state)
{
    (void)state;
    char buf[1024];
    static struct stats_record r;
    struct test_base b = {.count = UINT64_MAX};
    stats_read(&r, STATS_SCOPE_VCPU, &test_table, &b);
    const char *text = stats_json(&r, buf, sizeof(buf));
    assert_non_null(strstr(text, "\"count\":18446744073709551615,"));
    assert_non_null(strstr(text, "\"hist\":{},\"by\":{}"));
}

static void test_every_key_is_described(void **state)
{
    (void)state;
    for (unsigned t = 0; t < STATS_DOC_TABLES; t++) {
        const struct stats_table *tab = stats_doc_tables[t];
        assert_true(stats_table_slots(tab) <= STATS_SLOTS_MAX);
        for (unsigned k = 0; k < tab->count; k++) {
            const struct stats_desc *d = &tab->rows[k];
            assert_non_null(d->name);
            assert_true(d->scopes != 0);
            if (d->kind == STATS_INLINE) { /* not a key: its table's rows are */
                assert_null(d->doc);
                continue;
            }
            assert_true(stats_row_slots(tab, d) <= 64);
            /* An array read as it is must be as long as its slots. */
            if ((d->kind == STATS_HIST || d->kind == STATS_BY_REASON) && !d->number)
                assert_int_equal(d->size, stats_row_slots(tab, d) * sizeof(uint64_t));
            /* A name twice: the later row is described by the earlier, of the same kind. */
            unsigned earlier = 0;
            for (unsigned u = 0; u <= t; u++)
                for (unsigned j = 0; j < (u < t ? stats_doc_tables[u]->count : k); j++)
                    if (!strcmp(stats_doc_tables[u]->rows[j].name, d->name)) {
                        earlier++;
                        assert_int_equal(stats_doc_tables[u]->rows[j].kind, d->kind);
                        assert_int_equal(stats_doc_tables[u]->rows[j].unit, d->unit);
                    }
            if (earlier)
                assert_null(d->doc);
            else
                assert_true(d->doc && strlen(d->doc) > 3);
        }
    }
}

static void test_hist_buckets(void **state)
{
    (void)state;
    assert_int_equal(stats_hist_bucket(0), 0);
    assert_int_equal(stats_hist_bucket(1), 0);
    assert_int_equal(stats_hist_bucket(2), 1);
    assert_int_equal(stats_hist_bucket(3), 1);
    assert_int_equal(stats_hist_bucket(1023), 9);
    assert_int_equal(stats_hist_bucket(1024), 10);
    assert_int_equal(stats_hist_bucket(UINT64_MAX), STATS_HIST_BUCKETS - 1);
    uint64_t h[STATS_HIST_BUCKETS] = {0};
    stats_hist_add(h, 1500);
    stats_hist_add(h, 2047);
    stats_hist_add(h, 2048);
    assert_int_equal(h[10], 2);
    assert_int_equal(h[11], 1);
}

/* And a largest (STATS_F_MAX) row takes each slot's largest, whichever record has it. */
static void test_sum_adds_counters_not_gauges(void **state)
{
    (void)state;
    static struct stats_record recs[2], sum;
    char buf[1024];
    struct test_base a = {.count = 1, .gauge = 5, .name = "a"}, b = {.count = 2, .gauge = 7};
    a.hist[5] = 2;
    b.hist[5] = 3;
    b.hist[6] = 1;
    a.by[1] = 4;
    b.by[1] = 6;
    a.top[1] = 9;
    a.top[2] = 1;
    b.top[1] = 3;
    b.top[2] = 5;
    stats_read(&recs[0], STATS_SCOPE_VCPU, &test_table, &a);
    stats_read(&recs[1], STATS_SCOPE_VCPU, &test_table, &b);
    stats_sum(&sum, STATS_SCOPE_VM, recs, 2);
    assert_string_equal(stats_json(&sum, buf, sizeof(buf)),
                        "{\"scope\":\"vm\",\"round\":0,\"t\":0,\"name\":\"a\",\"count\":3,"
                        "\"hist\":{\"5\":5,\"6\":1},\"by\":{\"cpuid\":10},"
                        "\"top\":{\"cpuid\":9,\"hlt\":5}}");
    recs[0].scope = STATS_SCOPE_VCPU; /* the gauge, vCPU 0's, where its scope has it */
    sum.scope = STATS_SCOPE_VCPU;
    assert_non_null(strstr(stats_json(&sum, buf, sizeof(buf)), "\"gauge\":5"));
}

static uint64_t total_of(const uint64_t v[5])
{
    return v[0] + v[1] + v[2] + v[3] + v[4];
}

static void test_shares_sum_to_100(void **state)
{
    (void)state;
    static const uint64_t cases[][5] = {
        {1, 1, 1, 0, 0}, {2, 1, 0, 0, 0}, {1, 2, 3, 4, 5},       {999, 1, 0, 0, 0},
        {7, 7, 7, 7, 7}, {0, 0, 0, 0, 1}, {1, 1000000, 3, 0, 2},
    };
    for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        unsigned h[5], sum = 0;
        uint64_t total = 0;
        stats_shares(cases[c], 5, h);
        for (unsigned i = 0; i < 5; i++) {
            sum += h[i];
            total += cases[c][i];
            /* Each share is its exact value rounded down or up. */
            uint64_t low = cases[c][i] * 10000 / total_of(cases[c]);
            assert_true(h[i] == low || h[i] == low + 1);
            if (!cases[c][i])
                assert_int_equal(h[i], 0);
        }
        assert_int_equal(sum, 10000);
    }
    unsigned h[3];
    stats_shares((const uint64_t[]){0, 0, 0}, 3, h);
    assert_int_equal(h[0] + h[1] + h[2], 0);
    stats_shares((const uint64_t[]){1, 1, 1}, 3, h);
    assert_int_equal(h[0], 3334); /* the earliest takes the odd hundredth */
    assert_int_equal(h[1], 3333);
}

/* The lines a table printed. */
struct lines {
    char text[64][128];
    unsigned n;
};

static void keep(const char *text, void *ctx)
{
    struct lines *l = ctx;
    assert_true(l->n < 64);
    assert_true(strlen(text) <= STATS_TABLE_WIDTH);
    snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", text);
}

static void test_exit_table(void **state)
{
    (void)state;
    static struct lines l;
    l.n = 0;
    const uint64_t count[4] = {0, 1, 3, 2};
    const uint64_t ns[4] = {0, 1000, 2000, 7000}, max_ns[4] = {0, 1000, 1500, 6000};
    stats_exit_table("VM pingpong", count, ns, max_ns, &reasons, 0, keep, &l);
    assert_string_equal(l.text[0], "Analyze events for VM pingpong:");
    assert_string_equal(l.text[1], "");
    assert_string_equal(
        l.text[2],
        "             VM-EXIT    Samples  Samples%           Time     Time%      Mean time       "
        "Max time");
    /* By samples, most first; every column ends where its heading does. */
    assert_string_equal(
        l.text[3],
        "                 hlt          3    50.00%         2.00us    20.00%         0.66us       "
        "  1.50us");
    assert_string_equal(
        l.text[4],
        "                  io          2    33.33%         7.00us    70.00%         3.50us       "
        "  6.00us");
    assert_string_equal(
        l.text[5],
        "               cpuid          1    16.67%         1.00us    10.00%         1.00us       "
        "  1.00us");
    assert_string_equal(l.text[6], "");
    assert_string_equal(l.text[7], "Total Samples: 6, Total events handled time: 10.00us.");
    assert_int_equal(l.n, 8);
    unsigned samples = 0, time = 0;
    for (unsigned i = 3; i < 6; i++) {
        unsigned a, b, c, d;
        assert_int_equal(sscanf(l.text[i], "%*s %*u %u.%u%% %*s %u.%u%%", &a, &b, &c, &d), 4);
        samples += a * 100 + b;
        time += c * 100 + d;
    }
    assert_int_equal(samples, 10000);
    assert_int_equal(time, 10000);
}

static const char *device_name(unsigned s)
{
    static const char *const names[] = {"lapic", "ioapic", "virtio-net"};
    return names[s];
}

/* The npf row's devices under it, by samples, their shares of the whole table's totals. */
static void test_exit_table_breakdown(void **state)
{
    (void)state;
    static struct lines l;
    l.n = 0;
    const uint64_t count[4] = {0, 1, 3, 6};
    const uint64_t ns[4] = {0, 1000, 2000, 7000};
    static const struct stats_reasons devices = {3, device_name};
    const uint64_t dev_count[3] = {4, 0, 2};
    const uint64_t dev_ns[3] = {3000, 0, 4000}, dev_max[3] = {2000, 0, 3500};
    const uint64_t max_ns[4] = {0, 1000, 1000, 3500};
    struct stats_exit_breakdown split = {3, dev_count, dev_ns, dev_max, &devices};
    stats_exit_table("VM pingpong", count, ns, max_ns, &reasons, &split, keep, &l);
    assert_string_equal(
        l.text[3],
        "                  io          6    60.00%         7.00us    70.00%         1.16us       "
        "  3.50us");
    assert_string_equal(
        l.text[4],
        "            io:lapic          4    40.00%         3.00us    30.00%         0.75us       "
        "  2.00us");
    assert_string_equal(
        l.text[5],
        "       io:virtio-net          2    20.00%         4.00us    40.00%         2.00us       "
        "  3.50us");
    assert_string_equal(
        l.text[6],
        "                 hlt          3    30.00%         2.00us    20.00%         0.66us       "
        "  1.00us");
    assert_string_equal(l.text[9], "Total Samples: 10, Total events handled time: 10.00us.");
    assert_int_equal(l.n, 10);

    /* A lone slot shows its reason's share, the hundredth rounding gave it included. */
    l.n = 0;
    const uint64_t thirds[4] = {0, 1, 1, 1}, one[3] = {0, 1, 0};
    split = (struct stats_exit_breakdown){1, one, one, one, &devices};
    stats_exit_table("VM thirds", thirds, thirds, thirds, &reasons, &split, keep, &l);
    assert_string_equal(
        l.text[3],
        "               cpuid          1    33.34%         0.00us    33.34%         0.00us       "
        "  0.00us");
    assert_string_equal(
        l.text[4],
        "        cpuid:ioapic          1    33.34%         0.00us    33.34%         0.00us       "
        "  0.00us");
}

static void test_key_table_blocks_fit_the_width(void **state)
{
    (void)state;
    static struct lines l;
    l.n = 0;
    static struct vcpu v[7];
    static struct stats_record recs[7];
    fill_vm();
    for (unsigned i = 0; i < 7; i++) {
        fill_vcpu(&v[i], i, 1);
        v[i].stats.exits[EXIT_HLT] = 10 * i;
        v[i].stats.exits[EXIT_IDLE_HLT] = 0;
        stats_read(&recs[i], STATS_SCOPE_VCPU, &vcpu_stats_table, &v[i]);
    }
    v[6].halt_poll.window_ns = 1234567890123ull; /* as wide as a cell allows */
    stats_read(&recs[6], STATS_SCOPE_VCPU, &vcpu_stats_table, &v[6]);
    stats_key_table("vm v", recs, 7, "vcpu", keep, &l);
    unsigned rows = 0; /* the rows marked for the table */
    for (unsigned k = 0; k < vcpu_stats_table.count; k++)
        rows += !!(vcpu_stats_table.rows[k].flags & STATS_F_TABLE);
    /* 7 columns in two blocks: a heading line and the rows each. */
    assert_int_equal(l.n, 1 + 2 * (1 + rows));
    assert_string_equal(l.text[0], "vm v");
    assert_string_equal(l.text[1], "                                      vcpu 0        vcpu 1     "
                                   "   vcpu 2        vcpu 3        vcpu 4");
    assert_string_equal(l.text[2], "cpu                                        3             4     "
                                   "        5             6             7");
    bool seen = false;
    for (unsigned i = 0; i < l.n; i++) {
        if (!strncmp(l.text[i], "halt_exits ", 11) && !seen) {
            assert_string_equal(l.text[i],
                                "halt_exits                                 0            "
                                "10            20            30            40");
            seen = true;
        }
    }
    assert_true(seen);
    assert_string_equal(l.text[2 + rows],
                        "                                      vcpu 5        vcpu 6");
    char want[128];
    snprintf(want, sizeof(want), "%-30s%14u%14s", "halt_poll_ns", 71, " 1234567890123");
    bool wide = false;
    for (unsigned i = 2 + rows; i < l.n; i++)
        wide |= !strcmp(l.text[i], want);
    assert_true(wide);
}

static void count_line(const char *text, void *ctx)
{
    (*(unsigned *)ctx)++;
    assert_int_equal(text[0], '|');
}

static void test_doc_has_a_row_per_key(void **state)
{
    (void)state;
    unsigned n = 0, keys = 0;
    stats_doc(stats_doc_tables, STATS_DOC_TABLES, count_line, &n);
    for (unsigned t = 0; t < STATS_DOC_TABLES; t++)
        for (unsigned k = 0; k < stats_doc_tables[t]->count; k++)
            keys += stats_doc_tables[t]->rows[k].doc != 0;
    assert_int_equal(n, keys + 2);
}

/* docs/stats.md carries the table stats_doc makes, unchanged (make test runs at the top). */
static void doc_line(const char *text, void *ctx)
{
    FILE *f = ctx;
    char got[1024];
    assert_non_null(fgets(got, sizeof(got), f));
    got[strcspn(got, "\n")] = 0;
    assert_string_equal(got, text);
}

static void test_docs_stats_md_is_current(void **state)
{
    (void)state;
    FILE *f = fopen("docs/stats.md", "r");
    assert_non_null(f);
    char line[1024];
    while (fgets(line, sizeof(line), f) && strncmp(line, "| key |", 7))
        ;
    assert_int_equal(strncmp(line, "| key |", 7), 0);
    fseek(f, -(long)strlen(line), SEEK_CUR);
    stats_doc(stats_doc_tables, STATS_DOC_TABLES, doc_line, f);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_vcpu_row_reads_its_field),
        cmocka_unit_test(test_cpu_and_global_rows),
        cmocka_unit_test(test_vm_stop_keys),
        cmocka_unit_test(test_device_rows_read_their_fields),
        cmocka_unit_test(test_json_escapes_names),
        cmocka_unit_test(test_json_counters_are_plain_integers),
        cmocka_unit_test(test_every_key_is_described),
        cmocka_unit_test(test_hist_buckets),
        cmocka_unit_test(test_sum_adds_counters_not_gauges),
        cmocka_unit_test(test_shares_sum_to_100),
        cmocka_unit_test(test_exit_table),
        cmocka_unit_test(test_exit_table_breakdown),
        cmocka_unit_test(test_key_table_blocks_fit_the_width),
        cmocka_unit_test(test_doc_has_a_row_per_key),
        cmocka_unit_test(test_docs_stats_md_is_current),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

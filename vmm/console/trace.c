/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/console/trace.h"

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/json.h"
#include "sched/yield.h"
#include "vmm/vm.h"
#include "vmm/vcpu/vcpu.h"

const char *const trace_names[TRACE_KIND_COUNT + 1] = {
    [TRACE_HALT_POLL] = "halt_poll",
    [TRACE_PLE] = "ple",
    [TRACE_SCHED] = "sched",
    [TRACE_HALT] = "halt",
};

const char *const trace_window_names[] = {
    [TRACE_WINDOW_ALL] = "all",
    [TRACE_WINDOW_MARKER] = "marker",
    NULL,
};

const char *const trace_wake_names[TRACE_WAKE_COUNT] = {
    [TRACE_WAKE_IPI] = "ipi",   [TRACE_WAKE_DEVICE] = "device", [TRACE_WAKE_TIMER] = "timer",
    [TRACE_WAKE_NMI] = "nmi",   [TRACE_WAKE_INIT] = "init",     [TRACE_WAKE_SIPI] = "sipi",
    [TRACE_WAKE_STOP] = "stop", [TRACE_WAKE_KICK] = "kick",
};

uint64_t trace_records = TRACE_RECORDS_DEFAULT;
unsigned trace_window_mode = TRACE_WINDOW_ALL;

static void format_ple(const struct trace_record *r, const char *vm_name, char *buf, size_t len)
{
    unsigned long long ns = (unsigned long long)r->ns;
    if (r->flag == TRACE_PLE_GROW || r->flag == TRACE_PLE_SHRINK) {
        /* KVM's kvm_ple_window_update tracepoint. */
        snprintf(buf, len, "%llu: %s: kvm_ple_window_update: vcpu %u old %llu new %llu (%s)", ns,
                 vm_name, r->vcpu, (unsigned long long)r->arg[1], (unsigned long long)r->arg[0],
                 r->flag == TRACE_PLE_GROW ? "grow" : "shrink");
        return;
    }
    uint64_t a = r->arg[1];
    unsigned pivot = (unsigned)(a >> 40) % 3 /* enum yield_pivot */,
             failed = (unsigned)(a >> 24) & 0xff;
    unsigned skipped = (unsigned)a & 0xffffff;
    const char *what = r->flag == TRACE_YIELD_BOOSTED ? "runs it now"
                       : r->flag == TRACE_YIELD_SLICE ? "gives up its slice"
                                                      : "keeps its CPU";
    char target[24];
    if (r->arg[0])
        snprintf(target, sizeof(target), "%llu", (unsigned long long)r->arg[0] - 1);
    else
        snprintf(target, sizeof(target), "none");
    snprintf(buf, len,
             "%llu: %s: directed_yield: vcpu %u pivot %s target %s: %s (%u skipped, %u failed%s)",
             ns, vm_name, r->vcpu, yield_pivot_names[pivot], target, what, skipped, failed,
             (a >> 32) & 1 ? ", gave up" : "");
}
static const char *state_name(unsigned s)
{
    return s < SCHED_STATE_COUNT ? vcpu_state_names[s] : "?";
}

/* The vCPU timeline's records (trace=sched): one line per state change or event. */
static void format_sched(const struct trace_record *r, const char *vm_name, char *buf, size_t len)
{
    unsigned long long ns = (unsigned long long)r->ns;
    unsigned hi = (unsigned)(r->arg[0] >> 16), lo = (unsigned)r->arg[0] & 0xffff;
    unsigned cpu = (unsigned)r->arg[1];
    switch (r->flag) {
    case TRACE_SCHED_STATE:
        snprintf(buf, len, "%llu: %s: sched_state: vcpu %u cpu %u: %s -> %s", ns, vm_name, r->vcpu,
                 cpu, state_name(hi), state_name(lo));
        break;
    case TRACE_SCHED_MIGRATE:
        snprintf(buf, len, "%llu: %s: sched_migrate: vcpu %u from cpu %llu to cpu %u", ns, vm_name,
                 r->vcpu, (unsigned long long)r->arg[0], cpu);
        break;
    case TRACE_SCHED_WAKEUP: {
        char from[24] = "";
        if (lo)
            snprintf(from, sizeof(from), " from vcpu %u", lo - 1);
        snprintf(buf, len, "%llu: %s: sched_wakeup: vcpu %u cpu %u: by %s%s", ns, vm_name, r->vcpu,
                 cpu, hi < TRACE_WAKE_COUNT ? trace_wake_names[hi] : "?", from);
        break;
    }
    default:
        snprintf(buf, len, "%llu: %s: sched_spin: vcpu %u cpu %u", ns, vm_name, r->vcpu, cpu);
        break;
    }
}

/*
 * KVM's kvm_vcpu_wakeup tracepoint ("wait" or "poll", the halt's time,
 * valid or not), then pollux's: the wake source, the window the policy had,
 * and why it could not poll, if so.
 */
static void format_halt(const struct trace_record *r, const char *vm_name, char *buf, size_t len)
{
    unsigned source = r->flag & 0xff;
    const char *why = r->flag & TRACE_HALT_OPTED_OUT    ? ", guest opted out"
                      : r->flag & TRACE_HALT_CPU_WANTED ? ", cpu wanted"
                                                        : "";
    snprintf(
        buf, len,
        "%llu: %s: kvm_vcpu_wakeup: vcpu %u: %s time %llu ns, polling %s: by %s, window %llu%s",
        (unsigned long long)r->ns, vm_name, r->vcpu, r->flag & TRACE_HALT_WAITED ? "wait" : "poll",
        (unsigned long long)r->arg[0], r->flag & TRACE_HALT_VALID ? "valid" : "invalid",
        source < TRACE_WAKE_COUNT ? trace_wake_names[source] : "?", (unsigned long long)r->arg[1],
        why);
}

unsigned trace_mask;

void trace_ring_init(struct trace_ring *ring, uint32_t size, enum trace_window window)
{
    ring->next = 0;
    ring->size = size;
    ring->recording = window == TRACE_WINDOW_ALL;
}

enum trace_mark trace_window_mark(bool *recording, enum trace_window window, uint8_t value)
{
    if (value > 1)
        return TRACE_MARK_IGNORED;
    if (window == TRACE_WINDOW_MARKER)
        *recording = value == 1;
    return value == 1 ? TRACE_MARK_START : TRACE_MARK_END;
}

static void ring_write(struct trace_ring *ring, uint64_t tsc, enum trace_kind kind, unsigned vcpu,
                       uint32_t flag, uint64_t arg0, uint64_t arg1)
{
    /* Writers are the VM's vCPUs; the reader runs once all of them have retired. */
    uint64_t n = __atomic_fetch_add(&ring->next, 1, __ATOMIC_RELAXED);
    ring->rec[n % ring->size] = (struct trace_record){
        .ns = tsc_to_ns(tsc),
        .kind = (uint16_t)kind,
        .vcpu = (uint16_t)vcpu,
        .flag = flag,
        .arg = {arg0, arg1},
    };
}

void trace_record(struct vm *vm, enum trace_kind kind, unsigned vcpu, uint32_t flag, uint64_t arg0,
                  uint64_t arg1)
{
    trace_record_at(vm, rdtsc(), kind, vcpu, flag, arg0, arg1);
}

void trace_record_at(struct vm *vm, uint64_t tsc, enum trace_kind kind, unsigned vcpu,
                     uint32_t flag, uint64_t arg0, uint64_t arg1)
{
    struct trace_ring *ring = vm->trace;
    if (ring && __atomic_load_n(&ring->recording, __ATOMIC_RELAXED))
        ring_write(ring, tsc, kind, vcpu, flag, arg0, arg1);
}

/* Each vCPU's state as the window opens, under its lock so no change of it is recorded first. */
static void record_states(struct vm *vm)
{
    for (unsigned i = 0; i < vm->nvcpus; i++) {
        struct sched_entity *e = &vm->vcpus[i]->se;
        uint64_t flags = spin_lock_irqsave(&e->lock);
        ring_write(vm->trace, rdtsc(), TRACE_SCHED, i, TRACE_SCHED_STATE,
                   trace_pair(e->state, e->state), e->cpu);
        spin_unlock_irqrestore(&e->lock, flags);
    }
}

void trace_marker(struct vm *vm, unsigned vcpu, uint8_t value)
{
    struct trace_ring *ring = vm->trace;
    if (!ring)
        return;
    bool recording = ring->recording;
    enum trace_mark m = trace_window_mark(&recording, (enum trace_window)trace_window_mode, value);
    if (m == TRACE_MARK_IGNORED)
        return;
    if (m == TRACE_MARK_START) {
        __atomic_store_n(&ring->recording, recording, __ATOMIC_RELAXED);
        ring_write(ring, rdtsc(), TRACE_MARKER, vcpu, 1, 0, 0);
        if (trace_on(TRACE_SCHED))
            record_states(vm);
    } else {
        ring_write(ring, rdtsc(), TRACE_MARKER, vcpu, 0, 0, 0);
        __atomic_store_n(&ring->recording, recording, __ATOMIC_RELAXED);
    }
}

void trace_format(const struct trace_record *r, const char *vm_name, char *buf, size_t len)
{
    switch (r->kind) {
    case TRACE_HALT_POLL:
        /* KVM's kvm_halt_poll_ns tracepoint, field for field. */
        snprintf(buf, len, "%llu: %s: kvm_halt_poll_ns: vcpu %u: halt_poll_ns %llu (%s %llu)",
                 (unsigned long long)r->ns, vm_name, r->vcpu, (unsigned long long)r->arg[0],
                 r->flag ? "grow" : "shrink", (unsigned long long)r->arg[1]);
        break;
    case TRACE_PLE:
        format_ple(r, vm_name, buf, len);
        break;
    case TRACE_SCHED:
        format_sched(r, vm_name, buf, len);
        break;
    case TRACE_HALT:
        format_halt(r, vm_name, buf, len);
        break;
    case TRACE_MARKER:
        snprintf(buf, len, "%llu: %s: trace_marker: vcpu %u: window %s", (unsigned long long)r->ns,
                 vm_name, r->vcpu, r->flag ? "start" : "end");
        break;
    default:
        snprintf(buf, len, "%llu: %s: unknown trace record %u", (unsigned long long)r->ns, vm_name,
                 r->kind);
        break;
    }
}

void trace_flush(struct vm *vm)
{
    struct trace_ring *ring = vm->trace;
    if (!ring)
        return;
    uint64_t first = ring->next > ring->size ? ring->next - ring->size : 0;
    char buf[192];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "vm", vm->cfg.name);
    json_u64(&j, "records", ring->next - first);
    json_u64(&j, "dropped", first);
    json_u64(&j, "size", ring->size);
    json_str(&j, "window", trace_window_names[trace_window_mode]);
    console_event("trace_flush", &j);
    for (uint64_t i = first; i < ring->next; i++) {
        char line[192];
        trace_format(&ring->rec[i % ring->size], vm->cfg.name, line, sizeof(line));
        kprintf("%s\n", line);
    }
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/console/trace.h"

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "sched/yield.h"
#include "vmm/vm.h"

const char *const trace_names[TRACE_KIND_COUNT + 1] = {
    [TRACE_HALT_POLL] = "halt_poll",
    [TRACE_PLE] = "ple",
};

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
unsigned trace_mask;

void trace_record(struct vm *vm, enum trace_kind kind, unsigned vcpu, uint32_t flag, uint64_t arg0,
                  uint64_t arg1)
{
    struct trace_ring *ring = vm->trace;
    if (!ring)
        return;
    /* Writers are the VM's vCPUs; the reader runs once all of them have retired. */
    uint64_t n = __atomic_fetch_add(&ring->next, 1, __ATOMIC_RELAXED);
    ring->rec[n % TRACE_RING_RECORDS] = (struct trace_record){
        .ns = tsc_to_ns(rdtsc()),
        .kind = (uint16_t)kind,
        .vcpu = (uint16_t)vcpu,
        .flag = flag,
        .arg = {arg0, arg1},
    };
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
    uint64_t first = ring->next > TRACE_RING_RECORDS ? ring->next - TRACE_RING_RECORDS : 0;
    if (first)
        kprintf("pollux: %s: %llu trace records lost (the last %u follow)\n", vm->cfg.name,
                (unsigned long long)first, TRACE_RING_RECORDS);
    for (uint64_t i = first; i < ring->next; i++) {
        char line[192];
        trace_format(&ring->rec[i % TRACE_RING_RECORDS], vm->cfg.name, line, sizeof(line));
        kprintf("%s\n", line);
    }
}

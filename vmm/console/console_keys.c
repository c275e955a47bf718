/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/console/console_keys.h"

#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/uart.h"
#include "lib/format.h"
#include "lib/json.h"
#include "sched/timer.h"
#include "stats/report.h"
#include "vmm/console/serial_mux.h"
#include "vmm/console/trace.h"
#include "vmm/dev/vm_devices.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/vmm.h"

/* Often enough that a key feels immediate, rarely enough to cost guests nothing. */
#define POLL_MS 20

bool console_keys = true;

static struct serial_mux mux;
static struct timer poll_timer;

static void key_event(char key, const char *what)
{
    char buf[96];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    char k[2] = {key, 0};
    json_str(&j, "key", k);
    if (what)
        json_str(&j, "did", what);
    console_event("key", &j);
}

static void list_vm(struct vm *vm, void *ctx)
{
    (void)ctx;
    kprintf("pollux: vm %u %s: %u vCPU%s%s\n", vm->number, vm->cfg.name, vm->nvcpus,
            vm->nvcpus == 1 ? "" : "s", vm->stopping ? ", stopping" : "");
    for (unsigned i = 0; i < vm->nvcpus; i++) {
        const struct vcpu *v = vm->vcpus[i];
        kprintf("pollux:   vcpu %u: %s on cpu %u\n", i,
                vcpu_state_names[__atomic_load_n(&v->se.state, __ATOMIC_RELAXED)],
                __atomic_load_n(&v->se.cpu, __ATOMIC_RELAXED));
    }
}

static void stop_vm(struct vm *vm, void *ctx)
{
    (void)ctx;
    vm_request_stop(vm, 0, "console");
}

/* The trace settings `t` cycles through: each subset of the traces in turn. */
static void next_trace(void)
{
    unsigned all = (1u << TRACE_KIND_COUNT) - 1;
    unsigned mask = (__atomic_load_n(&trace_mask, __ATOMIC_RELAXED) + 1) & all;
    __atomic_store_n(&trace_mask, mask, __ATOMIC_RELAXED);
    vcpu_trace_update();
    char names[64] = "";
    unsigned n = 0;
    for (unsigned k = 0; k < TRACE_KIND_COUNT; k++)
        if (mask & (1u << k))
            n += (unsigned)snprintf(names + n, sizeof(names) - n, "%s%s", n ? "," : "",
                                    trace_names[k]);
    key_event('t', mask ? names : "none");
}

static void key(char c)
{
    switch (c) {
    case 's':
        key_event(c, "statistics");
        stats_request_round();
        break;
    case 'v':
        key_event(c, "vms");
        vmm_for_each_vm(list_vm, 0);
        break;
    case 't':
        next_trace();
        break;
    case 'q':
        key_event(c, "quit");
        vmm_for_each_vm(stop_vm, 0);
        break;
    case 'h':
        key_event(c, "help");
        kprintf("pollux: keys: s statistics tables, v VMs and vCPUs, t next trace setting, "
                "q stop every VM and shut down, h this help;\n"
                "pollux: Ctrl-A <n> gives the input to VM n, Ctrl-A c takes it back\n");
        break;
    default:
        break;
    }
}

enum guest_action { LOOK, SEND, INTERACTIVE_ON, INTERACTIVE_OFF };

struct guest_input {
    unsigned number; /* the VM's (struct vm: its place among the boot's VMs) */
    enum guest_action action;
    char c;
    bool found;
};

static void give(struct vm *vm, void *ctx)
{
    struct guest_input *in = ctx;
    if (vm->number != in->number)
        return;
    in->found = true;
    if (in->action == SEND)
        vm_uart_input(vm, in->c); /* the guest gets its receive interrupt too */
    else if (in->action != LOOK)
        vm_uart_set_interactive(vm, in->action == INTERACTIVE_ON);
}

/* Act on VM number n (give it c, or only look for it); false if it does not run. */
static bool to_guest(unsigned n, enum guest_action action, char c)
{
    struct guest_input in = {n, action, c, false};
    vmm_for_each_vm(give, &in);
    return in.found;
}

static int interactive_vm = -1; /* the VM whose output goes out raw, as a person types at it */

/* The input goes to VM n (-1: the keys): its output raw, the periodic tables held meanwhile. */
static void set_interactive(int n)
{
    if (interactive_vm >= 0)
        to_guest((unsigned)interactive_vm, INTERACTIVE_OFF, 0);
    interactive_vm = n;
    if (n >= 0)
        to_guest((unsigned)n, INTERACTIVE_ON, 0);
    stats_hold_tables(n >= 0);
}

/* VM n (the one with the input) has stopped: the keys have the input again. */
static void input_back_to_keys(int n)
{
    set_interactive(-1);
    kprintf("pollux: vm %d has stopped: input goes to the keys again\n", n);
    serial_mux_init(&mux);
}

static void input(char c)
{
    struct serial_mux_result r = serial_mux_feed(&mux, c);
    switch (r.event) {
    case MUX_KEY:
        key(r.c);
        break;
    case MUX_GUEST:
        if (!to_guest((unsigned)r.vm, SEND, r.c))
            input_back_to_keys(r.vm);
        break;
    case MUX_SELECT_VM:
        if (to_guest((unsigned)r.vm, LOOK, 0)) {
            set_interactive(-1);
            kprintf("pollux: input goes to vm %d (Ctrl-A c takes it back); its output "
                    "comes as it is written, the periodic tables wait\n",
                    r.vm);
            set_interactive(r.vm);
        } else {
            kprintf("pollux: no vm %d: input stays with the keys\n", r.vm);
            serial_mux_init(&mux);
        }
        break;
    case MUX_SELECT_KEYS:
        set_interactive(-1);
        kprintf("pollux: input goes to the keys (h lists them)\n");
        break;
    case MUX_PENDING:
    case MUX_DROPPED:
        break;
    }
}

static void poll(struct timer *t, uint64_t now)
{
    for (int c; (c = uart_getc()) >= 0;)
        input((char)c);
    /* The VM with the input stopped: the keys have it again, and the tables come back. */
    if (interactive_vm >= 0 && !to_guest((unsigned)interactive_vm, LOOK, 0))
        input_back_to_keys(interactive_vm);
    if (!vmm_all_stopped())
        timer_arm(t, this_cpu()->cpu, now + POLL_MS * tsc_khz);
}

void console_keys_start(void)
{
    if (!console_keys)
        return;
    serial_mux_init(&mux);
    timer_init(&poll_timer, poll);
    timer_arm(&poll_timer, this_cpu()->cpu, rdtsc() + POLL_MS * tsc_khz);
}

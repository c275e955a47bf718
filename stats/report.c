/* SPDX-License-Identifier: GPL-2.0-only */
#include "stats/report.h"

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/json.h"
#include "lib/string.h"
#include "stats/table.h"

unsigned stats_interval_ms;
bool stats_tables = true;

static const struct stats_vms *vm_source;
static const struct stats_cpus *cpu_source;

void stats_register_vms(const struct stats_vms *v)
{
    vm_source = v;
}

void stats_register_cpus(const struct stats_cpus *c)
{
    if (c->size <= STATS_BASE_MAX)
        cpu_source = c;
}

/*
 * One round at a time: the records are built in this scratch space (a VM's
 * vCPUs at once, for its table) and their lines never interleave with
 * another round's.
 */
#define VCPUS_MAX 64 /* vmm/vcpu/vcpu_stats.c checks VM_MAX_VCPUS against it */
static struct spinlock round_lock = SPINLOCK_INIT;
static uint64_t rounds;
static struct {
    struct stats_record vcpu[VCPUS_MAX];
    struct stats_record vm;
    struct stats_record cpu[MAX_CPUS];
    struct stats_record global;
    _Alignas(8) unsigned char base[STATS_BASE_MAX];
    char json[4096];
    char devices[STATS_DEVICES_MAX];
} scratch;

struct round {
    uint64_t number, t;
    bool tables;
};

static void print_record(const struct round *r, struct stats_record *rec)
{
    rec->head.round = r->number;
    rec->head.t = r->t;
    kprintf("@stats %s\n", stats_json(rec, scratch.json, sizeof(scratch.json)));
}

static void print_line(const char *text, void *ctx)
{
    (void)ctx;
    kprintf("%s\n", text);
}

/* The values of rec's row name (an array), or NULL. */
static const uint64_t *values(const struct stats_record *rec, const char *name)
{
    unsigned slot;
    return stats_find(rec->table, name, &slot) ? &rec->slot[slot] : 0;
}

/* The registered split of one exit reason, from rec, in *out; NULL if there is none. */
static const struct stats_exit_breakdown *exit_split(const struct stats_record *rec,
                                                     struct stats_exit_breakdown *out)
{
    unsigned slot;
    if (!vm_source->split_count || !vm_source->split_ns || !vm_source->split_max)
        return 0;
    const struct stats_desc *d = stats_find(rec->table, vm_source->split_count, &slot);
    const uint64_t *ns = values(rec, vm_source->split_ns);
    const uint64_t *max_ns = values(rec, vm_source->split_max);
    if (!d || !ns || !max_ns)
        return 0;
    *out = (struct stats_exit_breakdown){vm_source->split_reason, &rec->slot[slot], ns, max_ns,
                                         stats_row_reasons(rec->table, d)};
    return out;
}

/*
 * The VM's vCPU records and its devices' statistics now: the devices' objects
 * as one object's text in devices (its "{}" if none wrote any).
 */
static unsigned read_vm(const struct stats_vm *vm, struct stats_record *vcpus,
                        char devices[STATS_DEVICES_MAX])
{
    unsigned n = vm->n < VCPUS_MAX ? vm->n : VCPUS_MAX;
    for (unsigned i = 0; i < n; i++)
        stats_read(&vcpus[i], STATS_SCOPE_VCPU, vm_source->vcpu, vm->vcpus[i]);
    struct json j;
    json_begin(&j, devices, STATS_DEVICES_MAX);
    if (!vm->devices || !vm->devices(vm->owner, &j))
        json_begin(&j, devices, STATS_DEVICES_MAX);
    json_end(&j);
    return n;
}

/* The VM's devices' statistics: one `devices` record, if any device has them. */
static void report_devices(const struct round *r, const char *name, const char *devices)
{
    struct json j;
    const struct stats_head head = {stats_scope_names[STATS_SCOPE_DEVICES], r->number, r->t};
    if (!strcmp(devices, "{}"))
        return;
    json_begin(&j, scratch.json, sizeof(scratch.json));
    stats_event_json(&j, &stats_head_table, &head);
    json_str(&j, "vm", name);
    json_members(&j, devices);
    kprintf("@stats %s\n", json_end(&j));
}

/* A VM's round from its n vCPU records and its devices' text (read_vm); tables if asked. */
static void print_vm(const struct round *r, const char *name, struct stats_record *vcpus,
                     unsigned n, const char *devices)
{
    stats_sum(&scratch.vm, STATS_SCOPE_VM, vcpus, n);
    for (unsigned i = 0; i < n; i++)
        print_record(r, &vcpus[i]);
    print_record(r, &scratch.vm);
    report_devices(r, name, devices);
    if (!r->tables)
        return;
    char title[64];
    snprintf(title, sizeof(title), "VM %s, %u vCPUs, round %lu", name, n, (unsigned long)r->number);
    const uint64_t *exits = values(&scratch.vm, "exits"), *exit_ns = values(&scratch.vm, "exit_ns");
    const uint64_t *exit_max = values(&scratch.vm, "exit_max_ns");
    kprintf("\n");
    if (exits && exit_ns && exit_max) {
        struct stats_exit_breakdown split;
        stats_exit_table(title, exits, exit_ns, exit_max, vm_source->vcpu->reasons,
                         exit_split(&scratch.vm, &split), print_line, 0);
    }
    kprintf("\n");
    stats_key_table(title, vcpus, n, "vcpu", print_line, 0);
    kprintf("\n");
}

static void report_vm(const struct stats_vm *vm, void *ctx)
{
    if (!vm_source || !vm->n)
        return;
    unsigned n = read_vm(vm, scratch.vcpu, scratch.devices);
    print_vm(ctx, vm->name, scratch.vcpu, n, scratch.devices);
}

/*
 * The rounds taken (stats_take_vm) and not yet printed, in the order of their
 * t: a round's t is read under this lock with its place in the queue, so one
 * printed after the queue was detached is later than every round in it.
 */
static struct spinlock taken_lock = SPINLOCK_INIT;
static struct stats_snapshot *taken, **taken_tail = &taken;

/* The queue, emptied, and the time now: a round printed after those in it. */
static struct stats_snapshot *detach_taken(uint64_t *t)
{
    uint64_t flags = spin_lock_irqsave(&taken_lock);
    struct stats_snapshot *list = taken;
    taken = NULL;
    taken_tail = &taken;
    *t = tsc_to_ns(rdtsc());
    spin_unlock_irqrestore(&taken_lock, flags);
    return list;
}

/* A round taken, under its own number (round_lock held; out of the queue). */
static void print_one(struct stats_snapshot *s)
{
    /* Being copied by a mark's exit on another CPU: a bounded wait. */
    while (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
        cpu_relax();
    struct round r = {++rounds, s->t, false};
    if (s->n)
        print_vm(&r, s->name, s->vcpus, s->n, s->devices);
    __atomic_store_n(&s->in_use, false, __ATOMIC_RELEASE); /* its owner may take it again */
}

static void print_taken(struct stats_snapshot *s)
{
    while (s) {
        struct stats_snapshot *next = s->next;
        print_one(s);
        s = next;
    }
}

/* "@stats ", the head's round and t at their longest, the line's end: more than any adds. */
#define RECORD_SLACK 64

/* The console's bytes for round s (ready): its records formatted once to measure them. */
static uint64_t round_bytes(const struct stats_snapshot *s)
{
    uint64_t bytes = strlen(s->devices) + RECORD_SLACK;
    stats_sum(&scratch.vm, STATS_SCOPE_VM, s->vcpus, s->n);
    for (unsigned i = 0; i <= s->n; i++) {
        const struct stats_record *rec = i < s->n ? &s->vcpus[i] : &scratch.vm;
        bytes += strlen(stats_json(rec, scratch.json, sizeof(scratch.json))) + RECORD_SLACK;
    }
    return bytes;
}

/* The oldest round taken, out of the queue, if the console has the room it needs; else NULL. */
static struct stats_snapshot *take_oldest(uint64_t need, uint64_t room)
{
    uint64_t flags = spin_lock_irqsave(&taken_lock);
    struct stats_snapshot *s = taken;
    if (s && need <= room) {
        taken = s->next;
        if (!taken)
            taken_tail = &taken;
    } else {
        s = NULL;
    }
    spin_unlock_irqrestore(&taken_lock, flags);
    return s;
}

static bool short_of_room(void *ctx)
{
    return console_room() < *(const uint64_t *)ctx;
}

/* A new round (round_lock held): the rounds taken before it come first. */
static void begin(struct round *r, bool tables)
{
    print_taken(detach_taken(&r->t));
    r->number = ++rounds;
    r->tables = tables;
}

static void report_host(const struct round *r)
{
    unsigned ncpus = cpu_source ? cpu_count : 0;
    for (unsigned c = 0; c < ncpus; c++) {
        cpu_source->read(c, scratch.base);
        stats_read(&scratch.cpu[c], STATS_SCOPE_CPU, cpu_source->table, scratch.base);
        print_record(r, &scratch.cpu[c]);
    }
    struct stats_global g = {.cpus = cpu_count};
    if (vm_source)
        vm_source->counts(&g.vms_running, &g.vms_stopped);
    console_counts(&g.console_bytes, &g.console_full_waits);
    stats_read(&scratch.global, STATS_SCOPE_GLOBAL, &stats_global_table, &g);
    print_record(r, &scratch.global);
    if (r->tables && ncpus) {
        char title[48];
        snprintf(title, sizeof(title), "host CPUs, round %lu", (unsigned long)r->number);
        stats_key_table(title, scratch.cpu, ncpus, "cpu", print_line, 0);
        kprintf("\n");
    }
}

void stats_report_vm(const struct stats_vm *vm, bool tables)
{
    struct round r;
    uint64_t flags = spin_lock_irqsave(&round_lock);
    begin(&r, tables);
    report_vm(vm, &r);
    spin_unlock_irqrestore(&round_lock, flags);
}

void stats_take_vm(const struct stats_vm *vm, struct stats_snapshot *snap)
{
    snap->name = vm->name;
    snap->next = NULL;
    snap->bytes = 0;
    __atomic_store_n(&snap->ready, false, __ATOMIC_RELAXED);
    uint64_t flags = spin_lock_irqsave(&taken_lock);
    snap->t = tsc_to_ns(rdtsc());
    *taken_tail = snap;
    taken_tail = &snap->next;
    spin_unlock_irqrestore(&taken_lock, flags);
    snap->n = vm_source && vm->n ? read_vm(vm, snap->vcpus, snap->devices) : 0;
    __atomic_store_n(&snap->ready, true, __ATOMIC_RELEASE);
}

void stats_print_taken(void)
{
    uint64_t t, flags = spin_lock_irqsave(&round_lock);
    print_taken(detach_taken(&t));
    spin_unlock_irqrestore(&round_lock, flags);
}

bool stats_print_taken_nowait(void)
{
    /* Another CPU's round may be waiting for the UART while it holds the lock: later, then. */
    uint64_t flags = irq_save();
    if (!spin_trylock(&round_lock)) {
        irq_restore(flags);
        return true;
    }
    for (;;) {
        struct stats_snapshot *s = __atomic_load_n(&taken, __ATOMIC_ACQUIRE);
        if (!s || !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
            break;
        if (!s->bytes)
            s->bytes = round_bytes(s); /* only the queue's head is ever measured: it stays */
        /* A round longer than the whole buffer (some 30 vCPUs) waits for its excess. */
        uint64_t need = s->bytes < CONSOLE_BUFFER_BYTES ? s->bytes : CONSOLE_BUFFER_BYTES;
        if (!(s = take_oldest(need, console_room()))) {
            console_drain_while(short_of_room, &need); /* a burst if the UART is free */
            break;
        }
        print_one(s);
    }
    bool left = __atomic_load_n(&taken, __ATOMIC_ACQUIRE) != NULL;
    spin_unlock(&round_lock);
    irq_restore(flags);
    return left;
}

void stats_report_round(bool tables)
{
    struct round r;
    uint64_t flags = spin_lock_irqsave(&round_lock);
    begin(&r, tables);
    if (vm_source)
        vm_source->for_each(report_vm, &r);
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

static bool round_due, tables_due, tables_held;

void stats_hold_tables(bool hold)
{
    __atomic_store_n(&tables_held, hold, __ATOMIC_RELAXED);
}

void stats_round_due(void)
{
    __atomic_store_n(&round_due, true, __ATOMIC_RELEASE);
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
                           (stats_tables && !__atomic_load_n(&tables_held, __ATOMIC_RELAXED)));
}

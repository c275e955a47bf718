/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Statistics rounds on the console: `@stats` records (docs/console.md) and
 * the human tables, when a VM stops (its records), every
 * stats_interval_ms (every live VM, every CPU), on request from the key
 * console, and at shutdown (every CPU). Every record of one round carries
 * the round's number and time.
 *
 * stats/ reads structs it does not know through the tables their owners
 * register at boot: vmm/ its vCPUs' (vmm/vcpu/vcpu_stats.c), sched/ its CPUs'
 * (sched/cpu_stats.c).
 */
#ifndef POLLUX_STATS_REPORT_H
#define POLLUX_STATS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/stats.h"

extern unsigned stats_interval_ms; /* 0: no periodic rounds */
extern bool stats_tables;          /* print the human tables with the records */

struct json;

/*
 * One VM: its name and its vCPUs' structs, read through the registered vCPU
 * table; and its devices' statistics (NULL: none), which write their objects
 * into the round's `devices` record and say whether they wrote any.
 */
struct stats_vm {
    const char *name;
    const void *const *vcpus;
    unsigned n;
    bool (*devices)(const void *owner, struct json *j);
    const void *owner;
};

/* Registered by vmm/ at boot. */
struct stats_vms {
    const struct stats_table *vcpu; /* over one vCPU: the vcpu and vm scopes */
    /* fn for every live VM, each kept alive while fn runs. */
    void (*for_each)(void (*fn)(const struct stats_vm *vm, void *ctx), void *ctx);
    void (*counts)(uint64_t *running, uint64_t *stopped);
    /* The exit table's sub-rows under exit reason split_reason: the vCPU table's
     * STATS_BY_REASON rows split_count, split_ns and split_max (NULL: none). */
    unsigned split_reason;
    const char *split_count, *split_ns, *split_max;
};
void stats_register_vms(const struct stats_vms *vms);

/* Registered by sched/ at boot: read(cpu, out) fills size bytes that table's rows are over. */
struct stats_cpus {
    const struct stats_table *table; /* the cpu scope */
    size_t size;                     /* at most STATS_BASE_MAX */
    void (*read)(unsigned cpu, void *out);
};
#define STATS_BASE_MAX 256
void stats_register_cpus(const struct stats_cpus *cpus);

/* A round of one VM's records (and, if asked, its tables): when its last vCPU retires. */
void stats_report_vm(const struct stats_vm *vm, bool tables);

/*
 * A VM's round taken at one moment and printed later (without tables): a
 * trace mark's, taken in the marking exit, where formatting and printing
 * would make the exit as long as the console is slow (vmm/dev/trace_marker.c).
 * Taking it copies the VM's records and queues it; it is printed by
 * stats_print_taken(_nowait) or, at the latest, before the next round of any kind, so
 * that rounds still come out in the order of their `t` (the time it was
 * taken) and numbered in print order.
 */
#define STATS_DEVICES_MAX 4096 /* the devices' objects, as text: the record's room */
struct stats_snapshot {
    /* The caller's: set before stats_take_vm, cleared (release) once it is printed. */
    bool in_use;
    struct stats_record *vcpus; /* the caller's room for the VM's vCPUs */
    /* stats/'s: */
    struct stats_snapshot *next; /* in the queue of rounds taken */
    bool ready;                  /* its records are copied */
    const char *name;            /* the VM's: it must outlive the printing */
    uint64_t bytes;              /* its lines' length, once measured; 0 before */
    uint64_t t;
    unsigned n;
    char devices[STATS_DEVICES_MAX];
};

/* Take vm's round into snap and queue it: a copy of its records, no formatting or printing. */
void stats_take_vm(const struct stats_vm *vm, struct stats_snapshot *snap);

/* Print the rounds taken so far, oldest first (a round still being copied is waited for). */
void stats_print_taken(void);

/*
 * The same, but only as far as the console has room for the next round:
 * never waiting for the UART (deferred work, between vCPU entries, where a
 * wait would hold a vCPU off its CPU for the serial line's time), sending
 * a burst of the console's backlog instead. True if rounds are left.
 */
bool stats_print_taken_nowait(void);

/* Every live VM's records, every CPU's and the global one; tables if asked. */
void stats_report_round(bool tables);

/* At shutdown: every CPU's records and the global one, and the CPU table. */
void stats_report_shutdown(void);

/* A periodic round is due (sched/'s timer, every stats_interval_ms): stats_poll prints it. */
void stats_round_due(void);

/* A round with tables, printed by stats_poll (the key console's `s`). */
void stats_request_round(void);

/*
 * While a person types at a VM (the key console gave it the input): the
 * periodic rounds keep their records but leave their tables out, which
 * would run through the guest's screen. `s` still prints them.
 */
void stats_hold_tables(bool hold);

/* Between time slices or between two exits, on any CPU: print a round that is due. */
void stats_poll(void);

#endif

/*
 * Statistics rounds on the console: `@stats` records (docs/console.md) and
 * the human tables, when a VM stops (its records), every
 * stats_interval_ms (every live VM, every CPU), on request from the key
 * console, and at shutdown (every CPU). Every record of one round carries
 * the round's number and time.
 */
#ifndef POLLUX_STATS_REPORT_H
#define POLLUX_STATS_REPORT_H

#include <stdbool.h>

#include "vmm/vm.h"

extern unsigned stats_interval_ms; /* 0: no periodic rounds */
extern bool stats_tables;          /* print the human tables with the records */

/* The last vCPU of vm retired: its records and tables. */
void stats_report_vm_stop(struct vm *vm);

/* Every live VM's records, every CPU's and the global one; tables if asked. */
void stats_report_round(bool tables);

/* At shutdown: every CPU's records and the global one, and the CPU table. */
void stats_report_shutdown(void);

/* Arm the periodic rounds (on the boot CPU, once the VMs run). */
void stats_periodic_start(void);

/* A round with tables, printed by stats_poll (the key console's `s`). */
void stats_request_round(void);

/* Between time slices, on any CPU: print a periodic round that is due. */
void stats_poll(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The statistics tables in docs/stats.md's order (each record's head, a
 * vCPU's, a host CPU's, the global record's, then the devices' and their
 * virtio transport's), for tools/statsdoc.c and the unit test stats; both
 * link STATS_TABLE_SRCS (tests/unit/units.mk).
 */
#ifndef POLLUX_TOOLS_STATS_TABLES_H
#define POLLUX_TOOLS_STATS_TABLES_H

#include "sched/sched.h"
#include "stats/stats.h"
#include "vmm/dev/virtio/blk.h"
#include "vmm/dev/virtio/net.h"
#include "vmm/dev/vpic.h"
#include "vmm/dev/vpit.h"
#include "vmm/dev/vuart.h"
#include "vmm/vcpu/vcpu_stats.h"

static const struct stats_table *const stats_doc_tables[] = {
    &stats_head_table,        &vcpu_stats_table,       &sched_cpu_stats_table,
    &stats_global_table,      &vuart_stats_table,      &vpic_stats_table,
    &vpit_stats_table,        &virtio_blk_stats_table, &virtio_net_stats_table,
    &virtio_mmio_stats_table,
};
#define STATS_DOC_TABLES (sizeof(stats_doc_tables) / sizeof(stats_doc_tables[0]))

#endif

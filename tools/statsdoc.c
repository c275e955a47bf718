/* SPDX-License-Identifier: GPL-2.0-only */
/* Print docs/stats.md's table of statistics from the descriptors (`make stats-doc`). */
#include <stdio.h>

#include "tools/stats_tables.h"

/* What the tables' sources link against in the hypervisor; the doc calls none of it. */
uint64_t tsc_khz = 1000000;
const struct device *const builtin_devices[BUILTIN_DEVICE_COUNT]; /* npf_exits' slot names */

void kprintf(const char *fmt, ...)
{
    (void)fmt;
}

bool ktryprintf(const char *fmt, ...)
{
    (void)fmt;
    return true;
}

static void print_line(const char *text, void *ctx)
{
    fprintf(ctx, "%s\n", text);
}

int main(void)
{
    stats_doc(stats_doc_tables, STATS_DOC_TABLES, print_line, stdout);
    return 0;
}

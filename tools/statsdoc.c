/* Print docs/stats.md's table of statistics from the descriptors (`make stats-doc`). */
#include <stdio.h>

#include "stats/stats.h"

static void print_line(const char *text, void *ctx)
{
    fprintf(ctx, "%s\n", text);
}

int main(void)
{
    stats_doc(print_line, stdout);
    return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * haltreplay MAX GROW GROW_START < RECORDS: what each halt-polling policy
 * would have done over a recording of halts. tools/haltreplay.py extracts
 * the records from a console log's trace=halt lines, one halt a line:
 *   vcpu ns window valid opted_out cpu_wanted
 * (struct halt_record, the flags 0 or 1), runs this and prints the table.
 * Prints one `@haltreplay {json}` line per policy, with MAX as the maximum
 * (halt_poll_ns) and KVM's GROW and GROW_START.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/halt_replay.h"

/* The policies docs/halt_polling.md measures live, by the names tools/haltreplay.py gives them. */
static const struct {
    const char *name;
    unsigned mode;
    uint64_t shrink;
    bool off;
} policies[] = {
    {"none", HALT_POLL_ADAPTIVE, 2, true},
    {"fixed", HALT_POLL_FIXED, 2, false},
    {"adaptive-shrink0", HALT_POLL_ADAPTIVE, 0, false},
    {"adaptive", HALT_POLL_ADAPTIVE, 2, false},
    {"predict", HALT_POLL_PREDICT, 2, false},
};

static struct halt_record *read_records(size_t *count)
{
    size_t n = 0, cap = 1024;
    struct halt_record *r = malloc(cap * sizeof(*r));
    unsigned vcpu, valid, opted_out, cpu_wanted;
    uint64_t ns, window;
    while (r && scanf("%u %" SCNu64 " %" SCNu64 " %u %u %u", &vcpu, &ns, &window, &valid,
                      &opted_out, &cpu_wanted) == 6) {
        if (n == cap) {
            struct halt_record *more = realloc(r, (cap *= 2) * sizeof(*r));
            if (!more)
                free(r);
            r = more;
            if (!r)
                break;
        }
        r[n++] = (struct halt_record){vcpu, ns, window, valid, opted_out, cpu_wanted};
    }
    if (r && !feof(stdin)) {
        fprintf(stderr,
                "haltreplay: record %zu is not `vcpu ns window valid opted_out "
                "cpu_wanted`\n",
                n + 1);
        free(r);
        return NULL;
    }
    *count = n;
    return r;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: haltreplay MAX GROW GROW_START < records\n");
        return 2;
    }
    uint64_t max = strtoull(argv[1], NULL, 0);
    size_t n;
    struct halt_record *r = read_records(&n);
    if (!r)
        return 1;
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
        struct halt_poll_params p = {
            .max_ns = policies[i].off ? 0 : max,
            .grow = strtoull(argv[2], NULL, 0),
            .grow_start = strtoull(argv[3], NULL, 0),
            .shrink = policies[i].shrink,
            .mode = policies[i].mode,
        };
        struct halt_replay_result o;
        if (!halt_replay(r, n, &p, p.max_ns, &o)) {
            fprintf(stderr, "haltreplay: out of memory\n");
            return 1;
        }
        printf("@haltreplay {\"policy\":\"%s\",\"max_ns\":%" PRIu64 ",\"halts\":%" PRIu64
               ",\"polls\":%" PRIu64 ",\"caught\":%" PRIu64 ",\"blocked\":%" PRIu64
               ",\"poll_ns\":%" PRIu64 ",\"wasted_ns\":%" PRIu64 ",\"compared\":%" PRIu64
               ",\"same_window\":%" PRIu64 "}\n",
               policies[i].name, p.max_ns, o.halts, o.polls, o.caught, o.blocked, o.poll_ns,
               o.wasted_ns, o.compared, o.same_window);
    }
    free(r);
    return 0;
}

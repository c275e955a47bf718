/* SPDX-License-Identifier: GPL-2.0-only */
#include "tools/halt_replay.h"

#include <stdlib.h>
#include <string.h>

bool halt_replay(const struct halt_record *r, size_t n, const struct halt_poll_params *p,
                 uint64_t max, struct halt_replay_result *out)
{
    unsigned vcpus = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].vcpu >= vcpus)
            vcpus = r[i].vcpu + 1;
    struct halt_poll *hp = calloc(vcpus ? vcpus : 1, sizeof(*hp));
    if (!hp)
        return false;
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        const struct halt_record *h = &r[i];
        struct halt_poll *v = &hp[h->vcpu];
        out->halts++;
        /* As vcpu_halt and vcpu_halt_finish: an opted-out guest's window is left alone, and a
         * halt that could not poll still adjusts it. */
        if (h->opted_out) {
            out->blocked++;
            continue;
        }
        uint64_t window = 0;
        if (!h->cpu_wanted) {
            struct halt_poll_change c;
            window = halt_poll_begin(v, p, max, &c);
            out->compared++;
            out->same_window += window == h->window_ns;
        }
        if (window) {
            out->polls++;
            if (h->ns <= window) {
                out->caught++;
                out->poll_ns += h->ns;
            } else {
                out->poll_ns += window;
                out->wasted_ns += window;
            }
        }
        if (!window || h->ns > window)
            out->blocked++;
        halt_poll_end(v, p, max, h->ns, h->valid);
    }
    free(hp);
    return true;
}

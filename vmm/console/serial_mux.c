/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/console/serial_mux.h"

void serial_mux_init(struct serial_mux *m)
{
    m->vm = -1;
    m->escaped = false;
}

static struct serial_mux_result to_owner(const struct serial_mux *m, char c)
{
    if (m->vm < 0)
        return (struct serial_mux_result){MUX_KEY, -1, c};
    return (struct serial_mux_result){MUX_GUEST, m->vm, c};
}

struct serial_mux_result serial_mux_feed(struct serial_mux *m, char c)
{
    if (!m->escaped) {
        if (c == SERIAL_MUX_ESCAPE) {
            m->escaped = true;
            return (struct serial_mux_result){MUX_PENDING, m->vm, c};
        }
        return to_owner(m, c);
    }
    m->escaped = false;
    if (c >= '0' && c <= '9') {
        m->vm = c - '0';
        return (struct serial_mux_result){MUX_SELECT_VM, m->vm, c};
    }
    if (c == 'c') {
        m->vm = -1;
        return (struct serial_mux_result){MUX_SELECT_KEYS, -1, c};
    }
    if (c == SERIAL_MUX_ESCAPE)
        return to_owner(m, c);
    return (struct serial_mux_result){MUX_DROPPED, m->vm, c};
}

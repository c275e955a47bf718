/* SPDX-License-Identifier: GPL-2.0-only */
/* Bochs' shutdown port, 0x8900: the bytes "Shutdown" written one at a time stop the VM (code 0). */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vm.h"

static const char shutdown_string[] = "Shutdown";

struct shutdown_port {
    uint8_t match; /* bytes of "Shutdown" seen */
};

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    struct shutdown_port *s = d->state;
    if (a->size != 1)
        return DEV_NOT_MINE;
    uint8_t c = (uint8_t)a->value;
    /* Match "Shutdown" byte by byte, restarting on a mismatch. */
    if (c != shutdown_string[s->match])
        s->match = c == shutdown_string[0];
    else if (++s->match == sizeof(shutdown_string) - 1)
        vm_request_stop(d->vm, 0, "shutdown-port");
    return DEV_DONE;
}

static void reset(struct dev_entry *d)
{
    ((struct shutdown_port *)d->state)->match = 0;
}

static const struct dev_range port[] = {{SHUTDOWN_PORT, SHUTDOWN_PORT}};

const struct device shutdown_port_device = {
    .name = "shutdown-port",
    .ports = {port, 1, 0, port_write},
    .state_size = sizeof(struct shutdown_port),
    .reset = reset,
};

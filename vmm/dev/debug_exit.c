/* SPDX-License-Identifier: GPL-2.0-only */
/* isa-debug-exit on port 0xf4: a write of any width stops the VM with the value as its code. */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vm.h"

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    vm_request_stop(d->vm, (int64_t)a->value, "debug-exit");
    return DEV_DONE;
}

static const struct dev_range port[] = {{DEBUG_EXIT_PORT, DEBUG_EXIT_PORT}};

const struct device debug_exit_device = {
    .name = "debug-exit", .ports = {port, 1, 0, port_write}, /* reads are unhandled I/O */
};

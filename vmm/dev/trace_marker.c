/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The trace marker on port 0x560 (abi/trace_marker.h): a guest's byte write
 * opens (1) or closes (0) its VM's trace capture window, recorded in the
 * VM's trace ring (vmm/console/trace.h), and prints a round of the VM's
 * statistics records, so that a tool can take the window's counts as the
 * difference of two rounds (docs/console.md). Other widths are not the
 * device's.
 */
#include "abi/trace_marker.h"
#include "vmm/console/trace.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vm.h"
#include "vmm/vmm.h"

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    if (a->size != 1)
        return DEV_NOT_MINE;
    trace_marker(d->vm, v->hw.id, (uint8_t)a->value);
    vmm_report_vm(d->vm, false);
    return DEV_DONE;
}

static const struct dev_range port[] = {{TRACE_MARKER_PORT, TRACE_MARKER_PORT}};

const struct device trace_marker_device = {
    .name = "trace-marker", .ports = {port, 1, 0, port_write}, /* reads are unhandled I/O */
};

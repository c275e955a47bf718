/* SPDX-License-Identifier: GPL-2.0-only */
/* The built-in devices (vmm/dev/device.h), every VM's table built from this list. */
#include "vmm/dev/builtin.h"

const struct device *const builtin_devices[] = {
    &com1_device,         &debug_exit_device, &shutdown_port_device, &fwcfg_device,
    &pic_masks_device,    &pci_latch_device,  &acpi_pm_device,       &ioapic_device,
    &lapic_device,        &kvm_msrs_device,   &pc_msrs_device,       &mce_msrs_device,
    &trace_marker_device, &virtio_net_device, &virtio_blk_device,
};

const unsigned builtin_device_count = sizeof(builtin_devices) / sizeof(builtin_devices[0]);

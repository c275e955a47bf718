/* SPDX-License-Identifier: GPL-2.0-only */
/* The built-in devices (vmm/dev/device.h), every VM's table built from this list. */
#include "vmm/dev/builtin.h"

const struct device *const builtin_devices[] = {
    [BUILTIN_COM1] = &com1_device,
    [BUILTIN_DEBUG_EXIT] = &debug_exit_device,
    [BUILTIN_SHUTDOWN_PORT] = &shutdown_port_device,
    [BUILTIN_FWCFG] = &fwcfg_device,
    [BUILTIN_PIC_MASKS] = &pic_masks_device,
    [BUILTIN_PIC] = &pic_device,
    [BUILTIN_PIT] = &pit_device,
    [BUILTIN_PCI_LATCH] = &pci_latch_device,
    [BUILTIN_ACPI_PM] = &acpi_pm_device,
    [BUILTIN_IOAPIC] = &ioapic_device,
    [BUILTIN_LAPIC] = &lapic_device,
    [BUILTIN_KVM_MSRS] = &kvm_msrs_device,
    [BUILTIN_PC_MSRS] = &pc_msrs_device,
    [BUILTIN_MCE_MSRS] = &mce_msrs_device,
    [BUILTIN_CPU_MSRS] = &cpu_msrs_device,
    [BUILTIN_TRACE_MARKER] = &trace_marker_device,
    [BUILTIN_VIRTIO_NET] = &virtio_net_device,
    [BUILTIN_VIRTIO_BLK] = &virtio_blk_device,
};

_Static_assert(sizeof(builtin_devices) / sizeof(builtin_devices[0]) == BUILTIN_DEVICE_COUNT,
               "a name in enum builtin_device for every built-in device");

const unsigned builtin_device_count = BUILTIN_DEVICE_COUNT;

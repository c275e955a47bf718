/* SPDX-License-Identifier: GPL-2.0-only */
/* The built-in devices, one file each under vmm/dev/ (docs/architecture.md). */
#ifndef POLLUX_VMM_DEV_BUILTIN_H
#define POLLUX_VMM_DEV_BUILTIN_H

#include "vmm/dev/device.h"

#define DEBUG_EXIT_PORT 0xf4
#define SHUTDOWN_PORT   0x8900

extern const struct device com1_device;          /* 0x3f8-0x3ff, the 16550 */
extern const struct device debug_exit_device;    /* 0xf4, isa-debug-exit */
extern const struct device shutdown_port_device; /* 0x8900, "Shutdown" */
extern const struct device trace_marker_device;  /* 0x560, the trace capture window */
extern const struct device fwcfg_device;         /* 0x510-0x511 */
extern const struct device pic_masks_device;     /* 0x20-0x21, 0xa0-0xa1 (legacy_pic=off) */
extern const struct device pic_device;           /* the 8259s, + 0x4d0-0x4d1 (legacy_pic=on) */
extern const struct device pit_device;           /* the 8254: 0x40-0x43, 0x61 (legacy_pic=on) */
extern const struct device pci_latch_device;     /* 0xcf8, 0xcfc-0xcff (PC VMs) */
extern const struct device acpi_pm_device;       /* 0x600-0x601, 0xcf9, 0x64 (PC VMs) */
extern const struct device ioapic_device;        /* IOAPIC_BASE (unless ioapic=off) */
extern const struct device lapic_device;         /* per vCPU: the xAPIC page, the x2APIC MSRs */
extern const struct device kvm_msrs_device;      /* per vCPU: 0x4b564d00-0x4b564dff */
extern const struct device pc_msrs_device;       /* per vCPU: the MTRRs, AMD's 0xc001xxxx */
extern const struct device mce_msrs_device;      /* per vCPU: the machine-check bank */
extern const struct device cpu_msrs_device;      /* the TSC, guest_msrs.c's, a boot allow-list */
extern const struct device virtio_blk_device;    /* virtio slot VIRTIO_SLOT_BLK (disk= VMs) */
extern const struct device virtio_net_device;    /* virtio slot VIRTIO_SLOT_NET (net= VMs) */

/*
 * Their places in builtin_devices[], in creation order: a table entry's
 * `index` (vmm/dev/device.h), and so the slot of a device's nested page
 * faults in the statistics (vcpu_stats.npf_exits).
 */
enum builtin_device {
    BUILTIN_COM1,
    BUILTIN_DEBUG_EXIT,
    BUILTIN_SHUTDOWN_PORT,
    BUILTIN_FWCFG,
    BUILTIN_PIC_MASKS,
    BUILTIN_PIC,
    BUILTIN_PIT,
    BUILTIN_PCI_LATCH,
    BUILTIN_ACPI_PM,
    BUILTIN_IOAPIC,
    BUILTIN_LAPIC,
    BUILTIN_KVM_MSRS,
    BUILTIN_PC_MSRS,
    BUILTIN_MCE_MSRS,
    BUILTIN_CPU_MSRS,
    BUILTIN_TRACE_MARKER,
    BUILTIN_VIRTIO_NET,
    BUILTIN_VIRTIO_BLK,
    BUILTIN_DEVICE_COUNT
};

#endif

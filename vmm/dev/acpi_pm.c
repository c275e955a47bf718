/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The platform's power controls (docs/linux.md), PC VMs only, byte accesses:
 * the FADT's SLEEP_CONTROL register entering S5 powers off; SLEEP_STATUS
 * reads 0 (write-one-to-clear bits, none ever set); the ACPI reset register
 * (0xCF9, bit 2) and the keyboard controller's reset pulse (0xFE to 0x64)
 * reset, which stops the VM with VM_REBOOT_CODE.
 */
#include "vmm/load/acpi_tables.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vm.h"

#define KBC_COMMAND         0x64
#define KBC_PULSE_RESET     0xfe
#define RESET_CONTROL_RESET 0x04 /* 0xCF9 bit 2: reset now (0x06 warm, 0x0E cold) */

static enum dev_result port_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d, (void)v;
    if (a->addr != ACPI_SLEEP_STATUS_PORT || a->size != 1)
        return DEV_NOT_MINE;
    a->value = 0;
    return DEV_DONE;
}

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->size != 1)
        return DEV_NOT_MINE;
    uint64_t value = a->value;
    switch (a->addr) {
    case ACPI_SLEEP_CONTROL_PORT:
        if ((value & ACPI_SLP_EN) && ACPI_SLP_TYP(value) == ACPI_S5_SLP_TYP)
            vm_request_stop(d->vm, 0, "poweroff");
        return DEV_DONE;
    case ACPI_SLEEP_STATUS_PORT:
        return DEV_DONE;
    case ACPI_RESET_PORT:
        if (value & RESET_CONTROL_RESET)
            vm_request_stop(d->vm, VM_REBOOT_CODE, "reboot");
        return DEV_DONE;
    default: /* KBC_COMMAND: only the reset pulse */
        if (value != KBC_PULSE_RESET)
            return DEV_NOT_MINE;
        vm_request_stop(d->vm, VM_REBOOT_CODE, "reboot");
        return DEV_DONE;
    }
}

static bool present(const struct vm *vm)
{
    return vm->pc_platform;
}

static const struct dev_range ports[] = {{KBC_COMMAND, KBC_COMMAND},
                                         {ACPI_SLEEP_CONTROL_PORT, ACPI_SLEEP_STATUS_PORT},
                                         {ACPI_RESET_PORT, ACPI_RESET_PORT}};

const struct device acpi_pm_device = {
    .name = "acpi-pm",
    .present = present,
    .ports = {ports, 3, port_read, port_write},
};

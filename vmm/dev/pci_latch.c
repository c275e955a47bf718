/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The PC's PCI configuration mechanism #1, with no device behind it: 0xCF8
 * latches a 32-bit address, the data window 0xCFC-0xCFF reads all ones and
 * drops writes at any width. PC VMs (Linux guests) only.
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vm.h"

#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA    0xcfc

struct pci_latch {
    uint32_t address;
};

static enum dev_result port_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->addr >= PCI_CONFIG_DATA) {
        a->value = 0xffffffffu;
        return DEV_DONE;
    }
    if (a->size != 4)
        return DEV_NOT_MINE;
    a->value = ((struct pci_latch *)d->state)->address;
    return DEV_DONE;
}

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->addr >= PCI_CONFIG_DATA)
        return DEV_DONE;
    if (a->size != 4)
        return DEV_NOT_MINE;
    ((struct pci_latch *)d->state)->address = (uint32_t)a->value;
    return DEV_DONE;
}

static void reset(struct dev_entry *d)
{
    ((struct pci_latch *)d->state)->address = 0;
}

static bool present(const struct vm *vm)
{
    return vm->pc_platform;
}

/* 0xCF9 between them is the ACPI reset register (vmm/dev/acpi_pm.c). */
static const struct dev_range ports[] = {{PCI_CONFIG_ADDRESS, PCI_CONFIG_ADDRESS},
                                         {PCI_CONFIG_DATA, PCI_CONFIG_DATA + 3}};

const struct device pci_latch_device = {
    .name = "pci-latch",
    .present = present,
    .ports = {ports, 2, port_read, port_write},
    .state_size = sizeof(struct pci_latch),
    .reset = reset,
};

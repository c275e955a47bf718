/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/fwcfg.h"

#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vm.h"

#define KEY_SIGNATURE 0x00
#define KEY_RAM_SIZE  0x03
#define KEY_NB_CPUS   0x05

void fwcfg_init(struct fwcfg *f, uint64_t ram_size, uint16_t ncpus)
{
    f->key = 0;
    f->offset = 0;
    f->ram_size = ram_size;
    f->ncpus = ncpus;
}

void fwcfg_select(struct fwcfg *f, uint16_t key)
{
    f->key = key;
    f->offset = 0;
}

uint8_t fwcfg_read(struct fwcfg *f)
{
    uint32_t i = f->offset++;
    switch (f->key) {
    case KEY_SIGNATURE:
        return i < 4 ? (uint8_t) "QEMU"[i] : 0;
    case KEY_RAM_SIZE:
        return i < 8 ? (uint8_t)(f->ram_size >> (8 * i)) : 0;
    case KEY_NB_CPUS:
        return i < 2 ? (uint8_t)(f->ncpus >> (8 * i)) : 0;
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- the device */

static enum dev_result port_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->addr != FWCFG_PORT_DATA || a->size != 1)
        return DEV_NOT_MINE;
    a->value = fwcfg_read(d->state);
    return DEV_DONE;
}

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->addr != FWCFG_PORT_SELECTOR || a->size != 2)
        return DEV_NOT_MINE;
    fwcfg_select(d->state, (uint16_t)a->value);
    return DEV_DONE;
}

static void reset(struct dev_entry *d)
{
    fwcfg_init(d->state, d->vm->cfg.mem, (uint16_t)d->vm->cfg.vcpus);
}

static const struct dev_range ports[] = {{FWCFG_PORT_SELECTOR, FWCFG_PORT_DATA}};

const struct device fwcfg_device = {
    .name = "fw-cfg",
    .ports = {ports, 1, port_read, port_write},
    .state_size = sizeof(struct fwcfg),
    .reset = reset,
};

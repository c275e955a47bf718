/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The legacy PICs of a legacy_pic=off VM (0x20/0x21, 0xa0/0xa1): the data
 * ports hold the interrupt masks, the command ports read 0 and take their
 * programming; nothing is ever delivered through them. Byte accesses only.
 * A legacy_pic=on VM has the 8259s themselves (vmm/dev/pic.c) instead.
 */
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/vm.h"

#define PIC_MASTER 0x20
#define PIC_SLAVE  0xa0

struct pic_masks {
    uint8_t imr[2];
};

static uint8_t *mask_of(struct dev_entry *d, uint64_t port)
{
    return &((struct pic_masks *)d->state)->imr[port >= PIC_SLAVE];
}

static enum dev_result port_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->size != 1)
        return DEV_NOT_MINE;
    a->value = (a->addr & 1) ? *mask_of(d, a->addr) : 0;
    return DEV_DONE;
}

static enum dev_result port_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)v;
    if (a->size != 1)
        return DEV_NOT_MINE;
    if (a->addr & 1)
        *mask_of(d, a->addr) = (uint8_t)a->value;
    return DEV_DONE;
}

static void reset(struct dev_entry *d)
{
    struct pic_masks *p = d->state;
    p->imr[0] = p->imr[1] = 0;
}

static bool present(const struct vm *vm)
{
    return !vm->cfg.legacy_pic;
}

static const struct dev_range ports[] = {{PIC_MASTER, PIC_MASTER + 1}, {PIC_SLAVE, PIC_SLAVE + 1}};

const struct device pic_masks_device = {
    .name = "pic-masks",
    .present = present,
    .ports = {ports, 2, port_read, port_write},
    .state_size = sizeof(struct pic_masks),
    .reset = reset,
};

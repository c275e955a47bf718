/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/io.h"

#include "vmm/dev/device.h"

uint32_t io_read_other(struct vcpu *v, uint16_t port, unsigned size)
{
    uint32_t value;
    if (vm_devices_port(v, port, size, false, &value) == DEV_DONE)
        return value;
    v->vm->unhandled_io_reads++;
    return 0xffffffffu;
}

bool io_write(struct vcpu *v, uint16_t port, unsigned size, uint32_t value)
{
    enum dev_result r = vm_devices_port(v, port, size, true, &value);
    if (r == DEV_NOT_MINE)
        v->vm->unhandled_io_writes++;
    return r != DEV_AGAIN;
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/mmio.h"

#include "arch/x86/guest_regs.h"
#include "vmm/exit/guest_access.h"

bool mmio_fetch(struct vcpu *v, const struct exit_record *e, const char *what, struct mmio_op *op)
{
    uint8_t bytes[INSN_MAX] = {0};
    int mode;
    uint64_t la;
    size_t avail = vcpu_fetch_insn(v, bytes, &mode, &la);
    if (avail && !mmio_decode(bytes, avail, mode, op))
        return true;
    vm_fail(v, "bad-state",
            "cannot decode the access to %s at guest-physical 0x%lx: bytes %02x %02x %02x %02x",
            what, e->npf.gpa, bytes[0], bytes[1], bytes[2], bytes[3]);
    return false;
}

uint64_t mmio_store_data(struct vcpu *v, const struct mmio_op *op)
{
    return mmio_store_value(op, *guest_gpr(&v->hw.regs, mmio_op_gpr(op)));
}

void mmio_load_done(struct vcpu *v, const struct mmio_op *op, uint64_t value)
{
    uint64_t *reg = guest_gpr(&v->hw.regs, mmio_op_gpr(op));
    *reg = mmio_load_merge(op, *reg, value);
}

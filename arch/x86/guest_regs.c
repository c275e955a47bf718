/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/guest_regs.h"

#include "arch/x86/virt.h"

uint64_t *guest_gpr(struct guest_regs *r, unsigned gpr)
{
    switch (gpr & 0xf) {
    case 0:
        return &r->rax;
    case 1:
        return &r->rcx;
    case 2:
        return &r->rdx;
    case 3:
        return &r->rbx;
    case 4:
        return &r->rsp;
    case 5:
        return &r->rbp;
    case 6:
        return &r->rsi;
    case 7:
        return &r->rdi;
    case 8:
        return &r->r8;
    case 9:
        return &r->r9;
    case 10:
        return &r->r10;
    case 11:
        return &r->r11;
    case 12:
        return &r->r12;
    case 13:
        return &r->r13;
    case 14:
        return &r->r14;
    default:
        return &r->r15;
    }
}

#include "vmm/hypercall.h"

#include "vmm/vm.h"

unsigned long vmm_hypercall(struct vcpu *v)
{
    struct guest_mode m;
    virt->get_mode(v, &m);
    if (m.cpl != 0)
        return HC_EPERM;
    uint32_t nr = (uint32_t)v->regs.rax;
    uint32_t a = (uint32_t)v->regs.rbx, b = (uint32_t)v->regs.rcx;
    switch (nr) {
    case HC_EXIT:
        vm_request_stop(v->vm, a, "hypercall");
        return HC_OK;
    case HC_PUTS: {
        const char *s = b <= HC_PUTS_MAX ? vm_gpa_ptr(v->vm, a, b) : 0;
        if (!s)
            return HC_EFAULT;
        vuart_puts(&v->vm->uart, s, b);
        return HC_OK;
    }
    case HC_NOP:
        return HC_OK;
    case HC_HLT_EXITS:
        return v->stats.exits[EXIT_HLT] + v->stats.exits[EXIT_IDLE_HLT];
    default:
        return HC_ENOSYS;
    }
}

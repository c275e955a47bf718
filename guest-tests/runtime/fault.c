/* SPDX-License-Identifier: GPL-2.0-only */
#include "guest-tests/runtime/fault.h"

volatile uint32_t fault_vector = NO_FAULT, fault_recover_eip, fault_eflags;

__attribute__((interrupt)) static void ud_handler(struct interrupt_frame *f)
{
    fault_vector = VECTOR_UD;
    fault_eflags = f->eflags;
    f->eip = fault_recover_eip;
}

__attribute__((interrupt)) static void gp_handler(struct interrupt_frame *f, unsigned long error)
{
    (void)error;
    fault_vector = VECTOR_GP;
    fault_eflags = f->eflags;
    f->eip = fault_recover_eip;
}

void fault_catch_install(void)
{
    set_interrupt_handler(VECTOR_UD, ud_handler);
    set_interrupt_handler(VECTOR_GP, gp_handler);
}

unsigned try_rdmsr(uint32_t msr, uint64_t *value)
{
    uint32_t lo = 0, hi = 0;
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\trdmsr\n1:"
                     : "+a"(lo), "+d"(hi), [rec] "=m"(fault_recover_eip)
                     : "c"(msr)
                     : "memory");
    *value = (uint64_t)hi << 32 | lo;
    return fault_vector;
}

unsigned try_wrmsr(uint32_t msr, uint64_t value)
{
    fault_vector = NO_FAULT;
    __asm__ volatile("movl $1f, %[rec]\n\twrmsr\n1:"
                     : [rec] "=m"(fault_recover_eip)
                     : "c"(msr), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
                     : "memory");
    return fault_vector;
}

const char *fault_name(unsigned v)
{
    return v == NO_FAULT ? "no fault" : v == VECTOR_UD ? "#UD" : v == VECTOR_GP ? "#GP" : "?";
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VMX instructions, inline. Only these helpers execute VMREAD and
 * VMWRITE (vmentry.S aside, which writes HOST_RSP): the counting build
 * counts every access there (arch/x86/exit_counts.h).
 */
#ifndef POLLUX_BACKEND_VMX_VMX_INSN_H
#define POLLUX_BACKEND_VMX_VMX_INSN_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/exit_count.h"

/* Reports a failed VMREAD or VMWRITE on the console (vmx_vmcs.c). */
__attribute__((noinline, cold)) void vmx_field_error(const char *insn, uint32_t field);

/* VMREAD/VMWRITE fail only on a pollux bug (no current VMCS, a field the CPU lacks). */
static inline uint64_t vmread(uint32_t field)
{
    uint64_t v;
    exit_count(EXIT_COUNT_VMREAD);
    __asm__ goto("vmread %1, %0; jbe %l[fail]" : "=r"(v) : "r"((uint64_t)field) : "cc" : fail);
    return v;
fail:
    vmx_field_error("VMREAD", field);
    return 0;
}

static inline void vmwrite(uint32_t field, uint64_t v)
{
    exit_count(EXIT_COUNT_VMWRITE);
    __asm__ goto("vmwrite %1, %0; jbe %l[fail]" ::"r"((uint64_t)field), "rm"(v)
                 : "cc", "memory"
                 : fail);
    return;
fail:
    vmx_field_error("VMWRITE", field);
}

/*
 * VMREAD and VMWRITE that cannot fail, without the check: the VMCS is known
 * current (the exit path, right after its VM exit, which leaves the current
 * VMCS as it was; or after loaded()) and the field is one every VMX CPU has
 * (the exit reason, qualification and length, the guest's RIP, RSP, RFLAGS,
 * SS access rights and interruptibility state), writable for VMWRITE.
 * VMfailInvalid needs no current VMCS, VMfailValid a field the CPU lacks or
 * a read-only one. The exit fast path makes several of these per exit.
 */
static inline uint64_t vmread_nofail(uint32_t field)
{
    uint64_t v;
    exit_count(EXIT_COUNT_VMREAD);
    __asm__ volatile("vmread %1, %0" : "=r"(v) : "r"((uint64_t)field) : "cc");
    return v;
}

static inline void vmwrite_nofail(uint32_t field, uint64_t v)
{
    exit_count(EXIT_COUNT_VMWRITE);
    __asm__ volatile("vmwrite %1, %0" ::"r"((uint64_t)field), "rm"(v) : "cc", "memory");
}

#define DEFINE_VMX_PTR_INSN(name)                                                                  \
    static inline bool name(uint64_t pa)                                                           \
    {                                                                                              \
        bool fail;                                                                                 \
        __asm__ volatile(#name " %1; setna %0" : "=q"(fail) : "m"(pa) : "cc", "memory");           \
        return !fail;                                                                              \
    }
DEFINE_VMX_PTR_INSN(vmxon)
DEFINE_VMX_PTR_INSN(vmclear)
DEFINE_VMX_PTR_INSN(vmptrld)
#undef DEFINE_VMX_PTR_INSN

static inline void invept(unsigned type, uint64_t eptp)
{
    struct {
        uint64_t eptp, zero;
    } d = {eptp, 0};
    __asm__ volatile("invept %0, %1" ::"m"(d), "r"((uint64_t)type) : "cc", "memory");
}

static inline void invvpid(unsigned type, uint16_t vpid)
{
    struct {
        uint64_t vpid, linear;
    } d = {vpid, 0};
    __asm__ volatile("invvpid %0, %1" ::"m"(d), "r"((uint64_t)type) : "cc", "memory");
}

#endif

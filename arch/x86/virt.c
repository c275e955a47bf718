/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/virt.h"

#include <stddef.h>

#include "arch/x86/guest_regs.h"
#include "arch/x86/percpu.h"
#include "drivers/console.h"

#define CHECK_OFFSET(field, off)                                                                   \
    _Static_assert(offsetof(struct guest_regs, field) == (off), "guest_regs." #field)
CHECK_OFFSET(rax, GUEST_RAX);
CHECK_OFFSET(rbx, GUEST_RBX);
CHECK_OFFSET(rcx, GUEST_RCX);
CHECK_OFFSET(rdx, GUEST_RDX);
CHECK_OFFSET(rsi, GUEST_RSI);
CHECK_OFFSET(rdi, GUEST_RDI);
CHECK_OFFSET(rbp, GUEST_RBP);
CHECK_OFFSET(r8, GUEST_R8);
CHECK_OFFSET(r9, GUEST_R9);
CHECK_OFFSET(r10, GUEST_R10);
CHECK_OFFSET(r11, GUEST_R11);
CHECK_OFFSET(r12, GUEST_R12);
CHECK_OFFSET(r13, GUEST_R13);
CHECK_OFFSET(r14, GUEST_R14);
CHECK_OFFSET(r15, GUEST_R15);

const struct virt_ops *virt;
struct virt_features virt_features;

static const char *const reason_names[EXIT_REASON_COUNT] = {
    [EXIT_NONE] = "none",
    [EXIT_CPUID] = "cpuid",
    [EXIT_HLT] = "hlt",
    [EXIT_IDLE_HLT] = "idle_hlt",
    [EXIT_PAUSE] = "pause",
    [EXIT_IO] = "io",
    [EXIT_MSR_READ] = "msr_read",
    [EXIT_MSR_WRITE] = "msr_write",
    [EXIT_NESTED_PAGE_FAULT] = "npf",
    [EXIT_HYPERCALL] = "hypercall",
    [EXIT_EXTERNAL_INTERRUPT] = "external_interrupt",
    [EXIT_NMI] = "nmi",
    [EXIT_INTERRUPT_WINDOW] = "interrupt_window",
    [EXIT_PREEMPTION_TIMER] = "preemption_timer",
    [EXIT_SHUTDOWN] = "shutdown",
    [EXIT_INIT] = "init",
    [EXIT_SIPI] = "sipi",
    [EXIT_INVD] = "invd",
    [EXIT_WBINVD] = "wbinvd",
    [EXIT_XSETBV] = "xsetbv",
    [EXIT_CR8] = "cr8",
    [EXIT_UNDEFINED] = "undefined_instruction",
    [EXIT_ENTRY_FAILED] = "entry_failed",
    [EXIT_UNKNOWN] = "unknown",
};

const char *exit_reason_name(enum exit_reason r)
{
    return (unsigned)r < EXIT_REASON_COUNT ? reason_names[r] : "?";
}

void virt_select(const struct virt_features *f, const struct virt_ops *ops)
{
    virt_features = *f;
    virt = ops;
}

bool virt_cpu_enable(void)
{
    if (!virt)
        return false;
    char err[128];
    if (virt->cpu_enable(err, sizeof(err))) {
        kprintf("pollux: cpu %u: cannot enable %s: %s\n", this_cpu()->cpu, virt->name, err);
        return false;
    }
    return true;
}

#include "arch/x86/virt.h"

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
    [EXIT_UNDEFINED] = "undefined_instruction",
    [EXIT_ENTRY_FAILED] = "entry_failed",
    [EXIT_UNKNOWN] = "unknown",
};

const char *exit_reason_name(enum exit_reason r)
{
    return (unsigned)r < EXIT_REASON_COUNT ? reason_names[r] : "?";
}

void virt_select(const struct virt_features *f)
{
    virt_features = *f;
    virt = f->backend == VIRT_SVM ? &svm_ops : f->backend == VIRT_VMX ? &vmx_ops : 0;
}

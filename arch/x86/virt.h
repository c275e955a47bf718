/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The vendor seam: everything above arch/x86 drives SVM or VMX through this
 * ops table and receives exits as a vendor-neutral record. One backend is
 * chosen at boot (virt_select); vmm/ and sched/ include only this header.
 */
#ifndef POLLUX_ARCH_X86_VIRT_H
#define POLLUX_ARCH_X86_VIRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/features.h"

struct virt_vm;
struct virt_vcpu;

/* Common exit reasons; vmm/ dispatches on these through a table. */
enum exit_reason {
    EXIT_NONE, /* nothing to handle (e.g. a host interrupt was taken) */
    EXIT_CPUID,
    EXIT_HLT,
    EXIT_IDLE_HLT,
    EXIT_PAUSE,
    EXIT_IO,
    EXIT_MSR_READ,
    EXIT_MSR_WRITE,
    EXIT_NESTED_PAGE_FAULT,
    EXIT_HYPERCALL,
    EXIT_EXTERNAL_INTERRUPT,
    EXIT_NMI,
    EXIT_INTERRUPT_WINDOW,
    EXIT_PREEMPTION_TIMER,
    EXIT_SHUTDOWN, /* triple fault */
    EXIT_INIT,
    EXIT_SIPI,
    EXIT_INVD,
    EXIT_WBINVD,
    EXIT_XSETBV,
    EXIT_CR8, /* MOV to/from CR8, the guest's task priority (VMX; SVM: writes while intercepted) */
    EXIT_UNDEFINED,    /* an instruction pollux refuses: the guest gets #UD */
    EXIT_ENTRY_FAILED, /* the CPU refused the guest state */
    EXIT_UNKNOWN,      /* a vendor exit pollux does not expect */
    EXIT_REASON_COUNT
};

const char *exit_reason_name(enum exit_reason r);

/* Instructions whose exits may arrive without a length (arch/x86/insn.h kinds). */
struct exit_record {
    enum exit_reason reason;
    uint64_t vendor_code; /* the raw exit code, for messages */
    unsigned insn_len;    /* 0 when the CPU did not say (SVM without NRIPS) */
    int insn_kind;        /* enum insn_kind of the exiting instruction, -1 if none */
    union {
        struct {
            uint16_t port;
            uint8_t size; /* 1, 2 or 4 */
            bool in, string;
        } io;
        struct {
            uint32_t index;
        } msr;
        struct {
            uint64_t gpa;
            bool write, fetch, present;
        } npf;
        struct {
            const char *what; /* the failed check, in words */
            uint64_t detail;
        } fail;
        struct {
            bool write;
            uint8_t gpr; /* x86 register number (guest_gpr()), or EXIT_GPR_UNKNOWN */
        } cr8;
        struct {
            uint8_t cpl; /* the caller's, for the privilege check */
        } hypercall;
    };
};

/* The CPU did not name the instruction's register (SVM without decode assists): vmm decodes it. */
#define EXIT_GPR_UNKNOWN 0xff

/* Guest general-purpose registers, plus the ones vendors keep elsewhere. */
struct guest_regs {
    uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rsp, rip, rflags;
};

/*
 * What a backend sees of a VM and of a vCPU: vmm/'s struct vm and struct
 * vcpu begin with these (their `hw` member), and the seam's operations take
 * them. Set at creation and fixed for the VM's life, but for the registers
 * and a vCPU's TSC offset.
 */
struct virt_vm {
    void *arch;        /* the vendor's: nested page tables */
    uint8_t *mem;      /* host pointer to guest-physical 0 */
    uint64_t mem_size; /* bytes of guest RAM from guest-physical 0 */
    const char *name;
};

struct virt_vcpu {
    struct guest_regs regs;
    void *arch; /* the vendor's context: VMCB or VMCS */
    struct virt_vm *vm;
    unsigned id;
    /* Guest TSC = host TSC + tsc_offset: set before vcpu_create, then on its own CPU only. */
    uint64_t tsc_offset;
};

/* Guest RAM at [gpa, gpa + len), or NULL where it is not all RAM. */
static inline void *virt_gpa_ptr(const struct virt_vm *vm, uint64_t gpa, uint64_t len)
{
    if (gpa >= vm->mem_size || len > vm->mem_size - gpa)
        return 0;
    return vm->mem + gpa;
}

/* What the page-table walker and the instruction decoder need to know. */
struct guest_mode {
    uint64_t cr0, cr3, cr4, efer;
    unsigned cpl;
    uint64_t cs_base;
    int code_bits; /* 16, 32 or 64 */
};

/*
 * What finding the bytes at CS:RIP needs, a smaller read than guest_mode's:
 * cr0, cs_base and code64 (CS is a 64-bit code segment) always; cr3, cr4 and
 * efer only when CR0.PG is set.
 */
struct guest_code_mode {
    uint64_t cr0, cs_base;
    bool code64;
    uint64_t cr3, cr4, efer;
};

enum msr_result { MSR_NOT_MINE, MSR_DONE, MSR_FAULT };

/* Which instruction-level intercept makes a guest's HLT exit (vmm/vcpu/hlt_intercept.h chooses). */
enum hlt_intercept {
    HLT_INTERCEPT_PLAIN, /* every HLT exits */
    HLT_INTERCEPT_IDLE,  /* AMD Idle HLT: only a HLT with no virtual interrupt or NMI pending */
};

/* How the CPU can make PAUSE exit (virt_ops.pause_hw). */
enum pause_hw {
    PAUSE_HW_NONE,          /* not at all */
    PAUSE_HW_EVERY,         /* only unconditional PAUSE exiting: every PAUSE exits */
    PAUSE_HW_LOOP,          /* VMX PAUSE-loop exiting (gap and window) */
    PAUSE_HW_FILTER,        /* SVM pause filter, count only */
    PAUSE_HW_FILTER_THRESH, /* SVM pause filter, count and threshold */
};

/* What set_pause_exiting asks for. */
enum pause_exiting {
    PAUSE_EXIT_NEVER,
    PAUSE_EXIT_EVERY,    /* unconditional PAUSE exiting */
    PAUSE_EXIT_FILTERED, /* PLE, or the pause filter: see set_pause_exiting */
};

enum fastpath_result {
    FASTPATH_NOT_MINE, /* the full path handles this exit */
    FASTPATH_HANDLED,  /* handled; the full path runs before the next entry */
    FASTPATH_REENTER,  /* handled; enter the guest again at once if the entry is plain */
};

struct virt_ops {
    const char *name;
    /* Per host CPU, before it runs any vCPU. */
    int (*cpu_enable)(char *err, size_t errlen);
    /* Nested page tables: create, map guest-physical to host-physical, free. */
    int (*vm_init)(struct virt_vm *vm);
    int (*vm_map)(struct virt_vm *vm, uint64_t gpa, uint64_t hpa, uint64_t len, unsigned perms);
    void (*vm_destroy)(struct virt_vm *vm);
    int (*vcpu_create)(struct virt_vcpu *v);
    void (*vcpu_destroy)(struct virt_vcpu *v);
    /* Multiboot entry state: 32-bit protected mode, flat segments, paging off. */
    void (*vcpu_reset_protected)(struct virt_vcpu *v, uint32_t entry);
    /*
     * Enter the guest with interrupts deliverable to the host; fill e on
     * exit. After every exit, before host interrupts are taken, it calls
     * fastpath_exit (vmm/exit/fastpath_exit.h) and, while that answers FASTPATH_REENTER and the
     * next entry only resumes the guest (nothing injected or re-injected, no
     * virtual interrupt offered to the CPU (SVM V_IRQ, including the one
     * that opens an interrupt window), no interrupt or NMI window armed),
     * enters the guest again at once (after fastpath_reentry, the exit's
     * time), doing only what such an entry needs.
     * It returns the last exit with fastpath_exit's answer for it, or
     * FASTPATH_HANDLED for a FASTPATH_REENTER whose entry was not plain.
     * While fastpath_exit handles an instruction's exit (CPUID, the
     * hypercall, RDMSR/WRMSR, port I/O), v->regs.rsp may be stale (VMX
     * leaves RSP unread): their handlers never use it. It holds the guest's
     * RSP at every other exit and once vcpu_run returns.
     */
    enum fastpath_result (*vcpu_run)(struct virt_vcpu *v, struct exit_record *e);
    /*
     * Around a series of vcpu_run calls on one CPU (vmm/vcpu/vcpu.c's vcpu_run),
     * host interrupts on: guest state the host never uses stays in the CPU
     * from load to put instead of being switched at every exit. Optional.
     */
    void (*vcpu_load)(struct virt_vcpu *v);
    void (*vcpu_put)(struct virt_vcpu *v);
    void (*inject_exception)(struct virt_vcpu *v, uint8_t vector, bool has_error, uint32_t error);
    void (*get_mode)(struct virt_vcpu *v, struct guest_mode *m);
    /*
     * For exits without an instruction length (SVM without NRIPS): the part
     * of get_mode the fetch of that instruction needs. NULL where exits
     * rarely lack one (VMX): vmm takes it from get_mode then.
     */
    void (*get_code_mode)(struct virt_vcpu *v, struct guest_code_mode *m);
    /*
     * After an instruction pollux emulated (RIP already past it): the
     * STI/MOV-SS shadow ends with it, and if the guest had RFLAGS.TF set the
     * single-step #DB (DR6.BS) follows it, as the CPU would have raised it.
     */
    void (*end_emulated_instruction)(struct virt_vcpu *v);
    /*
     * MSRs whose guest value lives in the VMCB/VMCS (EFER, PAT, segment bases, SYSCALL...).
     * Writes of linear addresses arrive checked canonical (vmm/dev/guest_msrs.c).
     */
    enum msr_result (*msr_read)(struct virt_vcpu *v, uint32_t index, uint64_t *value);
    enum msr_result (*msr_write)(struct virt_vcpu *v, uint32_t index, uint64_t value);
    /* For every vCPU reset from now on; PLAIN only where the CPU lacks Idle HLT. */
    void (*set_hlt_intercept)(enum hlt_intercept mode);
    enum pause_hw (*pause_hw)(void);
    /*
     * How PAUSE exits for v from its next entry on, kept across INIT and
     * startup-IPI resets. FILTERED: VMX PLE with ple_window = window and
     * ple_gap = gap; SVM's pause filter with count = window and threshold =
     * gap (0: count only). Never unconditional exiting together with PLE.
     */
    void (*set_pause_exiting)(struct virt_vcpu *v, enum pause_exiting mode, uint32_t window,
                              uint32_t gap);
    /* v->tsc_offset changed (on v's own CPU): the guest sees it from its next entry on. */
    void (*set_tsc_offset)(struct virt_vcpu *v);
    /*
     * A timer that counts only while the guest runs and forces
     * EXIT_PREEMPTION_TIMER once the host TSC reaches tsc_deadline (0
     * disarms). Returns false when the backend has none (SVM): the host's
     * local APIC timer serves instead.
     */
    bool (*set_preemption_timer)(struct virt_vcpu *v, uint64_t tsc_deadline);

    /*
     * Event delivery. vmm/ decides what to inject before each entry; these
     * say whether the guest can take it now and arrange for an exit
     * (EXIT_INTERRUPT_WINDOW) as soon as it can, if not.
     */
    /* RFLAGS.IF set, no STI/MOV-SS shadow, no event already queued for entry. */
    bool (*interrupt_allowed)(struct virt_vcpu *v);
    /* The STI/MOV-SS shadow covers the instruction at RIP. */
    bool (*in_interrupt_shadow)(struct virt_vcpu *v);
    void (*inject_interrupt)(struct virt_vcpu *v, uint8_t vector);
    void (*set_interrupt_window)(struct virt_vcpu *v, bool on);
    /*
     * Hand the vector (-1: none) to the CPU, which delivers it by itself as
     * soon as the guest can take it (SVM V_IRQ); the backend moves it from
     * IRR to ISR once the CPU took it. vmm offers only vectors deliverable
     * under the full PPR. False: the backend cannot (VMX, or an SVM CPU whose
     * V_IRQ priority check is wrong): vmm injects at entry instead. NULL on VMX.
     * tpr: the local APIC's TPR, which V_TPR carries (backend/svm/svm_intr.h).
     */
    bool (*offer_interrupt)(struct virt_vcpu *v, int vector, uint32_t tpr);
    /*
     * Before each entry, and after a TPR write the fast path handled: tpr is
     * the TPR's class (CR8), max_irr the highest IRR vector's class (-1:
     * none). Where the guest's MOV CR8 does not exit (SVM V_TPR), make its
     * writes exit (EXIT_CR8) while max_irr <= tpr, so that the write lowering
     * the TPR below a held-back vector delivers it at once. KVM's
     * update_cr8_intercept. NULL on VMX: every MOV CR8 exits there.
     */
    void (*update_cr8_intercept)(struct virt_vcpu *v, int tpr, int max_irr);
    /* NMIs are blocked from delivery until the guest's IRET (virtual NMI blocking). */
    bool (*nmi_allowed)(struct virt_vcpu *v);
    /* An NMI is being injected, or the guest is in its handler (before the IRET). */
    bool (*nmi_in_service)(struct virt_vcpu *v);
    void (*inject_nmi)(struct virt_vcpu *v);
    void (*set_nmi_window)(struct virt_vcpu *v, bool on);
    /* The state after INIT and a startup IPI: real mode at CS = vector << 8, IP = 0. */
    void (*vcpu_reset_real)(struct virt_vcpu *v, uint8_t sipi_vector);
    /* v will run on another host CPU next: drop what ties it to this one. */
    void (*vcpu_unload)(struct virt_vcpu *v);
    /*
     * Drop v's guest TLB entries (its VPID's or ASID's) before its next
     * entry, on its own CPU while it is off guest mode: KVM's
     * flush_tlb_guest, for the PV TLB flush (vmm/dev/kvm_pv_sched.c).
     */
    void (*flush_guest_tlb)(struct virt_vcpu *v);
    /*
     * A vCPU's context stays active on the CPU it last ran on until
     * vcpu_unload there (VMX: only that CPU can VMCLEAR its VMCS), so one
     * that may move is unloaded whenever it leaves its CPU. False: nothing
     * ties it (SVM notices the move itself: a new ASID, clean bits cleared).
     */
    bool unload_to_move;
    /*
     * A guest spinning with interrupts off may be preempted only through
     * PAUSE exits (Bochs 2.7's SVM does not take the INTR intercept while
     * the guest has IF=0): with ple=off, PAUSE exits stay on where the CPU
     * can filter them.
     */
    bool pause_backstop;
};

extern const struct virt_ops *virt;
extern struct virt_features virt_features;

/* The detected features and their backend's ops, NULL for none: boot/ picks them (backend_ops). */
void virt_select(const struct virt_features *f, const struct virt_ops *ops);
/*
 * CPU bring-up, on every CPU once it is set up: turn the backend on here.
 * False (after a line saying why) if there is none or it would not start.
 */
bool virt_cpu_enable(void);

#endif

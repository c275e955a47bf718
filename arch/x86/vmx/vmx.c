/* Intel VT-x backend behind the vendor seam (arch/x86/virt.h). */
#include "arch/x86/vmx/vmx.h"

#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/exit_floor.h"
#include "arch/x86/mm.h"
#include "arch/x86/pagetable.h"
#include "arch/x86/panic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/tsc.h"
#include "arch/x86/guest_regs.h"
#include "arch/x86/virt.h"
#include "arch/x86/vmx/ept.h"
#include "arch/x86/vmx/vmcs.h"
#include "arch/x86/vmx/vmx_check.h"
#include "arch/x86/vmx/vmx_controls.h"
#include "arch/x86/vmx/vmx_exit.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/string.h"
#include "vmm/vm.h"

#define VMX_FAIL_INVALID     1 /* vmx_enter: CF, no current VMCS */
#define VECTOR_DB            1
#define VMX_FAIL_VALID       2 /* vmx_enter: ZF, see the VM-instruction error field */
#define VPID_COUNT           65536
#define HOST_IRQ_BACKSTOP_MS 1 /* see prepare_entry */
#define PAGES(bytes)         (((bytes) + PAGE_SIZE - 1) / PAGE_SIZE)

/* Segment fields are found by index: encoding of ES + 2 * enum vmx_seg. */
_Static_assert(VMCS_GUEST_TR_SEL == VMCS_GUEST_ES_SEL + 2 * SEG_TR &&
                   VMCS_GUEST_LDTR_LIMIT == VMCS_GUEST_ES_LIMIT + 2 * SEG_LDTR &&
                   VMCS_GUEST_CS_AR == VMCS_GUEST_ES_AR + 2 * SEG_CS &&
                   VMCS_GUEST_GS_BASE == VMCS_GUEST_ES_BASE + 2 * SEG_GS,
               "VMCS segment field layout");

int vmx_enter(struct guest_regs *regs, uint64_t launched);
void vmx_exit_stub(void);

/*
 * The MSRs that SYSCALL and SWAPGS use, which VMX does not switch. The host
 * never uses them, so they are swapped only for guests that may (those that
 * wrote one or entered long mode): guest values in before entry, host
 * values back after the exit.
 */
static const uint32_t syscall_msrs[] = {MSR_STAR, MSR_SFMASK, MSR_LSTAR, MSR_CSTAR,
                                        MSR_KERNEL_GS_BASE};
#define SYSCALL_MSRS   5
#define SLOT_KERNEL_GS 4

/* Per host CPU. */
struct vmx_cpu {
    void *vmxon_region;
    /*
     * The VMCS that VMPTRLD made current here, 0 after its VMCLEAR. An
     * address, not a vCPU: a VMCS leaked by vmx_vcpu_destroy is never reused,
     * whereas its vCPU's memory is.
     */
    uint64_t current_vmcs;
    uint64_t host_syscall[SYSCALL_MSRS];
};

struct vmx_vcpu {
    uint32_t *vmcs;
    int last_cpu;  /* the CPU the VMCS is active on, -1 once cleared */
    bool launched; /* VMLAUNCH succeeded since the last VMCLEAR: VMRESUME next */
    uint16_t vpid;
    /* Controls as pollux wants them, and as the VMCS holds them. */
    uint32_t pin, proc, proc2, entry;
    uint32_t vmcs_pin, vmcs_proc, vmcs_proc2, vmcs_entry;
    uint64_t tsc_offset, vmcs_tsc_offset;
    /* set_pause_exiting's request, applied again after every reset. */
    enum pause_exiting pause_mode;
    uint32_t ple_gap, ple_window, vmcs_ple_gap, vmcs_ple_window;
    uint64_t cr0_shadow, cr4_shadow; /* read shadows: only pollux writes them */
    uint64_t timer_deadline;         /* host TSC; 0 = disarmed */
    uint64_t ept_generation;         /* of the VM's EPT, as last flushed on last_cpu */
    bool flush_vpid;     /* guest paging changed behind the CPU's back (emulated MOV CR) */
    bool event_injected; /* vmm/ filled VM_ENTRY_INTR_INFO for the next entry */
    /* An event whose delivery the last exit interrupted (IDT-vectoring information). */
    uint32_t reinject, reinject_error, reinject_len;
    uint64_t syscall[SYSCALL_MSRS];
    bool syscall_live;
    char msg[256]; /* EXIT_ENTRY_FAILED text */
};

_Static_assert(sizeof(struct vmx_vcpu) <= PAGE_SIZE, "one page per vCPU");

struct vmx_vm {
    struct pagetable ept;
    uint64_t eptp;
    uint64_t generation; /* bumped by every mapping change */
};

static struct vmx_caps caps;
static struct vmx_controls ctls;
static uint64_t io_bitmap_pa, msr_bitmap_pa;
static uint64_t cr0_mask, cr4_mask;
static unsigned invept_type, invvpid_type;
static uint64_t backstop_tsc; /* HOST_IRQ_BACKSTOP_MS in TSC ticks */
static struct spinlock setup_lock;
static int setup_state; /* 0 not yet, 1 done, -1 failed (setup_err says why) */
static char setup_err[160];
static struct spinlock vpid_lock;
static uint64_t vpid_used[VPID_COUNT / 64];

static __attribute__((noinline, cold)) void field_error(const char *insn, uint32_t field)
{
    kprintf("pollux: vmx: %s of VMCS field 0x%04x failed\n", insn, field);
}

/* VMREAD/VMWRITE fail only on a pollux bug (no current VMCS, a field the CPU lacks). */
static inline uint64_t vmread(uint32_t field)
{
    uint64_t v;
    __asm__ goto("vmread %1, %0; jbe %l[fail]" : "=r"(v) : "r"((uint64_t)field) : "cc" : fail);
    return v;
fail:
    field_error("VMREAD", field);
    return 0;
}

static inline void vmwrite(uint32_t field, uint64_t v)
{
    __asm__ goto("vmwrite %1, %0; jbe %l[fail]" ::"r"((uint64_t)field), "rm"(v)
                 : "cc", "memory"
                 : fail);
    return;
fail:
    field_error("VMWRITE", field);
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

static void set_bit(uint32_t *word, uint32_t bit, bool on)
{
    *word = on ? *word | bit : *word & ~bit;
}

static inline struct vmx_cpu *cpu_state(void)
{
    return this_cpu()->virt;
}

/* ------------------------------------------------------------ enable */

static void read_caps(struct vmx_caps *c)
{
    memset(c, 0, sizeof(*c));
    c->basic = rdmsr(MSR_VMX_BASIC);
    c->pin = rdmsr(MSR_VMX_PINBASED);
    c->proc = rdmsr(MSR_VMX_PROCBASED);
    c->exit = rdmsr(MSR_VMX_EXIT);
    c->entry = rdmsr(MSR_VMX_ENTRY);
    if (c->basic & VMX_BASIC_TRUE_CTLS) {
        c->true_pin = rdmsr(MSR_VMX_TRUE_PINBASED);
        c->true_proc = rdmsr(MSR_VMX_TRUE_PROCBASED);
        c->true_exit = rdmsr(MSR_VMX_TRUE_EXIT);
        c->true_entry = rdmsr(MSR_VMX_TRUE_ENTRY);
    }
    /* These MSRs exist only when the capability bits say so (#GP otherwise). */
    if ((c->proc >> 32) & PROC_SECONDARY) {
        c->proc2 = rdmsr(MSR_VMX_PROCBASED2);
        if ((c->proc2 >> 32) & (PROC2_EPT | PROC2_VPID))
            c->ept_vpid = rdmsr(MSR_VMX_EPT_VPID_CAP);
    }
    c->misc = rdmsr(MSR_VMX_MISC);
    c->cr0_fixed0 = rdmsr(MSR_VMX_CR0_FIXED0);
    c->cr0_fixed1 = rdmsr(MSR_VMX_CR0_FIXED1);
    c->cr4_fixed0 = rdmsr(MSR_VMX_CR4_FIXED0);
    c->cr4_fixed1 = rdmsr(MSR_VMX_CR4_FIXED1);
    bool sizes = cpuid(0x80000000, 0).eax >= 0x80000008;
    c->phys_bits = sizes ? cpuid(0x80000008, 0).eax & 0xff : 36;
    c->vaddr_bits = sizes ? (cpuid(0x80000008, 0).eax >> 8) & 0xff : 48;
}

/* Once, on the first CPU: capabilities, controls and the shared bitmaps. */
static int vmx_setup(char *err, size_t errlen)
{
    read_caps(&caps);
    if (vmx_derive_controls(&caps, &ctls, err, errlen))
        return -1;
    cr0_mask = vmx_cr0_mask(&caps);
    cr4_mask = vmx_cr4_mask(&caps);
    invept_type = (caps.ept_vpid & EPT_CAP_INVEPT_SINGLE) ? INVEPT_SINGLE : INVEPT_ALL;
    invvpid_type = (caps.ept_vpid & VPID_CAP_SINGLE) ? INVVPID_SINGLE : INVVPID_ALL;
    backstop_tsc = tsc_khz * HOST_IRQ_BACKSTOP_MS;

    /* One set of all-ones bitmaps for every VM: every port and every MSR access exits. */
    uint8_t *io = page_alloc_zeroed(2), *msr = page_alloc_zeroed(1);
    if (!io || !msr) {
        snprintf(err, errlen, "out of memory for the VMX bitmaps");
        return -1;
    }
    memset(io, 0xff, 2 * PAGE_SIZE);
    memset(msr, 0xff, PAGE_SIZE);
    io_bitmap_pa = (uint64_t)io;
    msr_bitmap_pa = (uint64_t)msr;

    char missing[160] = "";
    size_t used = 0;
    for (unsigned bit = 1; bit & VMX_OPT_ALL; bit <<= 1)
        if ((ctls.missing & bit) && used < sizeof(missing))
            used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%s",
                                     used ? ", " : "", vmx_optional_name(bit));
    kprintf("pollux: vmx: VMCS revision 0x%lx, PAUSE %s, preemption timer %s; unavailable: %s\n",
            (unsigned long)(caps.basic & VMX_BASIC_REVISION),
            (ctls.available & VMX_OPT_PLE)             ? "loop exiting (PLE)"
            : (ctls.available & VMX_OPT_PAUSE_EXITING) ? "exiting"
                                                       : "not intercepted",
            (ctls.available & VMX_OPT_PREEMPTION_TIMER) ? "yes" : "no",
            missing[0] ? missing : "nothing");
    return 0;
}

static int vmx_cpu_enable(char *err, size_t errlen)
{
    spin_lock(&setup_lock);
    if (!setup_state)
        setup_state = vmx_setup(setup_err, sizeof(setup_err)) ? -1 : 1;
    spin_unlock(&setup_lock);
    if (setup_state < 0) {
        snprintf(err, errlen, "%s", setup_err);
        return -1;
    }

    uint64_t fc = rdmsr(MSR_FEATURE_CONTROL);
    if (!(fc & FEATURE_CTL_LOCKED)) {
        wrmsr(MSR_FEATURE_CONTROL, fc | FEATURE_CTL_LOCKED | FEATURE_CTL_VMXON);
    } else if (!(fc & FEATURE_CTL_VMXON)) {
        snprintf(err, errlen,
                 "IA32_FEATURE_CONTROL is locked with VMXON outside SMX disabled (firmware "
                 "setting)");
        return -1;
    }
    struct vmx_cpu *c = page_alloc_zeroed(1);
    uint32_t *region = page_alloc_zeroed(1);
    if (!c || !region) {
        snprintf(err, errlen, "out of memory for the VMXON region");
        goto fail;
    }
    region[0] = (uint32_t)(caps.basic & VMX_BASIC_REVISION);
    write_cr0((read_cr0() | caps.cr0_fixed0) & caps.cr0_fixed1);
    write_cr4((read_cr4() | caps.cr4_fixed0) & caps.cr4_fixed1);
    if (!vmxon((uint64_t)region)) {
        snprintf(err, errlen, "VMXON failed (CR0 0x%lx, CR4 0x%lx)", (unsigned long)read_cr0(),
                 (unsigned long)read_cr4());
        goto fail;
    }
    for (unsigned i = 0; i < SYSCALL_MSRS; i++)
        c->host_syscall[i] = rdmsr(syscall_msrs[i]);
    c->vmxon_region = region;
    this_cpu()->virt = c;
    return 0;
fail:
    if (c)
        pmm_free(&host_pmm, (uint64_t)c, 1);
    if (region)
        pmm_free(&host_pmm, (uint64_t)region, 1);
    return -1;
}

/* ------------------------------------------------------------ EPT */

static int vmx_vm_init(struct vm *vm)
{
    struct vmx_vm *x = page_alloc_zeroed(PAGES(sizeof(*x)));
    if (!x)
        return -1;
    mm_pagetable_init(&x->ept, &pt_format_ept);
    if (pt_init(&x->ept)) {
        pmm_free(&host_pmm, (uint64_t)x, PAGES(sizeof(*x)));
        return -1;
    }
    x->eptp = ept_pointer(x->ept.root, virt_features.ept_ad);
    /* vCPUs start at generation 0, so each flushes this EPTP on its CPU before it first runs. */
    x->generation = 1;
    vm->arch = x;
    return 0;
}

static int vmx_vm_map(struct vm *vm, uint64_t gpa, uint64_t hpa, uint64_t len, unsigned perms)
{
    struct vmx_vm *x = vm->arch;
    int rc = pt_map(&x->ept, gpa, hpa, len, perms, virt_features.ept_2m ? PT_2M : PT_4K);
    /* INVEPT acts on one CPU only: every vCPU flushes on its own CPU before its next entry. */
    __atomic_add_fetch(&x->generation, 1, __ATOMIC_RELEASE);
    return rc;
}

static void vmx_vm_destroy(struct vm *vm)
{
    struct vmx_vm *x = vm->arch;
    if (!x)
        return;
    pt_destroy(&x->ept, mm_free_table);
    pmm_free(&host_pmm, (uint64_t)x, PAGES(sizeof(*x)));
    vm->arch = 0;
}

/* ------------------------------------------------------------ VMCS access */

static void write_controls(const struct vmx_control_state *k)
{
    vmwrite(VMCS_PIN_CONTROLS, k->pin);
    vmwrite(VMCS_PROC_CONTROLS, k->proc);
    vmwrite(VMCS_PROC2_CONTROLS, k->proc2);
    vmwrite(VMCS_EXIT_CONTROLS, k->exit);
    vmwrite(VMCS_ENTRY_CONTROLS, k->entry);
    vmwrite(VMCS_EXCEPTION_BITMAP, k->exception_bitmap);
    vmwrite(VMCS_CR3_TARGET_COUNT, k->cr3_target_count);
    vmwrite(VMCS_EXIT_MSR_STORE_COUNT, k->exit_msr_store_count);
    vmwrite(VMCS_EXIT_MSR_LOAD_COUNT, k->exit_msr_load_count);
    vmwrite(VMCS_ENTRY_MSR_LOAD_COUNT, k->entry_msr_load_count);
    vmwrite(VMCS_ENTRY_INTR_INFO, k->entry_intr_info);
    vmwrite(VMCS_ENTRY_ERROR_CODE, k->entry_error_code);
    vmwrite(VMCS_ENTRY_INSN_LEN, k->entry_insn_len);
    vmwrite(VMCS_IO_BITMAP_A, k->io_bitmap_a);
    vmwrite(VMCS_IO_BITMAP_B, k->io_bitmap_b);
    vmwrite(VMCS_MSR_BITMAP, k->msr_bitmap);
    vmwrite(VMCS_EPT_POINTER, k->eptp);
    vmwrite(VMCS_TSC_OFFSET, k->tsc_offset);
    vmwrite(VMCS_CR0_MASK, k->cr0_mask);
    vmwrite(VMCS_CR4_MASK, k->cr4_mask);
    vmwrite(VMCS_CR0_SHADOW, k->cr0_shadow);
    vmwrite(VMCS_CR4_SHADOW, k->cr4_shadow);
    /* Fields of optional features exist only where the CPU has them. */
    if (ctls.available & VMX_OPT_VPID)
        vmwrite(VMCS_VPID, k->vpid);
    if (ctls.available & VMX_OPT_PLE) {
        vmwrite(VMCS_PLE_GAP, k->ple_gap);
        vmwrite(VMCS_PLE_WINDOW, k->ple_window);
    }
    if (ctls.available & VMX_OPT_XSAVES)
        vmwrite(VMCS_XSS_EXIT_BITMAP, 0); /* no XSAVES/XRSTORS component exits */
}

static void read_controls(struct vmx_control_state *k)
{
    k->pin = (uint32_t)vmread(VMCS_PIN_CONTROLS);
    k->proc = (uint32_t)vmread(VMCS_PROC_CONTROLS);
    k->proc2 = (uint32_t)vmread(VMCS_PROC2_CONTROLS);
    k->exit = (uint32_t)vmread(VMCS_EXIT_CONTROLS);
    k->entry = (uint32_t)vmread(VMCS_ENTRY_CONTROLS);
    k->exception_bitmap = (uint32_t)vmread(VMCS_EXCEPTION_BITMAP);
    k->cr3_target_count = (uint32_t)vmread(VMCS_CR3_TARGET_COUNT);
    k->exit_msr_store_count = (uint32_t)vmread(VMCS_EXIT_MSR_STORE_COUNT);
    k->exit_msr_load_count = (uint32_t)vmread(VMCS_EXIT_MSR_LOAD_COUNT);
    k->entry_msr_load_count = (uint32_t)vmread(VMCS_ENTRY_MSR_LOAD_COUNT);
    k->entry_intr_info = (uint32_t)vmread(VMCS_ENTRY_INTR_INFO);
    k->entry_error_code = (uint32_t)vmread(VMCS_ENTRY_ERROR_CODE);
    k->entry_insn_len = (uint32_t)vmread(VMCS_ENTRY_INSN_LEN);
    k->io_bitmap_a = vmread(VMCS_IO_BITMAP_A);
    k->io_bitmap_b = vmread(VMCS_IO_BITMAP_B);
    k->msr_bitmap = vmread(VMCS_MSR_BITMAP);
    k->eptp = vmread(VMCS_EPT_POINTER);
    k->tsc_offset = vmread(VMCS_TSC_OFFSET);
    k->cr0_mask = vmread(VMCS_CR0_MASK);
    k->cr4_mask = vmread(VMCS_CR4_MASK);
    k->cr0_shadow = vmread(VMCS_CR0_SHADOW);
    k->cr4_shadow = vmread(VMCS_CR4_SHADOW);
    if (ctls.available & VMX_OPT_VPID)
        k->vpid = (uint16_t)vmread(VMCS_VPID);
    if (ctls.available & VMX_OPT_PLE) {
        k->ple_gap = (uint32_t)vmread(VMCS_PLE_GAP);
        k->ple_window = (uint32_t)vmread(VMCS_PLE_WINDOW);
    }
}

static void write_guest(const struct vmx_guest_state *g)
{
    vmwrite(VMCS_GUEST_CR0, g->cr0);
    vmwrite(VMCS_GUEST_CR3, g->cr3);
    vmwrite(VMCS_GUEST_CR4, g->cr4);
    vmwrite(VMCS_GUEST_DR7, g->dr7);
    vmwrite(VMCS_GUEST_DEBUGCTL, g->debugctl);
    vmwrite(VMCS_GUEST_EFER, g->efer);
    vmwrite(VMCS_GUEST_PAT, g->pat);
    vmwrite(VMCS_GUEST_RSP, g->rsp);
    vmwrite(VMCS_GUEST_RIP, g->rip);
    vmwrite(VMCS_GUEST_RFLAGS, g->rflags);
    vmwrite(VMCS_GUEST_PENDING_DBG, g->pending_dbg);
    vmwrite(VMCS_LINK_POINTER, g->link);
    vmwrite(VMCS_GUEST_SYSENTER_CS, g->sysenter_cs);
    vmwrite(VMCS_GUEST_SYSENTER_ESP, g->sysenter_esp);
    vmwrite(VMCS_GUEST_SYSENTER_EIP, g->sysenter_eip);
    for (unsigned i = 0; i < SEG_COUNT; i++) {
        vmwrite(VMCS_GUEST_ES_SEL + 2 * i, g->seg[i].sel);
        vmwrite(VMCS_GUEST_ES_LIMIT + 2 * i, g->seg[i].limit);
        vmwrite(VMCS_GUEST_ES_AR + 2 * i, g->seg[i].ar);
        vmwrite(VMCS_GUEST_ES_BASE + 2 * i, g->seg[i].base);
    }
    vmwrite(VMCS_GUEST_GDTR_BASE, g->gdtr_base);
    vmwrite(VMCS_GUEST_GDTR_LIMIT, g->gdtr_limit);
    vmwrite(VMCS_GUEST_IDTR_BASE, g->idtr_base);
    vmwrite(VMCS_GUEST_IDTR_LIMIT, g->idtr_limit);
    vmwrite(VMCS_GUEST_INTERRUPTIBILITY, g->interruptibility);
    vmwrite(VMCS_GUEST_ACTIVITY, g->activity);
    for (unsigned i = 0; i < 4; i++)
        vmwrite(VMCS_GUEST_PDPTE0 + 2 * i, g->pdpte[i]);
}

static void read_guest(struct vmx_guest_state *g)
{
    g->cr0 = vmread(VMCS_GUEST_CR0);
    g->cr3 = vmread(VMCS_GUEST_CR3);
    g->cr4 = vmread(VMCS_GUEST_CR4);
    g->dr7 = vmread(VMCS_GUEST_DR7);
    g->debugctl = vmread(VMCS_GUEST_DEBUGCTL);
    g->efer = vmread(VMCS_GUEST_EFER);
    g->pat = vmread(VMCS_GUEST_PAT);
    g->rsp = vmread(VMCS_GUEST_RSP);
    g->rip = vmread(VMCS_GUEST_RIP);
    g->rflags = vmread(VMCS_GUEST_RFLAGS);
    g->pending_dbg = vmread(VMCS_GUEST_PENDING_DBG);
    g->link = vmread(VMCS_LINK_POINTER);
    g->sysenter_cs = (uint32_t)vmread(VMCS_GUEST_SYSENTER_CS);
    g->sysenter_esp = vmread(VMCS_GUEST_SYSENTER_ESP);
    g->sysenter_eip = vmread(VMCS_GUEST_SYSENTER_EIP);
    for (unsigned i = 0; i < SEG_COUNT; i++) {
        g->seg[i].sel = (uint16_t)vmread(VMCS_GUEST_ES_SEL + 2 * i);
        g->seg[i].limit = (uint32_t)vmread(VMCS_GUEST_ES_LIMIT + 2 * i);
        g->seg[i].ar = (uint32_t)vmread(VMCS_GUEST_ES_AR + 2 * i);
        g->seg[i].base = vmread(VMCS_GUEST_ES_BASE + 2 * i);
    }
    g->gdtr_base = vmread(VMCS_GUEST_GDTR_BASE);
    g->gdtr_limit = (uint32_t)vmread(VMCS_GUEST_GDTR_LIMIT);
    g->idtr_base = vmread(VMCS_GUEST_IDTR_BASE);
    g->idtr_limit = (uint32_t)vmread(VMCS_GUEST_IDTR_LIMIT);
    g->interruptibility = (uint32_t)vmread(VMCS_GUEST_INTERRUPTIBILITY);
    g->activity = (uint32_t)vmread(VMCS_GUEST_ACTIVITY);
    for (unsigned i = 0; i < 4; i++)
        g->pdpte[i] = vmread(VMCS_GUEST_PDPTE0 + 2 * i);
}

/* The host state of this CPU: written whenever a VMCS becomes active here. */
static void write_host(const struct percpu *p)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) idtr;
    __asm__ volatile("sidt %0" : "=m"(idtr));
    vmwrite(VMCS_HOST_CR0, read_cr0());
    vmwrite(VMCS_HOST_CR3, read_cr3());
    vmwrite(VMCS_HOST_CR4, read_cr4());
    vmwrite(VMCS_HOST_CS_SEL, GDT_KERNEL_CODE);
    vmwrite(VMCS_HOST_SS_SEL, GDT_KERNEL_DATA);
    vmwrite(VMCS_HOST_DS_SEL, GDT_KERNEL_DATA);
    vmwrite(VMCS_HOST_ES_SEL, GDT_KERNEL_DATA);
    vmwrite(VMCS_HOST_FS_SEL, 0);
    vmwrite(VMCS_HOST_GS_SEL, 0);
    vmwrite(VMCS_HOST_TR_SEL, GDT_TSS);
    vmwrite(VMCS_HOST_FS_BASE, 0);
    vmwrite(VMCS_HOST_GS_BASE, (uint64_t)p);
    vmwrite(VMCS_HOST_TR_BASE, (uint64_t)&p->tss);
    vmwrite(VMCS_HOST_GDTR_BASE, (uint64_t)p->gdt);
    vmwrite(VMCS_HOST_IDTR_BASE, idtr.base);
    vmwrite(VMCS_HOST_SYSENTER_CS, 0);
    vmwrite(VMCS_HOST_SYSENTER_ESP, 0);
    vmwrite(VMCS_HOST_SYSENTER_EIP, 0);
    vmwrite(VMCS_HOST_EFER, rdmsr(MSR_EFER));
    vmwrite(VMCS_HOST_PAT, rdmsr(MSR_PAT));
    vmwrite(VMCS_HOST_RIP, (uint64_t)vmx_exit_stub);
}

static void read_host(struct vmx_host_state *h)
{
    h->cr0 = vmread(VMCS_HOST_CR0);
    h->cr3 = vmread(VMCS_HOST_CR3);
    h->cr4 = vmread(VMCS_HOST_CR4);
    h->cs = (uint16_t)vmread(VMCS_HOST_CS_SEL);
    h->ss = (uint16_t)vmread(VMCS_HOST_SS_SEL);
    h->ds = (uint16_t)vmread(VMCS_HOST_DS_SEL);
    h->es = (uint16_t)vmread(VMCS_HOST_ES_SEL);
    h->fs = (uint16_t)vmread(VMCS_HOST_FS_SEL);
    h->gs = (uint16_t)vmread(VMCS_HOST_GS_SEL);
    h->tr = (uint16_t)vmread(VMCS_HOST_TR_SEL);
    h->fs_base = vmread(VMCS_HOST_FS_BASE);
    h->gs_base = vmread(VMCS_HOST_GS_BASE);
    h->tr_base = vmread(VMCS_HOST_TR_BASE);
    h->gdtr_base = vmread(VMCS_HOST_GDTR_BASE);
    h->idtr_base = vmread(VMCS_HOST_IDTR_BASE);
    h->sysenter_cs = (uint32_t)vmread(VMCS_HOST_SYSENTER_CS);
    h->sysenter_esp = vmread(VMCS_HOST_SYSENTER_ESP);
    h->sysenter_eip = vmread(VMCS_HOST_SYSENTER_EIP);
    h->efer = vmread(VMCS_HOST_EFER);
    h->pat = vmread(VMCS_HOST_PAT);
    h->rsp = vmread(VMCS_HOST_RSP);
    h->rip = vmread(VMCS_HOST_RIP);
}

static void read_state(struct vmcs_state *s)
{
    memset(s, 0, sizeof(*s));
    read_controls(&s->ctl);
    read_host(&s->host);
    read_guest(&s->guest);
}

/*
 * Make the vCPU's VMCS current on this CPU. False if it is still active on
 * another CPU (vmx_vcpu_unload was not called there).
 */
static __attribute__((noinline)) bool vmcs_switch(struct vmx_vcpu *s, struct percpu *p,
                                                  struct vmx_cpu *c)
{
    enum vmx_load_action act = vmx_load_action(false, s->last_cpu, p->cpu);
    if (act == VMX_LOAD_REFUSE)
        return false;
    if (!vmptrld((uint64_t)s->vmcs))
        panic("vmx: VMPTRLD of VMCS 0x%lx failed", (unsigned long)(uint64_t)s->vmcs);
    c->current_vmcs = (uint64_t)s->vmcs;
    if (act == VMX_LOAD_FRESH) {
        s->last_cpu = (int)p->cpu;
        write_host(p);
        /* This CPU may cache translations of an earlier user of this EPT root or VPID. */
        s->ept_generation = 0;
        s->flush_vpid = true;
    }
    return true;
}

/* VMX_LOAD_CURRENT, the case of every VMCS access of every exit, without a call or a frame. */
static inline bool vmcs_load(struct vmx_vcpu *s)
{
    struct percpu *p = this_cpu();
    struct vmx_cpu *c = p->virt;
    if (c->current_vmcs == (uint64_t)s->vmcs)
        return true;
    return vmcs_switch(s, p, c);
}

static void vmcs_clear(struct vmx_vcpu *s)
{
    struct vmx_cpu *c = cpu_state();
    if (!vmclear((uint64_t)s->vmcs))
        panic("vmx: VMCLEAR of VMCS 0x%lx failed", (unsigned long)(uint64_t)s->vmcs);
    if (c->current_vmcs == (uint64_t)s->vmcs)
        c->current_vmcs = 0;
    s->launched = false;
    s->last_cpu = -1;
}

static __attribute__((noinline)) struct vmx_vcpu *load_or_panic(struct vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    struct percpu *p = this_cpu();
    if (!vmcs_switch(s, p, p->virt))
        panic("vmx: vCPU %u's VMCS is active on CPU %d, not on CPU %u (no vmx_vcpu_unload)", v->id,
              s->last_cpu, p->cpu);
    return s;
}

/* The vCPU's state, its VMCS current here: for the ops vmm/ calls between runs. */
static inline struct vmx_vcpu *loaded(struct vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    if (cpu_state()->current_vmcs == (uint64_t)s->vmcs)
        return s;
    return load_or_panic(v);
}

void vmx_vcpu_unload(struct vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    if (s->last_cpu < 0)
        return;
    if (s->last_cpu != (int)this_cpu()->cpu)
        panic("vmx_vcpu_unload on CPU %u for a vCPU active on CPU %d", this_cpu()->cpu,
              s->last_cpu);
    vmcs_clear(s);
}

/* ------------------------------------------------------------ vCPUs */

static uint16_t vpid_alloc(void)
{
    uint16_t vpid = 0;
    spin_lock(&vpid_lock);
    for (unsigned i = 1; i < VPID_COUNT && !vpid; i++)
        if (!(vpid_used[i / 64] & (1ull << (i % 64)))) {
            vpid_used[i / 64] |= 1ull << (i % 64);
            vpid = (uint16_t)i;
        }
    spin_unlock(&vpid_lock);
    return vpid;
}

static void vpid_free(uint16_t vpid)
{
    spin_lock(&vpid_lock);
    vpid_used[vpid / 64] &= ~(1ull << (vpid % 64));
    spin_unlock(&vpid_lock);
}

static int vmx_vcpu_create(struct vcpu *v)
{
    struct vmx_vcpu *s = page_alloc_zeroed(1);
    uint32_t *vmcs = page_alloc_zeroed(1);
    if (!s || !vmcs)
        goto fail;
    vmcs[0] = (uint32_t)(caps.basic & VMX_BASIC_REVISION);
    /* VMCLEAR initialises the launch state: the first entry will be a VMLAUNCH. */
    if (!vmclear((uint64_t)vmcs))
        goto fail;
    if ((ctls.available & VMX_OPT_VPID) && !(s->vpid = vpid_alloc()))
        goto fail;
    s->vmcs = vmcs;
    s->last_cpu = -1;
    v->arch = s;
    return 0;
fail:
    if (s)
        pmm_free(&host_pmm, (uint64_t)s, 1);
    if (vmcs)
        pmm_free(&host_pmm, (uint64_t)vmcs, 1);
    return -1;
}

static void vmx_vcpu_destroy(struct vcpu *v)
{
    struct vmx_vcpu *s = v->arch;
    if (!s)
        return;
    if (s->last_cpu == (int)this_cpu()->cpu) {
        vmcs_clear(s);
    } else if (s->last_cpu >= 0) {
        /*
         * Only that CPU can VMCLEAR it (vcpu_unload there), and until then it
         * may write cached VMCS data back: better leak the page than reuse it.
         */
        kprintf("pollux: vmx: vCPU %u of %s destroyed while active on CPU %d (no vcpu_unload "
                "there): VMCS page leaked\n",
                v->id, v->vm->cfg.name, s->last_cpu);
        s->vmcs = 0;
    }
    if (s->vmcs)
        pmm_free(&host_pmm, (uint64_t)s->vmcs, 1);
    if (s->vpid)
        vpid_free(s->vpid);
    pmm_free(&host_pmm, (uint64_t)s, 1);
    v->arch = 0;
}

/* Load a reset state (vmx_reset_state*) into the VMCS and the vCPU. */
static void reset_vcpu(struct vcpu *v, struct vmcs_state *st)
{
    struct vmx_vcpu *s = loaded(v);
    struct vmx_vm *x = v->vm->arch;
    st->ctl.io_bitmap_a = io_bitmap_pa;
    st->ctl.io_bitmap_b = io_bitmap_pa + PAGE_SIZE;
    st->ctl.msr_bitmap = msr_bitmap_pa;
    st->ctl.eptp = x->eptp;
    st->ctl.vpid = s->vpid;
    st->ctl.tsc_offset = v->vm->tsc_offset;
    vmx_pause_controls(ctls.available, s->pause_mode, &st->ctl.proc, &st->ctl.proc2);
    st->ctl.ple_gap = s->vmcs_ple_gap = s->ple_gap;
    st->ctl.ple_window = s->vmcs_ple_window = s->ple_window;
    write_controls(&st->ctl);
    write_guest(&st->guest);

    s->pin = s->vmcs_pin = st->ctl.pin;
    s->proc = s->vmcs_proc = st->ctl.proc;
    s->proc2 = s->vmcs_proc2 = st->ctl.proc2;
    s->entry = s->vmcs_entry = st->ctl.entry;
    s->tsc_offset = s->vmcs_tsc_offset = st->ctl.tsc_offset;
    s->cr0_shadow = st->ctl.cr0_shadow;
    s->cr4_shadow = st->ctl.cr4_shadow;
    s->timer_deadline = 0;
    s->event_injected = false;
    s->reinject = 0;
    memset(s->syscall, 0, sizeof(s->syscall));
    s->syscall_live = false;
    v->regs =
        (struct guest_regs){.rip = st->guest.rip, .rsp = st->guest.rsp, .rflags = st->guest.rflags};
    /* Leave the VMCS clear: the vCPU may run on another CPU next. */
    vmcs_clear(s);
}

static void vmx_vcpu_reset_protected(struct vcpu *v, uint32_t entry)
{
    struct vmcs_state st;
    vmx_reset_state(&caps, &ctls, entry, &st);
    reset_vcpu(v, &st);
}

static void vmx_vcpu_reset_real(struct vcpu *v, uint8_t sipi_vector)
{
    struct vmcs_state st;
    vmx_reset_state_real(&caps, &ctls, sipi_vector, &st);
    reset_vcpu(v, &st);
}

/* CR0 and CR4 as the guest sees them: the host-owned bits come from the read shadows. */
static uint64_t guest_cr0(const struct vmx_vcpu *s)
{
    return (vmread(VMCS_GUEST_CR0) & ~cr0_mask) | (s->cr0_shadow & cr0_mask);
}

static uint64_t guest_cr4(const struct vmx_vcpu *s)
{
    return (vmread(VMCS_GUEST_CR4) & ~cr4_mask) | (s->cr4_shadow & cr4_mask);
}

static void syscall_msrs_load(const uint64_t *values)
{
    for (unsigned i = 0; i < SYSCALL_MSRS; i++)
        wrmsr(syscall_msrs[i], values[i]);
}

/* Apply what changed since the last entry; VMCS current, interrupts off. */
static void prepare_entry(struct vcpu *v, struct vmx_vcpu *s)
{
    struct vmx_vm *x = v->vm->arch;
    uint64_t generation = __atomic_load_n(&x->generation, __ATOMIC_ACQUIRE);
    if (s->ept_generation != generation) {
        invept(invept_type, x->eptp);
        s->ept_generation = generation;
    }
    if (s->flush_vpid) {
        /* Without VPID every entry and exit flushes VPID 0's translations anyway. */
        if (s->vpid)
            invvpid(invvpid_type, s->vpid);
        s->flush_vpid = false;
    }
    /*
     * Bochs 2.7 evaluates interrupt masking at VM entry as if still in root
     * mode: a guest entered with IF=0 takes no external-interrupt exit until
     * it executes CLI, STI, POPF or IRET. The timer then bounds how long a
     * host interrupt (timer, kick IPI) can wait.
     */
    bool backstop = !(v->regs.rflags & RFLAGS_IF) && (ctls.available & VMX_OPT_PREEMPTION_TIMER);
    uint64_t deadline = s->timer_deadline;
    if (deadline || backstop) {
        unsigned shift = caps.misc & VMX_MISC_TIMER_RATE;
        uint64_t now = rdtsc(), ticks = 0;
        if (backstop && (!deadline || (deadline > now && deadline - now > backstop_tsc)))
            deadline = now + backstop_tsc;
        if (deadline > now)
            ticks = (deadline - now + (1ull << shift) - 1) >> shift;
        vmwrite(VMCS_PREEMPTION_TIMER, ticks > 0xffffffffu ? 0xffffffffu : ticks);
        s->pin |= PIN_PREEMPTION_TIMER;
    } else {
        s->pin &= ~PIN_PREEMPTION_TIMER;
    }
    if (s->pin != s->vmcs_pin)
        vmwrite(VMCS_PIN_CONTROLS, s->vmcs_pin = s->pin);
    if (s->proc != s->vmcs_proc)
        vmwrite(VMCS_PROC_CONTROLS, s->vmcs_proc = s->proc);
    if (s->proc2 != s->vmcs_proc2)
        vmwrite(VMCS_PROC2_CONTROLS, s->vmcs_proc2 = s->proc2);
    if (s->entry != s->vmcs_entry)
        vmwrite(VMCS_ENTRY_CONTROLS, s->vmcs_entry = s->entry);
    if (s->tsc_offset != s->vmcs_tsc_offset)
        vmwrite(VMCS_TSC_OFFSET, s->vmcs_tsc_offset = s->tsc_offset);
    if (s->ple_window != s->vmcs_ple_window)
        vmwrite(VMCS_PLE_WINDOW, s->vmcs_ple_window = s->ple_window);
    if (s->ple_gap != s->vmcs_ple_gap)
        vmwrite(VMCS_PLE_GAP, s->vmcs_ple_gap = s->ple_gap);

    vmwrite(VMCS_GUEST_RIP, v->regs.rip);
    vmwrite(VMCS_GUEST_RSP, v->regs.rsp);
    vmwrite(VMCS_GUEST_RFLAGS, v->regs.rflags);
    /* An event vmm/ injects now wins over the interrupted one, as on SVM. */
    if (!s->event_injected && (s->reinject & INTR_INFO_VALID)) {
        unsigned type = (s->reinject & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT;
        vmwrite(VMCS_ENTRY_INTR_INFO, s->reinject);
        if (s->reinject & INTR_INFO_ERROR)
            vmwrite(VMCS_ENTRY_ERROR_CODE, s->reinject_error);
        if (type == INTR_TYPE_SW_INT || type == INTR_TYPE_PRIV_SW || type == INTR_TYPE_SW_EXCEPT)
            vmwrite(VMCS_ENTRY_INSN_LEN, s->reinject_len);
    }
    s->reinject = 0;
}

static const char *insn_error_name(uint32_t err)
{
    switch (err) {
    case VMXERR_LAUNCH_NOT_CLEAR:
        return "VMLAUNCH with a non-clear VMCS";
    case VMXERR_RESUME_NOT_LAUNCHED:
        return "VMRESUME with a non-launched VMCS";
    case VMXERR_BAD_CONTROLS:
        return "invalid control fields";
    case VMXERR_BAD_HOST:
        return "invalid host-state fields";
    case VMXERR_BAD_EVENT_BLOCKING:
        return "event injection under blocking by MOV SS";
    default:
        return "see the SDM's VM-instruction error numbers";
    }
}

static void dump_segment(const char *name, const struct vmx_segment *g)
{
    kprintf("vmx:   %-4s sel 0x%04x base 0x%lx limit 0x%x ar 0x%x\n", name, g->sel,
            (unsigned long)g->base, g->limit, g->ar);
}

/* The fields VM entry checks, for the console when an entry fails. */
static void dump_vmcs(const struct vmcs_state *st)
{
    static const char *const names[SEG_COUNT] = {"ES", "CS", "SS", "DS", "FS", "GS", "LDTR", "TR"};
    const struct vmx_control_state *k = &st->ctl;
    const struct vmx_host_state *h = &st->host;
    const struct vmx_guest_state *g = &st->guest;
    kprintf("vmx: controls pin 0x%x proc 0x%x proc2 0x%x exit 0x%x entry 0x%x eptp 0x%lx vpid %u\n",
            k->pin, k->proc, k->proc2, k->exit, k->entry, (unsigned long)k->eptp, k->vpid);
    kprintf("vmx: event 0x%x error 0x%x length %u; cr0 mask 0x%lx shadow 0x%lx, cr4 mask 0x%lx "
            "shadow 0x%lx\n",
            k->entry_intr_info, k->entry_error_code, k->entry_insn_len, (unsigned long)k->cr0_mask,
            (unsigned long)k->cr0_shadow, (unsigned long)k->cr4_mask, (unsigned long)k->cr4_shadow);
    kprintf("vmx: guest cr0 0x%lx cr3 0x%lx cr4 0x%lx efer 0x%lx pat 0x%lx dr7 0x%lx\n",
            (unsigned long)g->cr0, (unsigned long)g->cr3, (unsigned long)g->cr4,
            (unsigned long)g->efer, (unsigned long)g->pat, (unsigned long)g->dr7);
    kprintf("vmx: guest rip 0x%lx rsp 0x%lx rflags 0x%lx activity %u interruptibility 0x%x "
            "pending_dbg 0x%lx link 0x%lx\n",
            (unsigned long)g->rip, (unsigned long)g->rsp, (unsigned long)g->rflags, g->activity,
            g->interruptibility, (unsigned long)g->pending_dbg, (unsigned long)g->link);
    for (unsigned i = 0; i < SEG_COUNT; i++)
        dump_segment(names[i], &g->seg[i]);
    kprintf("vmx:   GDTR base 0x%lx limit 0x%x, IDTR base 0x%lx limit 0x%x\n",
            (unsigned long)g->gdtr_base, g->gdtr_limit, (unsigned long)g->idtr_base, g->idtr_limit);
    kprintf("vmx: host cr0 0x%lx cr3 0x%lx cr4 0x%lx efer 0x%lx pat 0x%lx rip 0x%lx rsp 0x%lx\n",
            (unsigned long)h->cr0, (unsigned long)h->cr3, (unsigned long)h->cr4,
            (unsigned long)h->efer, (unsigned long)h->pat, (unsigned long)h->rip,
            (unsigned long)h->rsp);
    kprintf("vmx: host cs 0x%x ss 0x%x ds 0x%x es 0x%x fs 0x%x gs 0x%x tr 0x%x; gs_base 0x%lx "
            "tr_base 0x%lx gdtr 0x%lx idtr 0x%lx\n",
            h->cs, h->ss, h->ds, h->es, h->fs, h->gs, h->tr, (unsigned long)h->gs_base,
            (unsigned long)h->tr_base, (unsigned long)h->gdtr_base, (unsigned long)h->idtr_base);
}

/* VMLAUNCH/VMRESUME itself failed: name the VM-instruction error and the failing check. */
static void entry_vmfail(struct vmx_vcpu *s, int rc, struct exit_record *e)
{
    const char *insn = s->launched ? "VMRESUME" : "VMLAUNCH";
    memset(e, 0, sizeof(*e));
    e->reason = EXIT_ENTRY_FAILED;
    e->insn_kind = -1;
    e->fail.what = s->msg;
    if (rc == VMX_FAIL_INVALID) {
        snprintf(s->msg, sizeof(s->msg), "%s failed: VMfailInvalid (no current VMCS)", insn);
        return;
    }
    uint32_t err = (uint32_t)vmread(VMCS_INSN_ERROR);
    struct vmcs_state st;
    read_state(&st);
    char why[160];
    int bad = err == VMXERR_BAD_CONTROLS ? vmx_check_controls(&caps, &st, why, sizeof(why))
              : err == VMXERR_BAD_HOST   ? vmx_check_host(&caps, &st, why, sizeof(why))
                                         : vmx_check_entry(&caps, &st, why, sizeof(why));
    snprintf(s->msg, sizeof(s->msg), "%s failed: VM-instruction error %u (%s): %s", insn, err,
             insn_error_name(err), bad ? why : "no software check fails");
    e->vendor_code = err;
    e->fail.detail = err;
    kprintf("pollux: vmx: %s\n", s->msg);
    dump_vmcs(&st);
}

/* VM entry failed on the guest state (exit reasons 33, 34, 41): name the failing check. */
static void entry_failure(struct vmx_vcpu *s, struct vmx_exit_info *xi, struct exit_record *e)
{
    struct vmcs_state st;
    char why[160];
    read_state(&st);
    xi->failed_check = vmx_check_guest(&caps, &st, why, sizeof(why)) ? why : 0;
    vmx_decode_exit(xi, e, s->msg, sizeof(s->msg));
    kprintf("pollux: vmx: %s\n", s->msg);
    dump_vmcs(&st);
}

/* PAE paging outside long mode with EPT: the PDPTEs are loaded from the VMCS at entry. */
static int load_pdptes(struct vcpu *v, uint64_t cr3)
{
    const uint64_t *pdpte = vm_gpa_ptr(v->vm, cr3 & 0xffffffe0u, 32);
    if (!pdpte)
        return -1;
    for (unsigned i = 0; i < 4; i++)
        if ((pdpte[i] & 1) &&
            ((pdpte[i] & PDPTE_RESERVED) || (caps.phys_bits < 64 && pdpte[i] >> caps.phys_bits)))
            return -1;
    for (unsigned i = 0; i < 4; i++)
        vmwrite(VMCS_GUEST_PDPTE0 + 2 * i, pdpte[i]);
    return 0;
}

static void vmx_inject_exception(struct vcpu *v, uint8_t vector, bool has_error, uint32_t error)
{
    struct vmx_vcpu *s = loaded(v);
    uint32_t info = vector | (INTR_TYPE_HW_EXCEPT << INTR_INFO_TYPE_SHIFT) | INTR_INFO_VALID;
    /* Real mode (unrestricted guest) delivers exceptions without error codes. */
    if (has_error && (guest_cr0(s) & CR0_PE)) {
        info |= INTR_INFO_ERROR;
        vmwrite(VMCS_ENTRY_ERROR_CODE, error);
    }
    vmwrite(VMCS_ENTRY_INTR_INFO, info);
    s->event_injected = true;
}

static void vmx_end_emulated_instruction(struct vcpu *v)
{
    loaded(v);
    uint32_t x = (uint32_t)vmread(VMCS_GUEST_INTERRUPTIBILITY);
    if (x & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS))
        vmwrite(VMCS_GUEST_INTERRUPTIBILITY, x & ~(INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS));
    if (v->regs.rflags & RFLAGS_TF) {
        /* The guest's DR6 is in the CPU while it runs; an injected #DB does not touch it. */
        dr6_write(dr6_single_step(dr6_read()));
        vmx_inject_exception(v, VECTOR_DB, false, 0);
    }
}

/*
 * MOV to CR0/CR4 and LMSW that touch a bit the host owns (CR access exits
 * never leave the backend). False for accesses pollux does not expect.
 */
static bool emulate_cr_access(struct vcpu *v, struct vmx_vcpu *s, uint64_t qual, unsigned len)
{
    struct vmx_cr_access a;
    vmx_decode_cr_access(qual, &a);
    struct vmx_cr_state cr = {
        .cr0 = guest_cr0(s),
        .cr4 = guest_cr4(s),
        .efer = vmread(VMCS_GUEST_EFER),
        .entry = s->entry,
    };
    bool code64 = (cr.efer & EFER_LMA) && (vmread(VMCS_GUEST_CS_AR) & AR_L);
    int rc;
    if (a.type == CR_MOV_TO && (a.cr == 0 || a.cr == 4)) {
        uint64_t value = *guest_gpr(&v->regs, a.gpr);
        if (!code64)
            value &= 0xffffffffu;
        rc =
            a.cr == 0 ? vmx_cr0_write(&caps, &cr, value, code64) : vmx_cr4_write(&caps, &cr, value);
    } else if (a.type == CR_LMSW) {
        rc = vmx_cr0_write(&caps, &cr, vmx_lmsw_value(cr.cr0, a.lmsw_source), code64);
    } else {
        return false;
    }
    if (!rc && vmx_pae_paging(&cr))
        rc = load_pdptes(v, vmread(VMCS_GUEST_CR3));
    if (rc) {
        vmx_inject_exception(v, 13, true, 0);
        return true;
    }
    vmwrite(VMCS_GUEST_CR0, vmx_cr0_real(&caps, cr.cr0));
    vmwrite(VMCS_CR0_SHADOW, s->cr0_shadow = cr.cr0);
    vmwrite(VMCS_GUEST_CR4, vmx_cr4_real(&caps, cr.cr4));
    vmwrite(VMCS_CR4_SHADOW, s->cr4_shadow = cr.cr4);
    vmwrite(VMCS_GUEST_EFER, cr.efer);
    s->entry = cr.entry;
    /* 64-bit code may SYSCALL or SWAPGS through MSRs it never wrote. */
    if (cr.efer & EFER_LMA)
        s->syscall_live = true;
    /* The CPU did not execute the write, so it did not flush the guest's TLB either. */
    s->flush_vpid = true;
    v->regs.rip += len;
    vmx_end_emulated_instruction(v);
    return true;
}

#ifdef POLLUX_EXIT_FLOOR
/* One of the floor's operations (arch/x86/exit_floor.h), done: the guest goes on at once. */
static bool floor_exit(struct vcpu *v)
{
    struct guest_regs *r = &v->regs;
    uint64_t len;
    switch ((uint32_t)vmread(VMCS_EXIT_REASON)) {
    case VMX_EXIT_CPUID:
        if ((uint32_t)r->rax != FLOOR_CPUID_LEAF)
            return false;
        floor_cpuid(r, 0x756e6547u, 0x49656e69u, 0x6c65746eu); /* GenuineIntel */
        len = 2;
        break;
    case VMX_EXIT_VMCALL:
        if ((uint32_t)r->rax != FLOOR_HC_NOP)
            return false;
        r->rax = 0;
        len = 3;
        break;
    case VMX_EXIT_IO: {
        uint64_t q = vmread(VMCS_EXIT_QUALIFICATION);
        if ((uint16_t)(q >> 16) != FLOOR_PORT || !(q & (1u << 3))) /* bit 3: IN */
            return false;
        r->rax = (r->rax & ~0xffull) | FLOOR_PORT_VALUE;
        len = vmread(VMCS_EXIT_INSN_LEN);
        break;
    }
    case VMX_EXIT_RDMSR:
        if ((uint32_t)r->rcx != FLOOR_MSR)
            return false;
        r->rax = (uint32_t)FLOOR_MSR_VALUE;
        r->rdx = FLOOR_MSR_VALUE >> 32;
        len = 2;
        break;
    default:
        return false;
    }
    vmwrite(VMCS_GUEST_RIP, vmread(VMCS_GUEST_RIP) + len);
    return true;
}
#endif

static void vmx_run_once(struct vcpu *v, struct exit_record *e)
{
    struct vmx_vcpu *s = v->arch;
    if (!vmcs_load(s)) {
        memset(e, 0, sizeof(*e));
        e->reason = EXIT_ENTRY_FAILED;
        e->insn_kind = -1;
        snprintf(s->msg, sizeof(s->msg),
                 "vCPU moved from CPU %d to CPU %u without vmx_vcpu_unload on the old CPU",
                 s->last_cpu, this_cpu()->cpu);
        e->fail.what = s->msg;
        e->fail.detail = (uint64_t)s->last_cpu;
        return;
    }
    prepare_entry(v, s);
    if (s->syscall_live)
        syscall_msrs_load(s->syscall);

    /*
     * Entered with host IF=0: a host interrupt that arrives while the guest
     * runs makes it exit (external-interrupt exiting, whatever the host's or
     * guest's IF) and, without "acknowledge interrupt on exit", stays
     * pending in the local APIC until the window below.
     */
    guest_msrs_enter(&v->msrs);
    int rc = vmx_enter(&v->regs, s->launched);
#ifdef POLLUX_EXIT_FLOOR
    while (!rc && floor_exit(v))
        rc = vmx_enter(&v->regs, true);
#endif
    guest_msrs_exit(&v->msrs);

    if (s->syscall_live) {
        /* SWAPGS changes KERNEL_GS_BASE without an exit; the others change only by WRMSR. */
        s->syscall[SLOT_KERNEL_GS] = rdmsr(MSR_KERNEL_GS_BASE);
        syscall_msrs_load(cpu_state()->host_syscall);
    }
    s->event_injected = false;
    struct vmx_exit_info xi = {0};
    uint32_t basic = 0;
    if (!rc) {
        xi.reason = (uint32_t)vmread(VMCS_EXIT_REASON);
        basic = xi.reason & 0xffff;
        if (basic == VMX_EXIT_EXCEPTION_NMI || basic == VMX_EXIT_EXTINT)
            xi.intr_info = (uint32_t)vmread(VMCS_EXIT_INTR_INFO);
        /* The exit consumed a host NMI: hand it to the host's handler. */
        if (basic == VMX_EXIT_EXCEPTION_NMI &&
            ((xi.intr_info & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT) == INTR_TYPE_NMI)
            __asm__ volatile("int $2");
    }
    /* Host interrupts that forced the exit (timer, kick IPI) are taken here. */
    __asm__ volatile("sti; nop; cli" ::: "memory");
    if (rc) {
        entry_vmfail(s, rc, e);
        return;
    }
    xi.qualification = vmread(VMCS_EXIT_QUALIFICATION);
    if (xi.reason & VMX_EXIT_ENTRY_FAILURE) {
        /* No guest state was loaded, and the launch state is as it was. */
        entry_failure(s, &xi, e);
        return;
    }
    s->launched = true;
    xi.insn_len = (uint32_t)vmread(VMCS_EXIT_INSN_LEN);
    if (basic == VMX_EXIT_EPT_VIOLATION || basic == VMX_EXIT_EPT_MISCONFIG)
        xi.guest_phys = vmread(VMCS_GUEST_PHYS_ADDR);

    v->regs.rip = vmread(VMCS_GUEST_RIP);
    v->regs.rsp = vmread(VMCS_GUEST_RSP);
    v->regs.rflags = vmread(VMCS_GUEST_RFLAGS);
    uint32_t idt = (uint32_t)vmread(VMCS_IDT_VECTORING_INFO);
    if (idt & INTR_INFO_VALID) {
        unsigned type = (idt & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT;
        s->reinject = idt & (INTR_INFO_VALID | INTR_INFO_ERROR | INTR_INFO_TYPE | INTR_INFO_VECTOR);
        if (idt & INTR_INFO_ERROR)
            s->reinject_error = (uint32_t)vmread(VMCS_IDT_VECTORING_ERROR);
        if (type == INTR_TYPE_SW_INT || type == INTR_TYPE_PRIV_SW || type == INTR_TYPE_SW_EXCEPT)
            s->reinject_len = xi.insn_len;
    } else if ((basic == VMX_EXIT_EPT_VIOLATION && (xi.qualification & EPT_QUAL_NMI_UNBLOCK)) ||
               (basic == VMX_EXIT_EXCEPTION_NMI && (xi.intr_info & INTR_INFO_NMI_UNBLOCK))) {
        /* A faulting IRET had unblocked NMIs: block them again for when it is retried. */
        vmwrite(VMCS_GUEST_INTERRUPTIBILITY,
                vmread(VMCS_GUEST_INTERRUPTIBILITY) | INTERRUPTIBILITY_NMI);
    }

    if (basic == VMX_EXIT_CR_ACCESS) {
        struct vmx_cr_access a;
        vmx_decode_cr_access(xi.qualification, &a);
        if (a.cr == 8 && (a.type == CR_MOV_TO || a.type == CR_MOV_FROM)) {
            memset(e, 0, sizeof(*e));
            e->reason = EXIT_CR8;
            e->vendor_code = xi.reason;
            e->insn_kind = -1;
            e->insn_len = xi.insn_len;
            e->cr8.write = a.type == CR_MOV_TO;
            e->cr8.gpr = (uint8_t)a.gpr;
            return;
        }
    }
    if (basic == VMX_EXIT_CR_ACCESS && emulate_cr_access(v, s, xi.qualification, xi.insn_len)) {
        memset(e, 0, sizeof(*e));
        e->reason = EXIT_NONE;
        e->vendor_code = xi.reason;
        e->insn_kind = -1;
        return;
    }
    if (basic == VMX_EXIT_NMI_WINDOW)
        set_bit(&s->proc, PROC_NMI_WINDOW, false);
    vmx_decode_exit(&xi, e, s->msg, sizeof(s->msg));
    if (e->reason == EXIT_PREEMPTION_TIMER) {
        if (s->timer_deadline && rdtsc() >= s->timer_deadline)
            s->timer_deadline = 0; /* one-shot: vmm/ re-arms it if it wants another */
        else
            e->reason = EXIT_NONE; /* the backstop, or early by the timer's granularity */
    }
}

static enum fastpath_result vmx_vcpu_run(struct vcpu *v, struct exit_record *e)
{
    enum fastpath_result r;
    do {
        vmx_run_once(v, e);
        r = fastpath_exit(v, e);
    } while (r == FASTPATH_REENTER);
    return r;
}

static void vmx_get_mode(struct vcpu *v, struct guest_mode *m)
{
    struct vmx_vcpu *s = loaded(v);
    m->cr0 = guest_cr0(s);
    m->cr3 = vmread(VMCS_GUEST_CR3);
    m->cr4 = guest_cr4(s);
    m->efer = vmread(VMCS_GUEST_EFER);
    /* VMX keeps the CPL in SS.DPL. */
    m->cpl = (vmread(VMCS_GUEST_SS_AR) >> AR_DPL_SHIFT) & 3;
    m->cs_base = vmread(VMCS_GUEST_CS_BASE);
    uint32_t cs_ar = (uint32_t)vmread(VMCS_GUEST_CS_AR);
    if (!(m->cr0 & CR0_PE))
        m->code_bits = 16;
    else if ((m->efer & EFER_LMA) && (cs_ar & AR_L))
        m->code_bits = 64;
    else
        m->code_bits = (cs_ar & AR_DB) ? 32 : 16;
}

static int syscall_slot(uint32_t index)
{
    for (int i = 0; i < SYSCALL_MSRS; i++)
        if (syscall_msrs[i] == index)
            return i;
    return -1;
}

/* The MSRs whose guest copies live in VMCS guest-state fields. */
static uint32_t vmcs_msr_field(uint32_t index)
{
    switch (index) {
    case MSR_PAT:
        return VMCS_GUEST_PAT;
    case MSR_FS_BASE:
        return VMCS_GUEST_FS_BASE;
    case MSR_GS_BASE:
        return VMCS_GUEST_GS_BASE;
    case MSR_SYSENTER_CS:
        return VMCS_GUEST_SYSENTER_CS;
    case MSR_SYSENTER_ESP:
        return VMCS_GUEST_SYSENTER_ESP;
    case MSR_SYSENTER_EIP:
        return VMCS_GUEST_SYSENTER_EIP;
    default:
        return 0;
    }
}

static enum msr_result vmx_msr_read(struct vcpu *v, uint32_t index, uint64_t *value)
{
    struct vmx_vcpu *s = loaded(v);
    uint32_t field = index == MSR_EFER ? VMCS_GUEST_EFER : vmcs_msr_field(index);
    if (field) {
        *value = vmread(field);
        return MSR_DONE;
    }
    int slot = syscall_slot(index);
    if (slot < 0)
        return MSR_NOT_MINE;
    *value = s->syscall[slot];
    return MSR_DONE;
}

static enum msr_result vmx_msr_write(struct vcpu *v, uint32_t index, uint64_t value)
{
    struct vmx_vcpu *s = loaded(v);
    if (index == MSR_EFER) {
        uint64_t allowed = EFER_SCE | EFER_LME | EFER_LMA | (virt_features.nx ? EFER_NXE : 0);
        uint64_t efer = vmread(VMCS_GUEST_EFER);
        if (value & ~allowed)
            return MSR_FAULT;
        /* LME may not change while paging is on; LMA follows CR0.PG (emulate_cr_access). */
        if ((guest_cr0(s) & CR0_PG) && ((value ^ efer) & EFER_LME))
            return MSR_FAULT;
        vmwrite(VMCS_GUEST_EFER, (value & ~EFER_LMA) | (efer & EFER_LMA));
        return MSR_DONE;
    }
    if (index == MSR_PAT && !vmx_pat_valid(value))
        return MSR_FAULT;
    if (index == MSR_SYSENTER_CS || index == MSR_SFMASK)
        value = (uint32_t)value;
    uint32_t field = vmcs_msr_field(index);
    if (field) {
        vmwrite(field, value);
        return MSR_DONE;
    }
    int slot = syscall_slot(index);
    if (slot < 0)
        return MSR_NOT_MINE;
    s->syscall[slot] = value;
    if (value)
        s->syscall_live = true;
    return MSR_DONE;
}

/* Control changes reach the VMCS at the next entry (prepare_entry). */
static void vmx_set_intercept(struct vcpu *v, enum intercept what, bool on)
{
    (void)what; /* INTERCEPT_HLT */
    struct vmx_vcpu *s = v->arch;
    set_bit(&s->proc, PROC_HLT, on);
}

static enum pause_hw vmx_pause_hw(void)
{
    if (ctls.available & VMX_OPT_PLE)
        return PAUSE_HW_LOOP;
    return (ctls.available & VMX_OPT_PAUSE_EXITING) ? PAUSE_HW_EVERY : PAUSE_HW_NONE;
}

/* Without PLE the window fields do not exist: they are never written (prepare_entry). */
static void vmx_set_pause_exiting(struct vcpu *v, enum pause_exiting mode, uint32_t window,
                                  uint32_t gap)
{
    struct vmx_vcpu *s = v->arch;
    s->pause_mode = mode;
    vmx_pause_controls(ctls.available, mode, &s->proc, &s->proc2);
    if (ctls.available & VMX_OPT_PLE) {
        s->ple_window = window;
        s->ple_gap = gap;
    }
}

static void vmx_set_tsc_offset(struct vcpu *v, uint64_t offset)
{
    struct vmx_vcpu *s = v->arch;
    s->tsc_offset = offset;
}

static bool event_queued(const struct vmx_vcpu *s)
{
    return s->event_injected || (s->reinject & INTR_INFO_VALID);
}

static bool vmx_in_interrupt_shadow(struct vcpu *v)
{
    loaded(v);
    return vmread(VMCS_GUEST_INTERRUPTIBILITY) & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS);
}

static bool vmx_interrupt_allowed(struct vcpu *v)
{
    struct vmx_vcpu *s = loaded(v);
    uint32_t x = (uint32_t)vmread(VMCS_GUEST_INTERRUPTIBILITY);
    return (v->regs.rflags & RFLAGS_IF) && !(x & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS)) &&
           !event_queued(s);
}

static void vmx_inject_interrupt(struct vcpu *v, uint8_t vector)
{
    struct vmx_vcpu *s = loaded(v);
    vmwrite(VMCS_ENTRY_INTR_INFO,
            vector | (INTR_TYPE_EXT << INTR_INFO_TYPE_SHIFT) | INTR_INFO_VALID);
    s->event_injected = true;
}

static void vmx_set_interrupt_window(struct vcpu *v, bool on)
{
    struct vmx_vcpu *s = v->arch;
    set_bit(&s->proc, PROC_INTR_WINDOW, on);
}

/* Bit 3 is blocking by virtual NMI with virtual NMIs, the guest's real NMI blocking without. */
static bool vmx_nmi_allowed(struct vcpu *v)
{
    struct vmx_vcpu *s = loaded(v);
    uint32_t x = (uint32_t)vmread(VMCS_GUEST_INTERRUPTIBILITY);
    return !(x & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS | INTERRUPTIBILITY_NMI)) &&
           !event_queued(s);
}

static bool is_nmi_event(uint32_t info)
{
    return (info & INTR_INFO_VALID) &&
           ((info & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT) == INTR_TYPE_NMI;
}

static bool vmx_nmi_in_service(struct vcpu *v)
{
    struct vmx_vcpu *s = loaded(v);
    if (vmread(VMCS_GUEST_INTERRUPTIBILITY) & INTERRUPTIBILITY_NMI)
        return true;
    if (s->event_injected && is_nmi_event((uint32_t)vmread(VMCS_ENTRY_INTR_INFO)))
        return true;
    return is_nmi_event(s->reinject);
}

static void vmx_inject_nmi(struct vcpu *v)
{
    struct vmx_vcpu *s = loaded(v);
    vmwrite(VMCS_ENTRY_INTR_INFO, 2 | (INTR_TYPE_NMI << INTR_INFO_TYPE_SHIFT) | INTR_INFO_VALID);
    s->event_injected = true;
    set_bit(&s->proc, PROC_NMI_WINDOW, false);
}

/*
 * Exit as soon as the guest can take an NMI. Disarmed by that exit (as SVM's
 * IRET intercept is) and by inject_nmi. Without virtual NMIs the CPU has no
 * such exit: the NMI then waits for the next exit of another kind.
 */
static void vmx_set_nmi_window(struct vcpu *v, bool on)
{
    struct vmx_vcpu *s = v->arch;
    if (ctls.available & VMX_OPT_VIRTUAL_NMIS)
        set_bit(&s->proc, PROC_NMI_WINDOW, on);
}

static bool vmx_entry_is_plain(struct vcpu *v)
{
    const struct vmx_vcpu *s = v->arch;
    return !event_queued(s) && !(s->proc & (PROC_INTR_WINDOW | PROC_NMI_WINDOW));
}

static bool vmx_set_preemption_timer(struct vcpu *v, uint64_t tsc_deadline)
{
    struct vmx_vcpu *s = v->arch;
    if (!(ctls.available & VMX_OPT_PREEMPTION_TIMER))
        return false;
    s->timer_deadline = tsc_deadline;
    return true;
}

const struct virt_ops vmx_ops = {
    .name = "vmx",
    .cpu_enable = vmx_cpu_enable,
    .vm_init = vmx_vm_init,
    .vm_map = vmx_vm_map,
    .vm_destroy = vmx_vm_destroy,
    .vcpu_create = vmx_vcpu_create,
    .vcpu_destroy = vmx_vcpu_destroy,
    .vcpu_reset_protected = vmx_vcpu_reset_protected,
    .vcpu_run = vmx_vcpu_run,
    .inject_exception = vmx_inject_exception,
    .get_mode = vmx_get_mode,
    .end_emulated_instruction = vmx_end_emulated_instruction,
    .msr_read = vmx_msr_read,
    .msr_write = vmx_msr_write,
    .set_intercept = vmx_set_intercept,
    .pause_hw = vmx_pause_hw,
    .set_pause_exiting = vmx_set_pause_exiting,
    .set_tsc_offset = vmx_set_tsc_offset,
    .set_preemption_timer = vmx_set_preemption_timer,
    .interrupt_allowed = vmx_interrupt_allowed,
    .in_interrupt_shadow = vmx_in_interrupt_shadow,
    .inject_interrupt = vmx_inject_interrupt,
    .set_interrupt_window = vmx_set_interrupt_window,
    .nmi_allowed = vmx_nmi_allowed,
    .nmi_in_service = vmx_nmi_in_service,
    .inject_nmi = vmx_inject_nmi,
    .set_nmi_window = vmx_set_nmi_window,
    .entry_is_plain = vmx_entry_is_plain,
    .vcpu_reset_real = vmx_vcpu_reset_real,
    .vcpu_unload = vmx_vcpu_unload,
    .unload_to_move = true,
};

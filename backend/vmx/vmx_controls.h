/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What pollux writes into a VMCS, derived from the VMX capability MSRs: the
 * execution/exit/entry controls, the guest/host masks that keep the bits
 * VMX forces in CR0/CR4 out of the guest's sight, the rules for guest writes
 * to those registers, and the multiboot entry state. Pure (no VMREAD or
 * VMWRITE), so host unit tests run all of it on recorded capability values.
 */
#ifndef POLLUX_BACKEND_VMX_VMX_CONTROLS_H
#define POLLUX_BACKEND_VMX_VMX_CONTROLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/virt.h"

/* The capability MSRs, as read. */
struct vmx_caps {
    uint64_t basic;                  /* IA32_VMX_BASIC */
    uint64_t pin, proc, exit, entry; /* 0x481-0x484 */
    uint64_t true_pin, true_proc;    /* 0x48D, 0x48E: read only when basic bit 55 is set */
    uint64_t true_exit, true_entry;  /* 0x48F, 0x490: likewise */
    uint64_t proc2;                  /* 0x48B, 0 when secondary controls cannot be enabled */
    uint64_t ept_vpid;               /* 0x48C, 0 unless EPT or VPID can be enabled */
    uint64_t misc;                   /* 0x485 */
    uint64_t cr0_fixed0, cr0_fixed1; /* 0x486, 0x487 */
    uint64_t cr4_fixed0, cr4_fixed1; /* 0x488, 0x489 */
    unsigned phys_bits;              /* MAXPHYADDR (CPUID 0x80000008 EAX[7:0]) */
    unsigned vaddr_bits;             /* linear-address width (EAX[15:8]): 57 with LA57 */
};

/* The control MSR that governs each control word: TRUE_* when basic bit 55 says so. */
uint64_t vmx_cap_pin(const struct vmx_caps *c);
uint64_t vmx_cap_proc(const struct vmx_caps *c);
uint64_t vmx_cap_exit(const struct vmx_caps *c);
uint64_t vmx_cap_entry(const struct vmx_caps *c);

/* Features pollux uses when the CPU has them and works without otherwise. */
enum vmx_optional {
    VMX_OPT_VIRTUAL_NMIS = 1u << 0,     /* with NMI-window exiting */
    VMX_OPT_PREEMPTION_TIMER = 1u << 1, /* set in pin controls only while armed */
    VMX_OPT_VPID = 1u << 2,
    VMX_OPT_PLE = 1u << 3,
    VMX_OPT_PAUSE_EXITING = 1u << 4, /* unconditional; used only without PLE */
    VMX_OPT_RDTSCP = 1u << 5,
    VMX_OPT_INVPCID = 1u << 6,
    VMX_OPT_XSAVES = 1u << 7,
};
#define VMX_OPT_ALL 0xffu

const char *vmx_optional_name(unsigned bit);

struct vmx_controls {
    /* Every VMCS starts with these; the backend toggles the HLT, PAUSE, timer, window and IA-32e
     * bits. */
    uint32_t pin, proc, proc2, exit, entry;
    unsigned available; /* enum vmx_optional bits the CPU has */
    unsigned missing;   /* and those it lacks */
    /*
     * The narrowest INVEPT and INVVPID types the CPU offers (single-context
     * where it has it, else all-context): what a flush of one VM's EPT or
     * one vCPU's VPID executes.
     */
    unsigned invept_type, invvpid_type;
};

/*
 * Derive the controls: bits a capability MSR reports as allowed-0 (low half)
 * must be 1, bits outside its allowed-1 set (high half) must be 0. Returns
 * -1 with err set when a control pollux needs is unsupported, or when the
 * CPU forces on a control whose exits pollux does not handle (CR3/CR8
 * exiting without true controls, for example).
 */
int vmx_derive_controls(const struct vmx_caps *c, struct vmx_controls *out, char *err,
                        size_t errlen);

/* One segment register as the VMCS holds it. */
struct vmx_segment {
    uint16_t sel;
    uint32_t limit,
        ar; /* ar: type[3:0] S[4] DPL[6:5] P[7] AVL[12] L[13] D/B[14] G[15] unusable[16] */
    uint64_t base;
};

/* In VMCS encoding order: field = base encoding + 2 * index. */
enum vmx_seg { SEG_ES, SEG_CS, SEG_SS, SEG_DS, SEG_FS, SEG_GS, SEG_LDTR, SEG_TR, SEG_COUNT };

struct vmx_guest_state {
    uint64_t cr0, cr3, cr4, dr7, debugctl, efer, pat;
    uint64_t rsp, rip, rflags, pending_dbg, link;
    uint64_t sysenter_esp, sysenter_eip;
    uint32_t sysenter_cs;
    struct vmx_segment seg[SEG_COUNT];
    uint64_t gdtr_base, idtr_base;
    uint32_t gdtr_limit, idtr_limit;
    uint32_t interruptibility, activity;
    uint64_t pdpte[4];
};

struct vmx_control_state {
    uint32_t pin, proc, proc2, exit, entry;
    uint32_t exception_bitmap, cr3_target_count;
    uint32_t exit_msr_store_count, exit_msr_load_count, entry_msr_load_count;
    uint64_t io_bitmap_a, io_bitmap_b, msr_bitmap, eptp, tsc_offset;
    uint16_t vpid;
    uint32_t entry_intr_info, entry_error_code, entry_insn_len;
    uint64_t cr0_mask, cr4_mask, cr0_shadow, cr4_shadow;
    uint32_t ple_gap, ple_window;
};

struct vmx_host_state {
    uint64_t cr0, cr3, cr4, efer, pat;
    uint64_t fs_base, gs_base, tr_base, gdtr_base, idtr_base;
    uint64_t sysenter_esp, sysenter_eip, rsp, rip;
    uint32_t sysenter_cs;
    uint16_t cs, ss, ds, es, fs, gs, tr;
};

/* Everything VM entry checks. */
struct vmcs_state {
    struct vmx_control_state ctl;
    struct vmx_host_state host;
    struct vmx_guest_state guest;
};

/*
 * The PAUSE controls for a set_pause_exiting request, given the optional
 * features available: FILTERED is PAUSE-loop exiting, EVERY unconditional
 * PAUSE exiting. Never both: unconditional exiting would override PLE.
 */
void vmx_pause_controls(unsigned available, enum pause_exiting mode, uint32_t *proc,
                        uint32_t *proc2);

/*
 * How PAUSE can exit with these optional features: PLE where the CPU has it,
 * unconditional PAUSE exiting otherwise (QEMU's and KVM's nested VMX give an
 * L1 no PLE), or not at all.
 */
enum pause_hw vmx_pause_hw_of(unsigned available);

/*
 * Making a vCPU's VMCS current on a CPU (vmcs_load in vmx_vmcs.h). A VMCS is
 * active on at most one CPU, and only that CPU can VMCLEAR it: until then
 * no other CPU may load it. On the CPU where it is active, VMPTRLD is
 * enough; a cleared VMCS coming to a CPU also needs that CPU's host state
 * and a flush of the EPT and VPID translations the CPU may cache from an
 * earlier user of them.
 */
enum vmx_load_action {
    VMX_LOAD_CURRENT, /* already the current VMCS here: nothing to do */
    VMX_LOAD_PTRLD,   /* active here, not current: VMPTRLD */
    VMX_LOAD_FRESH,   /* cleared: VMPTRLD, host state, INVEPT and INVVPID */
    VMX_LOAD_REFUSE,  /* active on another CPU: vcpu_unload there first */
};

enum vmx_load_action vmx_load_action(bool current_here, int active_cpu, unsigned cpu);

/*
 * CR0/CR4 bits the host owns (guest/host mask): those VMX forces (CR0.NE,
 * CR4.VMXE, whatever the FIXED MSRs add), CR0.PE/PG, which the guest may
 * change only through pollux because a PG change may switch long mode on or
 * off, and CR0.CD/NW, which VM entry does not load. The guest reads the
 * masked bits from the read shadow.
 */
uint64_t vmx_cr0_mask(const struct vmx_caps *c);
uint64_t vmx_cr4_mask(const struct vmx_caps *c);
/* The value the CPU runs with for a guest-visible value. */
uint64_t vmx_cr0_real(const struct vmx_caps *c, uint64_t guest_cr0);
uint64_t vmx_cr4_real(const struct vmx_caps *c, uint64_t guest_cr4);

/* Guest-visible paging state that an emulated CR write changes. */
struct vmx_cr_state {
    uint64_t cr0, cr4, efer; /* cr0/cr4 as the guest sees them */
    uint32_t entry;          /* VM-entry controls (IA-32e mode guest) */
};

/*
 * MOV to CR0 / CR4 (and LMSW) as the CPU would execute them. value is what
 * the guest wrote (already truncated to 32 bits outside 64-bit code). On
 * success updates s, switching EFER.LMA and the IA-32e mode guest control
 * when CR0.PG changes with EFER.LME set, and returns 0; returns -1 when the
 * CPU would raise #GP (s unchanged).
 */
int vmx_cr0_write(const struct vmx_caps *c, struct vmx_cr_state *s, uint64_t value, bool code64);
int vmx_cr4_write(const struct vmx_caps *c, struct vmx_cr_state *s, uint64_t value);
/* LMSW: loads CR0 bits 3:0, but cannot clear PE. */
uint64_t vmx_lmsw_value(uint64_t cr0, uint16_t source);
/* True when the guest uses PAE paging outside long mode (PDPTEs live in the VMCS). */
bool vmx_pae_paging(const struct vmx_cr_state *s);

/*
 * The multiboot entry state: 32-bit protected mode, paging off, flat
 * segments, entry at eip; controls from ctls. Addresses the state refers to
 * (bitmaps, EPTP, VPID, TSC offset) and the host state are the caller's.
 */
void vmx_reset_state(const struct vmx_caps *c, const struct vmx_controls *ctls, uint32_t eip,
                     struct vmcs_state *s);
/* The state after INIT and a startup IPI: real mode, CS = vector << 8, IP = 0. */
void vmx_reset_state_real(const struct vmx_caps *c, const struct vmx_controls *ctls,
                          uint8_t sipi_vector, struct vmcs_state *s);

#endif

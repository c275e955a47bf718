/* SPDX-License-Identifier: GPL-2.0-only */
#include "backend/vmx/vmx_controls.h"

#include "arch/x86/vmcs.h"
#include "lib/format.h"
#include "lib/string.h"

/*
 * Bits that the original (non-TRUE) control MSRs report as always 1: the
 * reserved "default1" bits, plus CR3-load/store exiting (primary) and the
 * debug-control save/load bits (exit/entry). Forced reserved bits and the
 * debug-control bits are harmless (pollux saves and loads DR7 anyway);
 * forced CR3 exiting is not, as pollux never intercepts CR3.
 */
#define PIN_DEFAULT1   0x00000016u
#define PROC_DEFAULT1  (0x0401e172u & ~(PROC_CR3_LOAD | PROC_CR3_STORE))
#define EXIT_DEFAULT1  0x00036dffu
#define ENTRY_DEFAULT1 0x000011ffu

/* Reserved CR0 bits (31:0) are ignored on writes; ET reads as 1 on every CPU since the P6. */
#define CR0_WRITABLE                                                                               \
    (CR0_PE | CR0_MP | CR0_EM | CR0_TS | CR0_ET | CR0_NE | CR0_WP | (1ull << 18) | CR0_NW |        \
     CR0_CD | CR0_PG)

struct named_bit {
    uint32_t bit;
    const char *name;
};

static const struct named_bit pin_names[] = {
    {PIN_EXT_INTR, "external-interrupt exiting"},
    {PIN_NMI, "NMI exiting"},
    {0, 0},
};

static const struct named_bit proc_names[] = {
    {PROC_INTR_WINDOW, "interrupt-window exiting"},
    {PROC_TSC_OFFSET, "use TSC offsetting"},
    {PROC_HLT, "HLT exiting"},
    {PROC_INVLPG, "INVLPG exiting"},
    {PROC_MWAIT, "MWAIT exiting"},
    {PROC_RDPMC, "RDPMC exiting"},
    {PROC_RDTSC, "RDTSC exiting"},
    {PROC_CR3_LOAD, "CR3-load exiting"},
    {PROC_CR3_STORE, "CR3-store exiting"},
    {PROC_CR8_LOAD, "CR8-load exiting"},
    {PROC_CR8_STORE, "CR8-store exiting"},
    {PROC_TPR_SHADOW, "use TPR shadow"},
    {PROC_NMI_WINDOW, "NMI-window exiting"},
    {PROC_MOV_DR, "MOV-DR exiting"},
    {PROC_IO_BITMAPS, "use I/O bitmaps"},
    {PROC_MTF, "monitor trap flag"},
    {PROC_MSR_BITMAPS, "use MSR bitmaps"},
    {PROC_MONITOR, "MONITOR exiting"},
    {PROC_SECONDARY, "activate secondary controls"},
    {0, 0},
};

static const struct named_bit proc2_names[] = {
    {PROC2_EPT, "enable EPT"},
    {PROC2_UNRESTRICTED, "unrestricted guest"},
    {0, 0},
};

static const struct named_bit exit_names[] = {
    {EXIT_SAVE_DEBUG, "save debug controls"},
    {EXIT_HOST_64, "host address-space size"},
    {EXIT_ACK_INTR, "acknowledge interrupt on exit"},
    {EXIT_SAVE_PAT, "save IA32_PAT"},
    {EXIT_LOAD_PAT, "load IA32_PAT"},
    {EXIT_SAVE_EFER, "save IA32_EFER"},
    {EXIT_LOAD_EFER, "load IA32_EFER"},
    {0, 0},
};

static const struct named_bit entry_names[] = {
    {ENTRY_LOAD_DEBUG, "load debug controls"},
    {ENTRY_IA32E, "IA-32e mode guest"},
    {ENTRY_SMM, "entry to SMM"},
    {ENTRY_DUAL_MON, "deactivate dual-monitor treatment"},
    {ENTRY_LOAD_PAT, "load IA32_PAT"},
    {ENTRY_LOAD_EFER, "load IA32_EFER"},
    {0, 0},
};

static const char *const optional_names[] = {
    "virtual NMIs",  "VMX-preemption timer",
    "VPID",          "PAUSE-loop exiting",
    "PAUSE exiting", "RDTSCP",
    "INVPCID",       "XSAVES",
};

const char *vmx_optional_name(unsigned bit)
{
    for (unsigned i = 0; i < sizeof(optional_names) / sizeof(optional_names[0]); i++)
        if (bit == 1u << i)
            return optional_names[i];
    return "?";
}

uint64_t vmx_cap_pin(const struct vmx_caps *c)
{
    return (c->basic & VMX_BASIC_TRUE_CTLS) ? c->true_pin : c->pin;
}

uint64_t vmx_cap_proc(const struct vmx_caps *c)
{
    return (c->basic & VMX_BASIC_TRUE_CTLS) ? c->true_proc : c->proc;
}

uint64_t vmx_cap_exit(const struct vmx_caps *c)
{
    return (c->basic & VMX_BASIC_TRUE_CTLS) ? c->true_exit : c->exit;
}

uint64_t vmx_cap_entry(const struct vmx_caps *c)
{
    return (c->basic & VMX_BASIC_TRUE_CTLS) ? c->true_entry : c->entry;
}

static unsigned lowest_bit(uint32_t v)
{
    return (unsigned)__builtin_ctz(v);
}

static const char *bit_name(const struct named_bit *t, uint32_t bit)
{
    for (; t->name; t++)
        if (t->bit == bit)
            return t->name;
    return "reserved";
}

/* Settable bits are in the high half of a capability MSR, forced bits in the low half. */
static bool can_set(uint64_t cap, uint32_t bits)
{
    return ((uint32_t)(cap >> 32) & bits) == bits;
}

static int adjust(const char *word, const struct named_bit *names, uint64_t cap, uint32_t required,
                  uint32_t optional, uint32_t harmless, uint32_t *out, char *err, size_t errlen)
{
    uint32_t forced = (uint32_t)cap, allowed = (uint32_t)(cap >> 32);
    uint32_t lacking = required & ~allowed;
    if (lacking) {
        uint32_t b = 1u << lowest_bit(lacking);
        snprintf(err, errlen, "the CPU lacks the %s control '%s' (bit %u)", word,
                 bit_name(names, b), lowest_bit(lacking));
        return -1;
    }
    uint32_t unwanted = forced & ~(required | optional | harmless);
    if (unwanted) {
        uint32_t b = 1u << lowest_bit(unwanted);
        snprintf(err, errlen,
                 "the CPU forces the %s control '%s' (bit %u) on, whose exits pollux does not "
                 "handle",
                 word, bit_name(names, b), lowest_bit(unwanted));
        return -1;
    }
    *out = forced | required | (optional & allowed);
    return 0;
}

/* Record an optional feature as available or missing. */
static void note(struct vmx_controls *o, enum vmx_optional f, bool have)
{
    if (have)
        o->available |= f;
    else
        o->missing |= f;
}

int vmx_derive_controls(const struct vmx_caps *c, struct vmx_controls *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    uint64_t pin = vmx_cap_pin(c), proc = vmx_cap_proc(c), exit = vmx_cap_exit(c),
             entry = vmx_cap_entry(c);

    if (adjust("pin-based", pin_names, pin, PIN_EXT_INTR | PIN_NMI, PIN_VIRTUAL_NMIS, PIN_DEFAULT1,
               &o->pin, err, errlen))
        return -1;
    /* Virtual NMIs come with NMI-window exiting, the way to inject an NMI once unblocked. */
    bool vnmi = (o->pin & PIN_VIRTUAL_NMIS) && can_set(proc, PROC_NMI_WINDOW);
    if (!vnmi)
        o->pin &= ~PIN_VIRTUAL_NMIS;
    note(o, VMX_OPT_VIRTUAL_NMIS, vnmi);
    note(o, VMX_OPT_PREEMPTION_TIMER, can_set(pin, PIN_PREEMPTION_TIMER));

    /* CR8 is the guest's TPR: without these exits MOV CR8 would write the host's. */
    uint32_t proc_required = PROC_TSC_OFFSET | PROC_HLT | PROC_MWAIT | PROC_IO_BITMAPS |
                             PROC_MSR_BITMAPS | PROC_MONITOR | PROC_SECONDARY | PROC_CR8_LOAD |
                             PROC_CR8_STORE;
    if (adjust("primary processor-based", proc_names, proc, proc_required, 0, PROC_DEFAULT1,
               &o->proc, err, errlen))
        return -1;
    /* Not set at first, but needed to inject an interrupt as soon as the guest can take it. */
    if (!can_set(proc, PROC_INTR_WINDOW)) {
        snprintf(err, errlen,
                 "the CPU lacks the primary processor-based control "
                 "'interrupt-window exiting' (bit 2)");
        return -1;
    }

    /* Secondary controls have no forced bits (their allowed-0 half is all zeros). */
    uint32_t proc2_optional = PROC2_PLE | PROC2_RDTSCP | PROC2_INVPCID | PROC2_XSAVES;
    /* VPID without INVVPID could never flush a reused VPID's translations. */
    if ((c->ept_vpid & VPID_CAP_INVVPID) && (c->ept_vpid & (VPID_CAP_SINGLE | VPID_CAP_ALL)))
        proc2_optional |= PROC2_VPID;
    if (adjust("secondary processor-based", proc2_names, c->proc2, PROC2_EPT | PROC2_UNRESTRICTED,
               proc2_optional, 0, &o->proc2, err, errlen))
        return -1;
    if (!(c->ept_vpid & EPT_CAP_WALK4) || !(c->ept_vpid & EPT_CAP_WB)) {
        snprintf(err, errlen, "EPT lacks 4-level page walks or the write-back memory type");
        return -1;
    }
    /* Without INVEPT, translations cached for a reused EPT root could never be flushed. */
    if (!(c->ept_vpid & EPT_CAP_INVEPT) ||
        !(c->ept_vpid & (EPT_CAP_INVEPT_SINGLE | EPT_CAP_INVEPT_ALL))) {
        snprintf(err, errlen, "the CPU lacks INVEPT (single-context or all-context)");
        return -1;
    }
    o->invept_type = (c->ept_vpid & EPT_CAP_INVEPT_SINGLE) ? INVEPT_SINGLE : INVEPT_ALL;
    o->invvpid_type = (c->ept_vpid & VPID_CAP_SINGLE) ? INVVPID_SINGLE : INVVPID_ALL;
    note(o, VMX_OPT_VPID, o->proc2 & PROC2_VPID);
    note(o, VMX_OPT_PLE, o->proc2 & PROC2_PLE);
    note(o, VMX_OPT_RDTSCP, o->proc2 & PROC2_RDTSCP);
    note(o, VMX_OPT_INVPCID, o->proc2 & PROC2_INVPCID);
    note(o, VMX_OPT_XSAVES, o->proc2 & PROC2_XSAVES);
    /* Unconditional PAUSE exiting stands in for PLE only; with PLE it is never set. */
    if (!(o->available & VMX_OPT_PLE))
        note(o, VMX_OPT_PAUSE_EXITING, can_set(proc, PROC_PAUSE));

    uint32_t exit_required = EXIT_SAVE_DEBUG | EXIT_HOST_64 | EXIT_SAVE_PAT | EXIT_LOAD_PAT |
                             EXIT_SAVE_EFER | EXIT_LOAD_EFER;
    if (adjust("VM-exit", exit_names, exit, exit_required, 0, EXIT_DEFAULT1, &o->exit, err, errlen))
        return -1;

    if (adjust("VM-entry", entry_names, entry, ENTRY_LOAD_DEBUG | ENTRY_LOAD_PAT | ENTRY_LOAD_EFER,
               0, ENTRY_DEFAULT1, &o->entry, err, errlen))
        return -1;
    /* Not set at first, but a guest that enables long mode needs it. */
    if (!can_set(entry, ENTRY_IA32E)) {
        snprintf(err, errlen, "the CPU lacks the VM-entry control 'IA-32e mode guest' (bit 9)");
        return -1;
    }
    return 0;
}

uint64_t vmx_cr0_mask(const struct vmx_caps *c)
{
    /*
     * VM entry and exit leave CR0.CD and NW alone: unmasked, the guest would
     * see the host's cache settings and change them for the host too.
     */
    return ((c->cr0_fixed0 | ~c->cr0_fixed1) & 0xffffffffu) | CR0_PE | CR0_PG | CR0_CD | CR0_NW;
}

uint64_t vmx_cr4_mask(const struct vmx_caps *c)
{
    return (c->cr4_fixed0 | ~c->cr4_fixed1) & 0xffffffffu;
}

uint64_t vmx_cr0_real(const struct vmx_caps *c, uint64_t guest_cr0)
{
    /* Unrestricted guest lifts the PE and PG requirements. */
    return guest_cr0 | (c->cr0_fixed0 & ~(CR0_PE | CR0_PG));
}

uint64_t vmx_cr4_real(const struct vmx_caps *c, uint64_t guest_cr4)
{
    return guest_cr4 | c->cr4_fixed0;
}

int vmx_cr0_write(const struct vmx_caps *c, struct vmx_cr_state *s, uint64_t value, bool code64)
{
    if (value >> 32)
        return -1;
    value = (value & CR0_WRITABLE) | CR0_ET;
    if ((value & CR0_PG) && !(value & CR0_PE))
        return -1;
    if ((value & CR0_NW) && !(value & CR0_CD))
        return -1;
    if (value & ~c->cr0_fixed1)
        return -1;
    uint64_t efer = s->efer;
    uint32_t entry = s->entry;
    if (!(s->cr0 & CR0_PG) && (value & CR0_PG) && (efer & EFER_LME)) {
        /* Paging on with LME set: the switch into IA-32e mode. */
        if (!(s->cr4 & CR4_PAE))
            return -1;
        efer |= EFER_LMA;
        entry |= ENTRY_IA32E;
    } else if ((s->cr0 & CR0_PG) && !(value & CR0_PG)) {
        /* Leaving long mode is allowed from compatibility mode only. */
        if (code64 || (s->cr4 & CR4_PCIDE))
            return -1;
        efer &= ~EFER_LMA;
        entry &= ~ENTRY_IA32E;
    }
    s->cr0 = value;
    s->efer = efer;
    s->entry = entry;
    return 0;
}

int vmx_cr4_write(const struct vmx_caps *c, struct vmx_cr_state *s, uint64_t value)
{
    /* VMX itself stays hidden from the guest. */
    if (value & ~(c->cr4_fixed1 & ~CR4_VMXE))
        return -1;
    if ((s->efer & EFER_LMA) && !(value & CR4_PAE))
        return -1;
    if ((value & CR4_PCIDE) && !(s->cr4 & CR4_PCIDE) && !(s->efer & EFER_LMA))
        return -1;
    s->cr4 = value;
    return 0;
}

uint64_t vmx_lmsw_value(uint64_t cr0, uint16_t source)
{
    return (cr0 & ~0xfull) | (source & 0xfu) | (cr0 & CR0_PE);
}

bool vmx_pae_paging(const struct vmx_cr_state *s)
{
    return (s->cr0 & CR0_PG) && (s->cr4 & CR4_PAE) && !(s->efer & EFER_LMA);
}

static struct vmx_segment segment(uint16_t sel, uint64_t base, uint32_t limit, uint32_t ar)
{
    return (struct vmx_segment){.sel = sel, .limit = limit, .ar = ar, .base = base};
}

/* What every reset state shares: controls, masks, and the registers INIT clears. */
static void reset_common(const struct vmx_caps *c, const struct vmx_controls *ctls,
                         uint64_t cr0_shadow, struct vmcs_state *s)
{
    memset(s, 0, sizeof(*s));
    struct vmx_control_state *k = &s->ctl;
    k->pin = ctls->pin;
    k->proc = ctls->proc;
    k->proc2 = ctls->proc2;
    k->exit = ctls->exit;
    k->entry = ctls->entry;
    k->cr0_mask = vmx_cr0_mask(c);
    k->cr4_mask = vmx_cr4_mask(c);
    k->cr0_shadow = cr0_shadow;
    k->cr4_shadow = 0;

    struct vmx_guest_state *g = &s->guest;
    g->cr0 = vmx_cr0_real(c, k->cr0_shadow);
    g->cr4 = vmx_cr4_real(c, k->cr4_shadow);
    g->dr7 = 0x400;
    g->pat = PAT_DEFAULT;
    g->rflags = RFLAGS_FIXED;
    g->link = ~0ull;
    g->seg[SEG_LDTR] = segment(0, 0, 0, AR_UNUSABLE);
    g->seg[SEG_TR] = segment(0, 0, 0xffff, 0x8b); /* busy 32-bit TSS */
    g->gdtr_limit = g->idtr_limit = 0xffff;
    g->activity = ACTIVITY_ACTIVE;
}

void vmx_reset_state(const struct vmx_caps *c, const struct vmx_controls *ctls, uint32_t eip,
                     struct vmcs_state *s)
{
    reset_common(c, ctls, CR0_PE | CR0_ET, s);
    struct vmx_guest_state *g = &s->guest;
    g->rip = eip;
    /* Accessed types: VM entry rejects segment registers that were never loaded. */
    g->seg[SEG_CS] = segment(0x08, 0, 0xffffffffu, 0xc09b);
    g->seg[SEG_ES] = g->seg[SEG_SS] = g->seg[SEG_DS] = g->seg[SEG_FS] = g->seg[SEG_GS] =
        segment(0x10, 0, 0xffffffffu, 0xc093);
}

void vmx_reset_state_real(const struct vmx_caps *c, const struct vmx_controls *ctls,
                          uint8_t sipi_vector, struct vmcs_state *s)
{
    /* ET only: caches on (CD/NW would only slow an emulated guest), as on SVM. */
    reset_common(c, ctls, CR0_ET, s);
    struct vmx_guest_state *g = &s->guest;
    g->rip = 0;
    g->seg[SEG_CS] =
        segment((uint16_t)(sipi_vector << 8), (uint64_t)sipi_vector << 12, 0xffff, 0x9b);
    g->seg[SEG_ES] = g->seg[SEG_SS] = g->seg[SEG_DS] = g->seg[SEG_FS] = g->seg[SEG_GS] =
        segment(0, 0, 0xffff, 0x93);
}

void vmx_pause_controls(unsigned available, enum pause_exiting mode, uint32_t *proc,
                        uint32_t *proc2)
{
    *proc &= ~PROC_PAUSE;
    *proc2 &= ~PROC2_PLE;
    if (mode == PAUSE_EXIT_FILTERED && (available & VMX_OPT_PLE))
        *proc2 |= PROC2_PLE;
    else if (mode == PAUSE_EXIT_EVERY && (available & VMX_OPT_PAUSE_EXITING))
        *proc |= PROC_PAUSE;
}

enum pause_hw vmx_pause_hw_of(unsigned available)
{
    if (available & VMX_OPT_PLE)
        return PAUSE_HW_LOOP;
    return (available & VMX_OPT_PAUSE_EXITING) ? PAUSE_HW_EVERY : PAUSE_HW_NONE;
}

enum vmx_load_action vmx_load_action(bool current_here, int active_cpu, unsigned cpu)
{
    if (current_here)
        return VMX_LOAD_CURRENT;
    if (active_cpu < 0)
        return VMX_LOAD_FRESH;
    return active_cpu == (int)cpu ? VMX_LOAD_PTRLD : VMX_LOAD_REFUSE;
}

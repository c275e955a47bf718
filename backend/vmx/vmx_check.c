/* SPDX-License-Identifier: GPL-2.0-only */
#include "backend/vmx/vmx_check.h"

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/vmcs.h"
#include "lib/format.h"

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(why, len, __VA_ARGS__);                                                           \
        return -1;                                                                                 \
    } while (0)
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            FAIL(__VA_ARGS__);                                                                     \
    } while (0)

#define AR_RESERVED        0xfffe0f00u           /* bits 11:8 and 31:17 */
#define RFLAGS_RESERVED    0xffffffffffc08028ull /* 63:22, 15, 5, 3 */
#define PENDING_DBG_RSVD   0xfffffffffffeaff0ull /* 11:4, 13, 15, 63:17 */
#define PENDING_DBG_BS     (1ull << 14)
#define DEBUGCTL_BTF       (1ull << 1)
#define INTR_INFO_RESERVED 0x7ffff000u
#define EFER_KNOWN         (EFER_SCE | EFER_LME | EFER_LMA | EFER_NXE)

static const char *const seg_names[SEG_COUNT] = {"ES", "CS", "SS", "DS", "FS", "GS", "LDTR", "TR"};

bool vmx_canonical(const struct vmx_caps *c, uint64_t a)
{
    unsigned shift = 64 - c->vaddr_bits;
    return (uint64_t)((int64_t)(a << shift) >> shift) == a;
}

static bool beyond_phys(const struct vmx_caps *c, uint64_t pa)
{
    return c->phys_bits < 64 && (pa >> c->phys_bits) != 0;
}

bool vmx_pat_valid(uint64_t pat)
{
    for (int i = 0; i < 8; i++) {
        uint8_t t = (pat >> (8 * i)) & 0xff;
        if (t == 2 || t == 3 || t > 7)
            return false;
    }
    return true;
}

/* G must be 1 when the limit exceeds 1 MiB, and 0 unless the low 12 limit bits are all ones. */
static bool granularity_ok(const struct vmx_segment *s)
{
    if ((s->limit & 0xfff) != 0xfff && (s->ar & AR_G))
        return false;
    if ((s->limit >> 20) && !(s->ar & AR_G))
        return false;
    return true;
}

static unsigned dpl(const struct vmx_segment *s)
{
    return (s->ar >> AR_DPL_SHIFT) & 3;
}

static bool usable(const struct vmx_segment *s)
{
    return !(s->ar & AR_UNUSABLE);
}

/* A control word against its capability MSR: forced bits set, unsupported bits clear. */
static int check_word(const char *word, uint32_t v, uint64_t cap, char *why, size_t len)
{
    uint32_t forced = (uint32_t)cap, allowed = (uint32_t)(cap >> 32);
    if ((v & forced) != forced)
        FAIL("%s controls 0x%08x: bit %u must be 1 on this CPU", word, v,
             (unsigned)__builtin_ctz(forced & ~v));
    if (v & ~allowed)
        FAIL("%s controls 0x%08x: bit %u is not supported by this CPU", word, v,
             (unsigned)__builtin_ctz(v & ~allowed));
    return 0;
}

static bool event_has_error_code(unsigned vector)
{
    return vector == 8 || (vector >= 10 && vector <= 14) || vector == 17 || vector == 21;
}

static uint32_t effective_proc2(const struct vmx_control_state *k)
{
    return (k->proc & PROC_SECONDARY) ? k->proc2 : 0;
}

static int check_event_injection(const struct vmx_caps *c, const struct vmcs_state *s, char *why,
                                 size_t len)
{
    const struct vmx_control_state *k = &s->ctl;
    uint32_t info = k->entry_intr_info;
    if (!(info & INTR_INFO_VALID))
        return 0;
    unsigned type = (info & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT;
    unsigned vector = info & INTR_INFO_VECTOR;
    CHECK(type != 1, "VM-entry interruption type 1 is reserved");
    CHECK(type != INTR_TYPE_OTHER || (k->proc & PROC_MTF),
          "VM-entry interruption type 7 (other event) requires the monitor trap flag");
    CHECK(type != INTR_TYPE_NMI || vector == 2, "VM-entry NMI injection with vector %u (not 2)",
          vector);
    CHECK(type != INTR_TYPE_HW_EXCEPT || vector <= 31,
          "VM-entry hardware exception vector %u is above 31", vector);
    CHECK(type != INTR_TYPE_OTHER || vector == 0,
          "VM-entry interruption type 7 with vector %u (not 0)", vector);
    bool real_mode = (effective_proc2(k) & PROC2_UNRESTRICTED) && !(s->guest.cr0 & CR0_PE);
    bool want_error = type == INTR_TYPE_HW_EXCEPT && event_has_error_code(vector) && !real_mode;
    if (want_error)
        CHECK(info & INTR_INFO_ERROR, "VM-entry exception %u needs 'deliver error code'", vector);
    else
        CHECK(!(info & INTR_INFO_ERROR),
              "VM-entry 'deliver error code' set for type %u vector %u%s", type, vector,
              real_mode ? " in real mode" : "");
    CHECK(!(info & INTR_INFO_RESERVED), "VM-entry interruption information 0x%08x: bits 30:12 set",
          info);
    if (type == INTR_TYPE_SW_INT || type == INTR_TYPE_PRIV_SW || type == INTR_TYPE_SW_EXCEPT) {
        unsigned min = (c->misc & VMX_MISC_INSN_LEN_0) ? 0 : 1;
        CHECK(k->entry_insn_len >= min && k->entry_insn_len <= 15,
              "VM-entry instruction length %u is out of range for a software event",
              k->entry_insn_len);
    }
    return 0;
}

static int check_bitmap(const struct vmx_caps *c, const char *name, uint64_t pa, char *why,
                        size_t len)
{
    CHECK(!(pa & 0xfff) && !beyond_phys(c, pa),
          "%s address 0x%lx is not page aligned within the physical-address width", name,
          (unsigned long)pa);
    return 0;
}

int vmx_check_controls(const struct vmx_caps *c, const struct vmcs_state *s, char *why, size_t len)
{
    const struct vmx_control_state *k = &s->ctl;
    if (check_word("pin-based", k->pin, vmx_cap_pin(c), why, len) ||
        check_word("primary processor-based", k->proc, vmx_cap_proc(c), why, len))
        return -1;
    if (k->proc & PROC_SECONDARY) {
        if (check_word("secondary processor-based", k->proc2, c->proc2, why, len))
            return -1;
    } else {
        CHECK(k->proc2 == 0, "secondary controls 0x%08x set without 'activate secondary controls'",
              k->proc2);
    }
    uint32_t proc2 = effective_proc2(k);
    unsigned targets = (c->misc >> 16) & 0x1ff;
    CHECK(k->cr3_target_count <= targets, "CR3-target count %u exceeds the CPU's %u",
          k->cr3_target_count, targets);
    if (k->proc & PROC_IO_BITMAPS) {
        if (check_bitmap(c, "I/O bitmap A", k->io_bitmap_a, why, len) ||
            check_bitmap(c, "I/O bitmap B", k->io_bitmap_b, why, len))
            return -1;
    }
    if ((k->proc & PROC_MSR_BITMAPS) && check_bitmap(c, "MSR bitmap", k->msr_bitmap, why, len))
        return -1;
    CHECK((k->pin & PIN_NMI) || !(k->pin & PIN_VIRTUAL_NMIS),
          "'virtual NMIs' requires 'NMI exiting'");
    CHECK((k->pin & PIN_VIRTUAL_NMIS) || !(k->proc & PROC_NMI_WINDOW),
          "'NMI-window exiting' requires 'virtual NMIs'");
    CHECK(!(proc2 & PROC2_UNRESTRICTED) || (proc2 & PROC2_EPT),
          "'unrestricted guest' requires 'enable EPT'");
    if (proc2 & PROC2_EPT) {
        unsigned type = k->eptp & 7;
        CHECK((type == 0 && (c->ept_vpid & EPT_CAP_UC)) ||
                  (type == 6 && (c->ept_vpid & EPT_CAP_WB)),
              "EPTP 0x%lx: memory type %u is not supported", (unsigned long)k->eptp, type);
        CHECK(((k->eptp >> 3) & 7) == 3, "EPTP 0x%lx: page-walk length is not 4 (3 in bits 5:3)",
              (unsigned long)k->eptp);
        CHECK(!(k->eptp & (1u << 6)) || (c->ept_vpid & EPT_CAP_AD),
              "EPTP 0x%lx: accessed/dirty flags enabled but unsupported", (unsigned long)k->eptp);
        CHECK(!(k->eptp & 0xf80) && !beyond_phys(c, k->eptp), "EPTP 0x%lx: reserved bits set",
              (unsigned long)k->eptp);
    }
    CHECK(!(proc2 & PROC2_VPID) || k->vpid != 0, "'enable VPID' with VPID 0");
    if (check_word("VM-exit", k->exit, vmx_cap_exit(c), why, len))
        return -1;
    CHECK((k->pin & PIN_PREEMPTION_TIMER) || !(k->exit & EXIT_SAVE_TIMER),
          "'save VMX-preemption timer value' requires 'activate VMX-preemption timer'");
    if (check_word("VM-entry", k->entry, vmx_cap_entry(c), why, len))
        return -1;
    CHECK(!(k->entry & ENTRY_SMM), "'entry to SMM' outside SMM");
    CHECK(!(k->entry & ENTRY_DUAL_MON), "'deactivate dual-monitor treatment' outside SMM");
    return check_event_injection(c, s, why, len);
}

int vmx_check_host(const struct vmx_caps *c, const struct vmcs_state *s, char *why, size_t len)
{
    const struct vmx_host_state *h = &s->host;
    const struct vmx_control_state *k = &s->ctl;
    CHECK((h->cr0 & c->cr0_fixed0) == c->cr0_fixed0,
          "host CR0 0x%lx lacks bits IA32_VMX_CR0_FIXED0 requires (0x%lx)", (unsigned long)h->cr0,
          (unsigned long)(c->cr0_fixed0 & ~h->cr0));
    CHECK(!(h->cr0 & ~c->cr0_fixed1), "host CR0 0x%lx sets bits IA32_VMX_CR0_FIXED1 forbids",
          (unsigned long)h->cr0);
    CHECK((h->cr4 & c->cr4_fixed0) == c->cr4_fixed0,
          "host CR4 0x%lx lacks bits IA32_VMX_CR4_FIXED0 requires (0x%lx)", (unsigned long)h->cr4,
          (unsigned long)(c->cr4_fixed0 & ~h->cr4));
    CHECK(!(h->cr4 & ~c->cr4_fixed1), "host CR4 0x%lx sets bits IA32_VMX_CR4_FIXED1 forbids",
          (unsigned long)h->cr4);
    CHECK(!beyond_phys(c, h->cr3), "host CR3 0x%lx is beyond the physical-address width",
          (unsigned long)h->cr3);
    CHECK(vmx_canonical(c, h->sysenter_esp) && vmx_canonical(c, h->sysenter_eip),
          "host IA32_SYSENTER_ESP/EIP is not canonical");
    CHECK(!(k->exit & EXIT_LOAD_PAT) || vmx_pat_valid(h->pat),
          "host IA32_PAT 0x%lx holds an invalid memory type", (unsigned long)h->pat);
    CHECK(k->exit & EXIT_HOST_64,
          "'host address-space size' is 0 but the host runs in 64-bit mode");
    if (k->exit & EXIT_LOAD_EFER) {
        CHECK(!(h->efer & ~EFER_KNOWN), "host IA32_EFER 0x%lx sets reserved bits",
              (unsigned long)h->efer);
        CHECK((h->efer & EFER_LMA) && (h->efer & EFER_LME),
              "host IA32_EFER 0x%lx: LMA and LME must match 'host address-space size'",
              (unsigned long)h->efer);
    }
    const uint16_t sels[] = {h->es, h->cs, h->ss, h->ds, h->fs, h->gs, h->tr};
    const char *const names[] = {"ES", "CS", "SS", "DS", "FS", "GS", "TR"};
    for (unsigned i = 0; i < 7; i++)
        CHECK(!(sels[i] & 7), "host %s selector 0x%x: RPL and TI must be 0", names[i], sels[i]);
    CHECK(h->cs != 0, "host CS selector is 0");
    CHECK(h->tr != 0, "host TR selector is 0");
    CHECK(vmx_canonical(c, h->fs_base) && vmx_canonical(c, h->gs_base) &&
              vmx_canonical(c, h->tr_base) && vmx_canonical(c, h->gdtr_base) &&
              vmx_canonical(c, h->idtr_base),
          "host FS/GS/TR/GDTR/IDTR base is not canonical");
    CHECK(h->cr4 & CR4_PAE, "host CR4.PAE must be 1 for a 64-bit host");
    CHECK(vmx_canonical(c, h->rip), "host RIP 0x%lx is not canonical", (unsigned long)h->rip);
    return 0;
}

static int check_control_registers(const struct vmx_caps *c, const struct vmcs_state *s, char *why,
                                   size_t len)
{
    const struct vmx_guest_state *g = &s->guest;
    const struct vmx_control_state *k = &s->ctl;
    bool unrestricted = effective_proc2(k) & PROC2_UNRESTRICTED;
    bool ia32e = k->entry & ENTRY_IA32E;
    uint64_t fixed0 = c->cr0_fixed0 & ~(unrestricted ? CR0_PE | CR0_PG : 0);
    CHECK((g->cr0 & fixed0) == fixed0,
          "guest CR0 0x%lx lacks bits IA32_VMX_CR0_FIXED0 requires (0x%lx)", (unsigned long)g->cr0,
          (unsigned long)(fixed0 & ~g->cr0));
    CHECK(!(g->cr0 & ~c->cr0_fixed1), "guest CR0 0x%lx sets bits IA32_VMX_CR0_FIXED1 forbids",
          (unsigned long)g->cr0);
    CHECK(!(g->cr0 & CR0_PG) || (g->cr0 & CR0_PE), "guest CR0 0x%lx: PG set without PE",
          (unsigned long)g->cr0);
    CHECK((g->cr4 & c->cr4_fixed0) == c->cr4_fixed0,
          "guest CR4 0x%lx lacks bits IA32_VMX_CR4_FIXED0 requires (0x%lx)", (unsigned long)g->cr4,
          (unsigned long)(c->cr4_fixed0 & ~g->cr4));
    CHECK(!(g->cr4 & ~c->cr4_fixed1), "guest CR4 0x%lx sets bits IA32_VMX_CR4_FIXED1 forbids",
          (unsigned long)g->cr4);
    if (ia32e)
        CHECK((g->cr0 & CR0_PG) && (g->cr4 & CR4_PAE),
              "'IA-32e mode guest' requires guest CR0.PG and CR4.PAE");
    else
        CHECK(!(g->cr4 & CR4_PCIDE), "guest CR4.PCIDE set outside IA-32e mode");
    CHECK(!beyond_phys(c, g->cr3), "guest CR3 0x%lx is beyond the physical-address width",
          (unsigned long)g->cr3);
    CHECK(!(k->entry & ENTRY_LOAD_DEBUG) || !(g->dr7 >> 32), "guest DR7 0x%lx: bits 63:32 set",
          (unsigned long)g->dr7);
    CHECK(vmx_canonical(c, g->sysenter_esp) && vmx_canonical(c, g->sysenter_eip),
          "guest IA32_SYSENTER_ESP/EIP is not canonical");
    CHECK(!(k->entry & ENTRY_LOAD_PAT) || vmx_pat_valid(g->pat),
          "guest IA32_PAT 0x%lx holds an invalid memory type", (unsigned long)g->pat);
    if (k->entry & ENTRY_LOAD_EFER) {
        CHECK(!(g->efer & ~EFER_KNOWN), "guest IA32_EFER 0x%lx sets reserved bits",
              (unsigned long)g->efer);
        CHECK(!(g->efer & EFER_LMA) == !ia32e,
              "guest IA32_EFER.LMA differs from the 'IA-32e mode guest' entry control");
        CHECK(!(g->cr0 & CR0_PG) || !(g->efer & EFER_LMA) == !(g->efer & EFER_LME),
              "guest IA32_EFER 0x%lx: LMA differs from LME while CR0.PG is set",
              (unsigned long)g->efer);
    }
    return 0;
}

/* Access rights of a segment register outside virtual-8086 mode (SDM 26.3.1.2). */
static int check_segment(const struct vmcs_state *s, enum vmx_seg i, char *why, size_t len)
{
    const struct vmx_guest_state *g = &s->guest;
    const struct vmx_segment *seg = &g->seg[i];
    const char *n = seg_names[i];
    bool unrestricted = effective_proc2(&s->ctl) & PROC2_UNRESTRICTED;
    bool ia32e = s->ctl.entry & ENTRY_IA32E;
    unsigned type = seg->ar & AR_TYPE, cs_type = g->seg[SEG_CS].ar & AR_TYPE;
    unsigned ss_dpl = dpl(&g->seg[SEG_SS]);

    if (i == SEG_CS) {
        CHECK(usable(seg), "guest CS is marked unusable");
        CHECK(type == 9 || type == 11 || type == 13 || type == 15 || (unrestricted && type == 3),
              "guest CS access rights 0x%x: type %u is not an accessed code segment%s", seg->ar,
              type, unrestricted ? " (or 3)" : "");
    } else if (i == SEG_TR) {
        CHECK(usable(seg), "guest TR is marked unusable");
        CHECK(type == 11 || (type == 3 && !ia32e),
              "guest TR access rights 0x%x: type %u is not a busy TSS (11, or 3 outside IA-32e "
              "mode)",
              seg->ar, type);
    } else if (!usable(seg)) {
        return 0;
    } else if (i == SEG_LDTR) {
        CHECK(type == 2, "guest LDTR access rights 0x%x: type %u is not an LDT (2)", seg->ar, type);
    } else if (i == SEG_SS) {
        CHECK(type == 3 || type == 7,
              "guest SS access rights 0x%x: type %u is not a writable accessed data segment (3 or "
              "7)",
              seg->ar, type);
    } else {
        CHECK(type & 1, "guest %s access rights 0x%x: type %u is not accessed", n, seg->ar, type);
        CHECK(!(type & 8) || (type & 2), "guest %s access rights 0x%x: code segment not readable",
              n, seg->ar);
    }

    bool system = i == SEG_TR || i == SEG_LDTR;
    CHECK(!(seg->ar & AR_S) == system, "guest %s access rights 0x%x: S must be %u", n, seg->ar,
          system ? 0u : 1u);
    if (i == SEG_CS) {
        unsigned d = dpl(seg);
        if (type == 3)
            CHECK(d == 0, "guest CS access rights 0x%x: DPL must be 0 for a data-type CS", seg->ar);
        else if (type == 9 || type == 11)
            CHECK(d == ss_dpl, "guest CS.DPL %u differs from SS.DPL %u (non-conforming code)", d,
                  ss_dpl);
        else
            CHECK(d <= ss_dpl, "guest CS.DPL %u exceeds SS.DPL %u (conforming code)", d, ss_dpl);
    } else if (i == SEG_SS) {
        CHECK(unrestricted || dpl(seg) == (seg->sel & 3u), "guest SS.DPL %u differs from SS.RPL %u",
              dpl(seg), seg->sel & 3u);
        CHECK(dpl(seg) == 0 || (cs_type != 3 && (g->cr0 & CR0_PE)),
              "guest SS.DPL must be 0 in real mode or with a data-type CS");
    } else if (!system) {
        CHECK(unrestricted || type > 11 || dpl(seg) >= (seg->sel & 3u),
              "guest %s.DPL %u is below its RPL %u", n, dpl(seg), seg->sel & 3u);
    }
    CHECK(seg->ar & AR_P, "guest %s access rights 0x%x: P (present) must be 1", n, seg->ar);
    CHECK(!(seg->ar & AR_RESERVED), "guest %s access rights 0x%x: reserved bits set", n, seg->ar);
    if (i == SEG_CS && ia32e && (seg->ar & AR_L))
        CHECK(!(seg->ar & AR_DB), "guest CS access rights 0x%x: D/B set together with L", seg->ar);
    CHECK(granularity_ok(seg), "guest %s: G=%u does not match the limit 0x%x", n,
          (seg->ar & AR_G) ? 1u : 0u, seg->limit);
    return 0;
}

static int check_segments(const struct vmx_caps *c, const struct vmcs_state *s, char *why,
                          size_t len)
{
    const struct vmx_guest_state *g = &s->guest;
    bool unrestricted = effective_proc2(&s->ctl) & PROC2_UNRESTRICTED;
    const struct vmx_segment *cs = &g->seg[SEG_CS], *ss = &g->seg[SEG_SS];
    const struct vmx_segment *tr = &g->seg[SEG_TR], *ldtr = &g->seg[SEG_LDTR];

    CHECK(!(tr->sel & 4), "guest TR selector 0x%x: TI flag set", tr->sel);
    CHECK(!usable(ldtr) || !(ldtr->sel & 4), "guest LDTR selector 0x%x: TI flag set", ldtr->sel);
    if (g->rflags & RFLAGS_VM) {
        for (unsigned i = SEG_ES; i <= SEG_GS; i++) {
            const struct vmx_segment *v = &g->seg[i];
            CHECK(v->base == (uint64_t)v->sel << 4 && v->limit == 0xffff && v->ar == 0xf3,
                  "guest %s is not a virtual-8086 segment (base sel*16, limit 0xffff, rights 0xf3)",
                  seg_names[i]);
        }
    } else {
        CHECK(unrestricted || (ss->sel & 3) == (cs->sel & 3),
              "guest SS.RPL %u differs from CS.RPL %u", ss->sel & 3u, cs->sel & 3u);
    }
    CHECK(vmx_canonical(c, tr->base) && vmx_canonical(c, g->seg[SEG_FS].base) &&
              vmx_canonical(c, g->seg[SEG_GS].base),
          "guest TR/FS/GS base is not canonical");
    CHECK(!usable(ldtr) || vmx_canonical(c, ldtr->base), "guest LDTR base is not canonical");
    CHECK(!(cs->base >> 32), "guest CS base 0x%lx: bits 63:32 set", (unsigned long)cs->base);
    for (unsigned i = SEG_ES; i <= SEG_DS; i++)
        if (i != SEG_CS)
            CHECK(!usable(&g->seg[i]) || !(g->seg[i].base >> 32),
                  "guest %s base 0x%lx: bits 63:32 set", seg_names[i],
                  (unsigned long)g->seg[i].base);
    if (!(g->rflags & RFLAGS_VM))
        for (unsigned i = SEG_ES; i <= SEG_GS; i++)
            if (check_segment(s, (enum vmx_seg)i, why, len))
                return -1;
    if (check_segment(s, SEG_TR, why, len) || check_segment(s, SEG_LDTR, why, len))
        return -1;
    CHECK(vmx_canonical(c, g->gdtr_base) && vmx_canonical(c, g->idtr_base),
          "guest GDTR/IDTR base is not canonical");
    CHECK(g->gdtr_limit <= 0xffff && g->idtr_limit <= 0xffff,
          "guest GDTR/IDTR limit exceeds 0xffff");
    return 0;
}

static int check_rip_rflags(const struct vmx_caps *c, const struct vmcs_state *s, char *why,
                            size_t len)
{
    const struct vmx_guest_state *g = &s->guest;
    bool ia32e = s->ctl.entry & ENTRY_IA32E;
    if (ia32e && (g->seg[SEG_CS].ar & AR_L))
        CHECK(vmx_canonical(c, g->rip), "guest RIP 0x%lx is not canonical", (unsigned long)g->rip);
    else
        CHECK(!(g->rip >> 32), "guest RIP 0x%lx: bits 63:32 set outside 64-bit mode",
              (unsigned long)g->rip);
    CHECK(!(g->rflags & RFLAGS_RESERVED), "guest RFLAGS 0x%lx: reserved bits (63:22, 15, 5, 3) set",
          (unsigned long)g->rflags);
    CHECK(g->rflags & RFLAGS_FIXED, "guest RFLAGS 0x%lx: bit 1 must be 1",
          (unsigned long)g->rflags);
    CHECK(!(g->rflags & RFLAGS_VM) || (!ia32e && (g->cr0 & CR0_PE)),
          "guest RFLAGS.VM set in IA-32e mode or real mode");
    uint32_t info = s->ctl.entry_intr_info;
    bool ext = (info & INTR_INFO_VALID) &&
               ((info & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT) == INTR_TYPE_EXT;
    CHECK(!ext || (g->rflags & RFLAGS_IF),
          "injecting an external interrupt with guest RFLAGS.IF=0");
    return 0;
}

/* Activity and interruptibility state, pending debug exceptions, link pointer (26.3.1.5). */
static int check_non_register(const struct vmx_caps *c, const struct vmcs_state *s, char *why,
                              size_t len)
{
    const struct vmx_guest_state *g = &s->guest;
    uint32_t x = g->interruptibility, info = s->ctl.entry_intr_info;
    bool inject = info & INTR_INFO_VALID;
    unsigned type = (info & INTR_INFO_TYPE) >> INTR_INFO_TYPE_SHIFT, vector = info & 0xff;

    CHECK(g->activity <= ACTIVITY_SIPI, "guest activity state %u is not valid", g->activity);
    CHECK(g->activity != ACTIVITY_HLT || dpl(&g->seg[SEG_SS]) == 0,
          "guest activity state HLT with SS.DPL %u (must be 0)", dpl(&g->seg[SEG_SS]));
    CHECK(!(x & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOVSS)) || g->activity == ACTIVITY_ACTIVE,
          "guest activity state %u under blocking by STI or MOV SS (must be active)", g->activity);
    if (inject && g->activity == ACTIVITY_HLT)
        CHECK(type == INTR_TYPE_EXT || type == INTR_TYPE_NMI ||
                  (type == INTR_TYPE_HW_EXCEPT && (vector == 1 || vector == 18)) ||
                  (type == INTR_TYPE_OTHER && vector == 0),
              "injecting event type %u vector %u is not allowed in the HLT activity state", type,
              vector);
    if (inject && g->activity == ACTIVITY_SHUTDOWN)
        CHECK(type == INTR_TYPE_NMI || (type == INTR_TYPE_HW_EXCEPT && vector == 18),
              "injecting event type %u vector %u is not allowed in the shutdown activity state",
              type, vector);
    CHECK(!inject || g->activity != ACTIVITY_SIPI,
          "injecting an event in the wait-for-SIPI activity state");

    CHECK(!(x & ~0x1fu), "guest interruptibility 0x%x: reserved bits set", x);
    CHECK((x & 3) != 3, "guest interruptibility: blocking by STI and by MOV SS both set");
    CHECK(!(x & INTERRUPTIBILITY_STI) || (g->rflags & RFLAGS_IF),
          "guest interruptibility: blocking by STI with RFLAGS.IF=0");
    CHECK(!(x & INTERRUPTIBILITY_SMI), "guest interruptibility: blocking by SMI outside SMM");
    if (inject && type == INTR_TYPE_EXT)
        CHECK(!(x & 3), "injecting an external interrupt under blocking by STI or MOV SS");
    if (inject && type == INTR_TYPE_NMI) {
        CHECK(!(x & INTERRUPTIBILITY_MOVSS), "injecting an NMI under blocking by MOV SS");
        CHECK(!(s->ctl.pin & PIN_VIRTUAL_NMIS) || !(x & INTERRUPTIBILITY_NMI),
              "injecting an NMI under blocking by virtual NMI");
    }

    CHECK(!(g->pending_dbg & PENDING_DBG_RSVD),
          "guest pending debug exceptions 0x%lx: reserved bits set", (unsigned long)g->pending_dbg);
    if ((x & 3) || g->activity == ACTIVITY_HLT) {
        bool single_step = (g->rflags & RFLAGS_TF) && !(g->debugctl & DEBUGCTL_BTF);
        CHECK(!(g->pending_dbg & PENDING_DBG_BS) == !single_step,
              "guest pending debug exceptions: BS must be %u when %s under blocking or HLT",
              single_step ? 1u : 0u, single_step ? "single-stepping" : "not single-stepping");
    }
    CHECK(g->link == ~0ull, "VMCS link pointer 0x%lx is not ~0 (pollux uses no shadow VMCS)",
          (unsigned long)g->link);

    /* With EPT, PAE paging outside long mode takes its PDPTEs from the VMCS (26.3.1.6). */
    if ((effective_proc2(&s->ctl) & PROC2_EPT) && (g->cr0 & CR0_PG) && (g->cr4 & CR4_PAE) &&
        !(s->ctl.entry & ENTRY_IA32E))
        for (unsigned i = 0; i < 4; i++)
            CHECK(!(g->pdpte[i] & 1) ||
                      (!(g->pdpte[i] & PDPTE_RESERVED) && !beyond_phys(c, g->pdpte[i])),
                  "guest PDPTE%u 0x%lx sets reserved bits", i, (unsigned long)g->pdpte[i]);
    return 0;
}

int vmx_check_guest(const struct vmx_caps *c, const struct vmcs_state *s, char *why, size_t len)
{
    if (check_control_registers(c, s, why, len) || check_segments(c, s, why, len) ||
        check_rip_rflags(c, s, why, len) || check_non_register(c, s, why, len))
        return -1;
    return 0;
}

int vmx_check_entry(const struct vmx_caps *c, const struct vmcs_state *s, char *why, size_t len)
{
    if (vmx_check_controls(c, s, why, len) || vmx_check_host(c, s, why, len) ||
        vmx_check_guest(c, s, why, len))
        return -1;
    return 0;
}

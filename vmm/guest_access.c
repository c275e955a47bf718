#include "vmm/guest_access.h"

#include "lib/string.h"
#include "vmm/gpt.h"
#include "vmm/insn.h"

#define PAGE   4096ull
#define CR0_PG (1ull << 31)

int guest_read_linear(struct vcpu *v, uint64_t la, void *buf, size_t len)
{
    const struct guest_mode *gm = vcpu_mode(v);
    struct gpt_mode m = {
        .cr0 = gm->cr0, .cr3 = gm->cr3, .cr4 = gm->cr4, .efer = gm->efer, .cpl = gm->cpl};
    uint8_t *out = buf;
    while (len) {
        size_t chunk = PAGE - (la & (PAGE - 1));
        if (chunk > len)
            chunk = len;
        uint64_t gpa;
        struct gpt_ram ram = {v->vm->mem, v->vm->cfg.mem};
        int rc = gpt_translate_ram(&m, la, 0, &ram, &gpa);
        if (rc)
            return rc;
        const void *p = vm_gpa_ptr(v->vm, gpa, chunk);
        if (!p)
            return GPT_BAD_TABLE;
        memcpy(out, p, chunk);
        out += chunk;
        la += chunk;
        len -= chunk;
    }
    return 0;
}

size_t vcpu_fetch_insn(struct vcpu *v, uint8_t bytes[INSN_MAX], int *code_bits, uint64_t *la)
{
    const struct guest_mode *gm = vcpu_mode(v);
    *code_bits = gm->code_bits;
    *la = gm->cs_base + v->regs.rip;
    if (gm->code_bits != 64)
        *la &= 0xffffffffu;
    size_t avail = INSN_MAX;
    /* Fewer bytes may be readable near the end of guest memory. */
    while (avail && guest_read_linear(v, *la, bytes, avail))
        avail--;
    return avail;
}

void vcpu_advance(struct vcpu *v, unsigned len)
{
    v->regs.rip += len;
    virt->end_emulated_instruction(v);
}

/*
 * The instruction at CS:RIP read in place, as far as its page and guest RAM
 * go: one translation (none with paging off), no copy. Nothing is cached
 * across exits: under nested paging the guest rewrites its page tables and
 * flushes its TLB without an exit, so no cached translation could be proven
 * fresh. NULL when RIP's page is not in guest RAM.
 */
static inline __attribute__((always_inline)) const uint8_t *
code_at_rip(struct vcpu *v, size_t *avail, int *code_bits)
{
    const struct guest_mode *gm = vcpu_mode(v);
    *code_bits = gm->code_bits;
    uint64_t la = gm->cs_base + v->regs.rip;
    if (gm->code_bits != 64)
        la &= 0xffffffffu;
    uint64_t gpa = la;
    if (gm->cr0 & CR0_PG) {
        struct gpt_mode m = {
            .cr0 = gm->cr0, .cr3 = gm->cr3, .cr4 = gm->cr4, .efer = gm->efer, .cpl = gm->cpl};
        struct gpt_ram ram = {v->vm->mem, v->vm->cfg.mem};
        if (gpt_translate_ram(&m, la, GPT_ACCESS_FETCH, &ram, &gpa))
            return 0;
    }
    size_t in_page = PAGE - (la & (PAGE - 1));
    *avail = in_page < INSN_MAX ? in_page : INSN_MAX;
    if (gpa >= v->vm->cfg.mem)
        return 0;
    if (*avail > v->vm->cfg.mem - gpa)
        *avail = v->vm->cfg.mem - gpa;
    return v->vm->mem + gpa;
}

/*
 * The length of the exiting instruction the slow way: the full decoder on the
 * bytes read in place (code, when the fast check had them), else on a copy
 * that may cross pages.
 */
static __attribute__((noinline)) int insn_length_slow(struct vcpu *v, const struct exit_record *e,
                                                      const uint8_t *code, size_t avail, int mode)
{
    if (code) {
        int n = insn_length((enum insn_kind)e->insn_kind, code, avail, mode);
        if (n > 0)
            return n;
    }
    uint8_t bytes[INSN_MAX];
    uint64_t la;
    avail = vcpu_fetch_insn(v, bytes, &mode, &la);
    int n = e->insn_kind >= 0 && avail
                ? insn_length((enum insn_kind)e->insn_kind, bytes, avail, mode)
                : -1;
    if (n < 0)
        vm_fail(v, "bad-state", "cannot decode the %s instruction at 0x%lx",
                exit_reason_name(e->reason), la);
    return n;
}

/* The length of the exiting instruction when the exit did not give it (out of line: with NRIPS it
 * never runs). */
static __attribute__((noinline)) int insn_length_at_rip(struct vcpu *v, const struct exit_record *e)
{
    const uint8_t *code = 0;
    size_t avail = 0;
    int mode = 0;
    if (e->insn_kind >= 0) {
        /* The common case: an unprefixed instruction within one page of guest RAM. */
        code = code_at_rip(v, &avail, &mode);
        size_t len = code ? insn_plain_length((enum insn_kind)e->insn_kind, code, avail) : 0;
        if (len)
            return (int)len;
    }
    return insn_length_slow(v, e, code, avail, mode);
}

int vcpu_skip_instruction(struct vcpu *v, const struct exit_record *e)
{
    unsigned len = e->insn_len;
    if (!len) {
        int n = insn_length_at_rip(v, e);
        if (n < 0)
            return -1;
        len = (unsigned)n;
    }
    vcpu_advance(v, len);
    return 0;
}

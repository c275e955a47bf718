/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/guest_access.h"

#include "arch/x86/pmm.h"
#include "arch/x86/regs.h"
#include "lib/string.h"
#include "vmm/exit/gpt_memo.h"
#include "arch/x86/insn.h"

int guest_read_linear(struct vcpu *v, uint64_t la, void *buf, size_t len)
{
    const struct guest_mode *gm = vcpu_mode(v);
    struct gpt_mode m = {
        .cr0 = gm->cr0, .cr3 = gm->cr3, .cr4 = gm->cr4, .efer = gm->efer, .cpl = gm->cpl};
    uint8_t *out = buf;
    while (len) {
        size_t chunk = PAGE_SIZE - (la & (PAGE_SIZE - 1));
        if (chunk > len)
            chunk = len;
        uint64_t gpa;
        struct gpt_ram ram = {v->vm->hw.mem, v->vm->cfg.mem};
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

/* CS:RIP as a linear address: 64-bit code ignores the CS base, other code wraps at 4 GiB. */
static inline uint64_t code_linear(bool code64, uint64_t cs_base, uint64_t rip)
{
    return code64 ? rip : (uint32_t)(cs_base + rip);
}

size_t vcpu_fetch_insn(struct vcpu *v, uint8_t bytes[INSN_MAX], int *code_bits, uint64_t *la)
{
    const struct guest_mode *gm = vcpu_mode(v);
    *code_bits = gm->code_bits;
    *la = code_linear(gm->code_bits == 64, gm->cs_base, v->hw.regs.rip);
    size_t avail = INSN_MAX;
    /* Fewer bytes may be readable near the end of guest memory. */
    while (avail && guest_read_linear(v, *la, bytes, avail))
        avail--;
    return avail;
}

/*
 * Whether the 4 bytes at code, the host address of la's translation, hold
 * the exit's instruction in its usual encoding. They must lie within la's
 * page: code's page lies in guest RAM (the caller checked).
 */
static inline __attribute__((always_inline)) bool plain_at(const struct exit_record *e, uint64_t la,
                                                           const uint8_t *code)
{
    if (e->insn_kind < 0 || (la & (PAGE_SIZE - 1)) > PAGE_SIZE - 4)
        return false;
    uint32_t word;
    /* The builtin: one load (the kernel's -fno-builtin makes memcpy a call). */
    __builtin_memcpy(&word, code, 4);
    return insn_is_plain((enum insn_kind)e->insn_kind, word);
}

/*
 * vcpu_skip_unreported the slow way: the full decoder on the bytes at gpa, the
 * translation of la, read in place (as far as their page and guest RAM go;
 * not when found is false), else on a copy that may cross pages, through the
 * full walk, which stops the VM with the reason when that fails too.
 */
static __attribute__((noinline)) int skip_decoded(struct vcpu *v, const struct exit_record *e,
                                                  bool found, uint64_t la, uint64_t gpa)
{
    int mode = vcpu_mode(v)->code_bits;
    uint64_t mem = v->vm->cfg.mem;
    int n = -1;
    if (found && e->insn_kind >= 0 && gpa < mem) {
        size_t avail = PAGE_SIZE - (la & (PAGE_SIZE - 1));
        if (avail > INSN_MAX)
            avail = INSN_MAX;
        if (avail > mem - gpa)
            avail = mem - gpa;
        n = insn_length((enum insn_kind)e->insn_kind, v->vm->hw.mem + gpa, avail, mode);
    }
    if (n < 0) {
        uint8_t bytes[INSN_MAX];
        size_t avail = vcpu_fetch_insn(v, bytes, &mode, &la);
        if (e->insn_kind >= 0 && avail)
            n = insn_length((enum insn_kind)e->insn_kind, bytes, avail, mode);
    }
    if (n < 0) {
        vm_fail(v, "bad-state", "cannot decode the %s instruction at 0x%lx",
                exit_reason_name(e->reason), la);
        return -1;
    }
    vcpu_advance(v, (unsigned)n);
    return 0;
}

static inline struct gpt_mode code_gpt_mode(const struct guest_code_mode *cm)
{
    return (struct gpt_mode){.cr0 = cm->cr0, .cr3 = cm->cr3, .cr4 = cm->cr4, .efer = cm->efer};
}

/* The instruction at la, paging on, where the vCPU's memo was stale: walk and remember. */
static __attribute__((noinline)) int skip_walked(struct vcpu *v, const struct exit_record *e,
                                                 const struct guest_code_mode *cm, uint64_t la)
{
    struct gpt_mode m = code_gpt_mode(cm);
    struct gpt_ram ram = {v->vm->hw.mem, v->vm->cfg.mem};
    uint64_t gpa;
    if (!gpt_memo_walk(&v->fetch_memo, &m, la, &ram, &gpa))
        return skip_decoded(v, e, false, la, 0);
    /* gpa is below 2^52: gpa + 4 cannot wrap. */
    if (gpa + 4 > ram.size || !plain_at(e, la, ram.base + gpa))
        return skip_decoded(v, e, true, la, gpa);
    vcpu_advance(v, insn_opcodes[e->insn_kind].len);
    return 0;
}

/*
 * vcpu_skip_instruction when the exit did not give the length (out of line:
 * with NRIPS it never runs). The common case costs no full mode read and no
 * full walk: the bytes at CS:RIP are found through the fetch walk (none with
 * paging off), and read in place as one word, which holds the exit's
 * instruction in its usual encoding. With paging on, the walk is the vCPU's
 * memo of the last one where every entry that walk read still holds what it
 * read (vmm/exit/gpt_memo.h: checked at this use; no event invalidates it).
 */
int vcpu_skip_unreported(struct vcpu *v, const struct exit_record *e)
{
    /* Without the vendor's lean read (VMX, whose exits lack a length only in odd cases): */
    if (!virt->get_code_mode)
        return skip_decoded(v, e, false, 0, 0);
    struct guest_code_mode cm;
    virt->get_code_mode(&v->hw, &cm);
    uint64_t la = code_linear(cm.code64, cm.cs_base, v->hw.regs.rip);
    if (cm.cr0 & CR0_PG) {
        const struct gpt_fetch_memo *memo = &v->fetch_memo;
        struct gpt_mode m = code_gpt_mode(&cm);
        if (!gpt_memo_valid(memo, &m, la))
            return skip_walked(v, e, &cm, la);
        if (!plain_at(e, la, gpt_memo_host(memo, la)))
            return skip_decoded(v, e, true, la, gpt_memo_gpa(memo, la));
    } else if (la + 4 > v->vm->cfg.mem || !plain_at(e, la, v->vm->hw.mem + la)) {
        return skip_decoded(v, e, true, la, la);
    }
    vcpu_advance(v, insn_opcodes[e->insn_kind].len);
    return 0;
}

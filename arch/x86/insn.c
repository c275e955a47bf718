/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/insn.h"

#include <stdbool.h>

/* The fields of a kind's insn_opcode, from its opcode bytes. */
#define OPCODE1(a)       .word = (a), .mask = 0xff, .len = 1
#define OPCODE2(a, b)    .word = (a) | (b) << 8, .mask = 0xffff, .len = 2
#define OPCODE3(a, b, c) .word = (a) | (b) << 8 | (c) << 16, .mask = 0xffffff, .len = 3

const struct insn_opcode insn_opcodes[INSN_IRET + 1] = {
    [INSN_CPUID] = {OPCODE2(0x0f, 0xa2)},
    [INSN_RDMSR] = {OPCODE2(0x0f, 0x32)},
    [INSN_WRMSR] = {OPCODE2(0x0f, 0x30)},
    [INSN_HLT] = {OPCODE1(0xf4)},
    [INSN_PAUSE] = {OPCODE2(0xf3, 0x90)},
    [INSN_VMMCALL] = {OPCODE3(0x0f, 0x01, 0xd9)},
    [INSN_VMCALL] = {OPCODE3(0x0f, 0x01, 0xc1)},
    [INSN_INVD] = {OPCODE2(0x0f, 0x08)},
    /*
     * Or INVD (0F 08): QEMU 7.2's SVM reports INVD's intercept as WBINVD's
     * (target/i386/tcg/translate.c tests bit 1 of 0x108/0x109). Both only
     * skip, as KVM's skip decodes whatever is at RIP.
     */
    [INSN_WBINVD] = {.word = 0x0f | 0x08 << 8, .mask = 0xfeff, .len = 2},
    [INSN_XSETBV] = {OPCODE3(0x0f, 0x01, 0xd1)},
    [INSN_MONITOR] = {OPCODE3(0x0f, 0x01, 0xc8)},
    [INSN_MWAIT] = {OPCODE3(0x0f, 0x01, 0xc9)},
    [INSN_VMRUN] = {OPCODE3(0x0f, 0x01, 0xd8)},
    [INSN_VMLOAD] = {OPCODE3(0x0f, 0x01, 0xda)},
    [INSN_VMSAVE] = {OPCODE3(0x0f, 0x01, 0xdb)},
    [INSN_STGI] = {OPCODE3(0x0f, 0x01, 0xdc)},
    [INSN_CLGI] = {OPCODE3(0x0f, 0x01, 0xdd)},
    [INSN_SKINIT] = {OPCODE3(0x0f, 0x01, 0xde)},
    [INSN_INVLPGA] = {OPCODE3(0x0f, 0x01, 0xdf)},
    [INSN_RDPRU] = {OPCODE3(0x0f, 0x01, 0xfd)},
    [INSN_IRET] = {OPCODE1(0xcf)},
};

/* PAUSE after its prefixes, F3 among them. */
static const struct insn_opcode pause_after_prefixes = {OPCODE1(0x90)};

/* Up to 4 bytes at b as a little-endian word, zero past avail. */
static uint32_t word_at(const uint8_t *b, size_t avail)
{
    uint32_t w = 0;
    for (size_t i = 0; i < avail && i < 4; i++)
        w |= (uint32_t)b[i] << 8 * i;
    return w;
}

static bool legacy_prefix(uint8_t b)
{
    switch (b) {
    case 0x66:
    case 0x67:
    case 0xf0:
    case 0xf2:
    case 0xf3:
    case 0x2e:
    case 0x36:
    case 0x3e:
    case 0x26:
    case 0x64:
    case 0x65:
        return true;
    default:
        return false;
    }
}

/* The legacy and REX prefixes before an opcode, as the CPU reads them. */
struct prefixes {
    size_t len;
    bool rep, lock;
    uint8_t rex; /* the REX right before the opcode, else 0 */
};

static struct prefixes read_prefixes(const uint8_t *bytes, size_t limit, int mode)
{
    struct prefixes p = {0, false, false, 0};
    for (; p.len < limit; p.len++) {
        uint8_t b = bytes[p.len];
        if (legacy_prefix(b)) {
            p.rep |= b == 0xf3;
            p.lock |= b == 0xf0;
            /* The CPU ignores a REX that a legacy prefix follows. */
            p.rex = 0;
        } else if (mode == 64 && (b & 0xf0) == 0x40) {
            p.rex = b;
        } else {
            break;
        }
    }
    return p;
}

int insn_length(enum insn_kind kind, const uint8_t *bytes, size_t avail, int mode)
{
    if ((unsigned)kind >= sizeof(insn_opcodes) / sizeof(insn_opcodes[0]) ||
        (mode != 16 && mode != 32 && mode != 64))
        return -1;
    /* The usual encoding, without prefixes. */
    if (insn_is_plain(kind, word_at(bytes, avail)) && insn_opcodes[kind].len <= avail)
        return insn_opcodes[kind].len;
    size_t limit = avail < INSN_MAX ? avail : INSN_MAX;
    struct prefixes p = read_prefixes(bytes, limit, mode);
    size_t i = p.len;
    const struct insn_opcode *o = kind == INSN_PAUSE ? &pause_after_prefixes : &insn_opcodes[kind];
    if (limit - i < o->len || (word_at(bytes + i, limit - i) & o->mask) != o->word)
        return -1;
    /* PAUSE is NOP with F3; with REX.B the 90 is xchg r8, rax instead. */
    if (kind == INSN_PAUSE && (!p.rep || (p.rex & 1)))
        return -1;
    return (int)(i + o->len);
}

int insn_mov_to_cr8(const uint8_t *bytes, size_t avail, int mode, uint8_t *gpr)
{
    if (mode != 16 && mode != 32 && mode != 64)
        return -1;
    size_t limit = avail < INSN_MAX ? avail : INSN_MAX;
    struct prefixes p = read_prefixes(bytes, limit, mode);
    size_t i = p.len;
    if (limit - i < 3 || bytes[i] != 0x0f || bytes[i + 1] != 0x22)
        return -1;
    /* MOV CR ignores ModRM.mod: the operand is always a register. */
    uint8_t modrm = bytes[i + 2];
    unsigned cr = ((modrm >> 3) & 7) | (p.rex & 4 ? 8 : 0) | (p.lock ? 8 : 0);
    if (cr != 8)
        return -1;
    *gpr = (uint8_t)((modrm & 7) | (p.rex & 1 ? 8 : 0));
    return (int)(i + 3);
}

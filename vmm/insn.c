#include "vmm/insn.h"

#include <stdbool.h>

#include "lib/string.h"

#define INSN_MAX 15

/* The opcode bytes after the prefixes, per kind. */
static const struct {
    uint8_t len;
    uint8_t op[3];
} opcodes[] = {
    [INSN_CPUID] = {2, {0x0f, 0xa2}},
    [INSN_RDMSR] = {2, {0x0f, 0x32}},
    [INSN_WRMSR] = {2, {0x0f, 0x30}},
    [INSN_HLT] = {1, {0xf4}},
    [INSN_PAUSE] = {1, {0x90}},
    [INSN_VMMCALL] = {3, {0x0f, 0x01, 0xd9}},
    [INSN_VMCALL] = {3, {0x0f, 0x01, 0xc1}},
    [INSN_INVD] = {2, {0x0f, 0x08}},
    [INSN_WBINVD] = {2, {0x0f, 0x09}},
    [INSN_XSETBV] = {3, {0x0f, 0x01, 0xd1}},
    [INSN_MONITOR] = {3, {0x0f, 0x01, 0xc8}},
    [INSN_MWAIT] = {3, {0x0f, 0x01, 0xc9}},
    [INSN_VMRUN] = {3, {0x0f, 0x01, 0xd8}},
    [INSN_VMLOAD] = {3, {0x0f, 0x01, 0xda}},
    [INSN_VMSAVE] = {3, {0x0f, 0x01, 0xdb}},
    [INSN_STGI] = {3, {0x0f, 0x01, 0xdc}},
    [INSN_CLGI] = {3, {0x0f, 0x01, 0xdd}},
    [INSN_SKINIT] = {3, {0x0f, 0x01, 0xde}},
    [INSN_INVLPGA] = {3, {0x0f, 0x01, 0xdf}},
    [INSN_RDPRU] = {3, {0x0f, 0x01, 0xfd}},
    [INSN_IRET] = {1, {0xcf}},
};

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

int insn_length(enum insn_kind kind, const uint8_t *bytes, size_t avail, int mode)
{
    if ((unsigned)kind >= sizeof(opcodes) / sizeof(opcodes[0]) ||
        (mode != 16 && mode != 32 && mode != 64))
        return -1;
    /* The usual encoding, without prefixes: no opcode kind starts with a prefix byte. */
    size_t len = opcodes[kind].len;
    if (kind != INSN_PAUSE && avail >= len && bytes[0] == opcodes[kind].op[0] &&
        (len < 2 || bytes[1] == opcodes[kind].op[1]) &&
        (len < 3 || bytes[2] == opcodes[kind].op[2]))
        return (int)len;
    size_t limit = avail < INSN_MAX ? avail : INSN_MAX;
    size_t i = 0;
    bool rep = false;
    uint8_t rex = 0;
    for (; i < limit; i++) {
        uint8_t b = bytes[i];
        if (legacy_prefix(b)) {
            rep |= b == 0xf3;
            /* The CPU ignores a REX that a legacy prefix follows. */
            rex = 0;
        } else if (mode == 64 && (b & 0xf0) == 0x40) {
            rex = b;
        } else {
            break;
        }
    }
    if (limit - i < len || memcmp(bytes + i, opcodes[kind].op, len) != 0)
        return -1;
    /* PAUSE is NOP with F3; with REX.B the 90 is xchg r8, rax instead. */
    if (kind == INSN_PAUSE && (!rep || (rex & 1)))
        return -1;
    return (int)(i + len);
}

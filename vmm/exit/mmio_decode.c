/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/exit/mmio_decode.h"

#include "arch/x86/insn.h"

#define REX_W 0x08
#define REX_R 0x04

/* The bytes of an instruction, never read past its end (the smaller of len and 15). */
struct cursor {
    const uint8_t *bytes;
    size_t pos, end;
};

static bool take(struct cursor *c, size_t n, uint64_t *value)
{
    if (c->end - c->pos < n)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)c->bytes[c->pos + i] << (8 * i);
    c->pos += n;
    *value = v;
    return true;
}

static bool skip(struct cursor *c, size_t n)
{
    uint64_t ignored;
    return n == 0 || take(c, n, &ignored);
}

static bool segment_prefix(uint8_t b)
{
    return b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65;
}

/*
 * Skips the SIB byte and displacement after a ModRM byte. Only memory forms
 * are accepted (mod != 3). addr_size is 2 for 16-bit addressing, which has
 * no SIB: mod 00 rm 110 is disp16, mod 01 disp8, mod 10 disp16. With 32-
 * and 64-bit addressing rm 100 adds a SIB, mod 00 rm 101 is disp32
 * (RIP-relative in 64-bit mode), so is SIB base 101 with mod 00, and mod
 * 01/10 add disp8/disp32.
 */
static bool skip_address(struct cursor *c, uint8_t modrm, unsigned addr_size)
{
    unsigned mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3)
        return false;
    if (addr_size == 2) {
        if (mod == 1)
            return skip(c, 1);
        return skip(c, mod == 2 || rm == 6 ? 2 : 0);
    }
    if (rm == 4) {
        uint64_t sib;
        if (!take(c, 1, &sib))
            return false;
        if (mod == 0 && (sib & 7) == 5)
            return skip(c, 4);
    }
    if (mod == 1)
        return skip(c, 1);
    return skip(c, mod == 2 || (mod == 0 && rm == 5) ? 4 : 0);
}

int mmio_decode(const uint8_t *bytes, size_t len, int mode, struct mmio_op *op)
{
    if (mode != 16 && mode != 32 && mode != 64)
        return -1;
    struct cursor c = {bytes, 0, len < INSN_MAX ? len : INSN_MAX};
    bool opsize = false, addrsize = false;
    uint8_t rex = 0;
    for (; c.pos < c.end; c.pos++) {
        uint8_t b = bytes[c.pos];
        if (b == 0x66) {
            opsize = true;
        } else if (b == 0x67) {
            addrsize = true;
        } else if (!segment_prefix(b)) {
            if (mode != 64 || (b & 0xf0) != 0x40)
                break;
            rex = b;
            continue;
        }
        /* A REX that a legacy prefix follows is ignored by the CPU. */
        rex = 0;
    }

    /* 66 toggles the mode's default operand size; REX.W overrides it. */
    unsigned opsz = rex & REX_W ? 8 : (mode == 16) != opsize ? 2 : 4;
    unsigned addr_size = mode == 64 ? (addrsize ? 4 : 8) : (mode == 16) != addrsize ? 2 : 4;

    uint64_t opcode;
    if (!take(&c, 1, &opcode))
        return -1;
    struct mmio_op r = {
        0}; /* stores, not memset: its REP STOSB retires once per byte under emulation */
    unsigned imm_len = 0;
    bool has_modrm = true, reg8 = false;
    switch (opcode) {
    case 0x88: /* MOV r/m8, r8 */
    case 0x8a: /* MOV r8, r/m8 */
        r.size = 1;
        r.write = opcode == 0x88;
        reg8 = true;
        break;
    case 0x89: /* MOV r/m, r */
    case 0x8b: /* MOV r, r/m */
        r.size = opsz;
        r.write = opcode == 0x89;
        break;
    case 0xc6: /* MOV r/m8, imm8 */
        r.size = 1;
        r.write = true;
        imm_len = 1;
        break;
    case 0xc7: /* MOV r/m, imm16/imm32 */
        r.size = opsz;
        r.write = true;
        imm_len = opsz == 2 ? 2 : 4;
        break;
    case 0x0f: {
        uint64_t op2;
        if (!take(&c, 1, &op2) || (op2 != 0xb6 && op2 != 0xb7))
            return -1;
        r.size = op2 == 0xb6 ? 1 : 2;
        r.reg_size = opsz;
        r.zero_extend = r.size < opsz;
        break;
    }
    case 0xa1: /* MOV eAX, moffs */
    case 0xa3: /* MOV moffs, eAX */
        r.size = opsz;
        r.write = opcode == 0xa3;
        has_modrm = false;
        break;
    default:
        return -1;
    }

    if (has_modrm) {
        uint64_t modrm;
        if (!take(&c, 1, &modrm) || !skip_address(&c, (uint8_t)modrm, addr_size))
            return -1;
        unsigned field = (modrm >> 3) & 7;
        if (imm_len && field != 0) /* C6/C7 are MOV only as /0 */
            return -1;
        if (!imm_len) {
            r.reg = field | (rex & REX_R ? 8 : 0);
            /*
             * Without any REX, byte registers 4-7 are AH, CH, DH, BH: bits
             * 15:8 of registers 0-3. reg keeps the encoding (4-7).
             */
            r.high_byte = reg8 && !rex && field >= 4;
        }
    } else if (!skip(&c, addr_size)) { /* the moffs */
        return -1;
    }

    if (imm_len) {
        uint64_t imm;
        if (!take(&c, imm_len, &imm))
            return -1;
        r.has_imm = true;
        /* Only a 64-bit store has a narrower (32-bit) immediate to sign-extend. */
        if (r.size == 8 && (imm & 0x80000000u))
            imm |= 0xffffffff00000000ull;
        r.imm = imm;
    }
    if (!r.reg_size) /* all but MOVZX: the register is as wide as the access */
        r.reg_size = r.size;
    r.len = (unsigned)c.pos;
    *op = r;
    return 0;
}

static uint64_t low_bytes(uint64_t v, unsigned size)
{
    return size >= 8 ? v : v & ((1ull << (8 * size)) - 1);
}

unsigned mmio_op_gpr(const struct mmio_op *op)
{
    return op->high_byte ? op->reg - 4 : op->reg;
}

uint64_t mmio_store_value(const struct mmio_op *op, uint64_t reg)
{
    if (op->has_imm)
        return low_bytes(op->imm, op->size);
    return low_bytes(op->high_byte ? reg >> 8 : reg, op->size);
}

uint64_t mmio_load_merge(const struct mmio_op *op, uint64_t old, uint64_t value)
{
    if (op->high_byte)
        return (old & ~0xff00ull) | ((value & 0xff) << 8);
    unsigned width = op->zero_extend ? op->reg_size : op->size;
    value = low_bytes(value, op->size);
    if (width >= 4)
        return value; /* 32-bit results clear bits 63:32 */
    return (old & ~low_bytes(~0ull, width)) | value;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* Decoding the MOV forms behind MMIO exits: operands, sizes, lengths and rejects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vmm/exit/mmio_decode.h"

static struct mmio_op op;

/* Decodes from an exactly sized heap copy, so AddressSanitizer catches a read past len. */
static int decode_n(const uint8_t *bytes, size_t len, int mode)
{
    uint8_t *buf = malloc(len ? len : 1);
    memcpy(buf, bytes, len);
    memset(&op, 0xaa, sizeof(op));
    int r = mmio_decode(buf, len, mode, &op);
    free(buf);
    return r;
}

#define BYTES(...)        ((const uint8_t[]){__VA_ARGS__})
#define DEC(mode, ...)    decode_n(BYTES(__VA_ARGS__), sizeof(BYTES(__VA_ARGS__)), mode)
#define OK(mode, ...)     assert_int_equal(DEC(mode, __VA_ARGS__), 0)
#define BAD(mode, ...)    assert_int_equal(DEC(mode, __VA_ARGS__), -1)
#define LENGTH(mode, ...) (OK(mode, __VA_ARGS__), op.len)

static void expect(unsigned len, bool write, unsigned size, unsigned reg, unsigned reg_size)
{
    assert_int_equal(op.len, len);
    assert_int_equal(op.write, write);
    assert_int_equal(op.size, size);
    assert_int_equal(op.reg, reg);
    assert_int_equal(op.reg_size, reg_size);
    assert_false(op.high_byte);
    assert_false(op.has_imm);
    assert_false(op.zero_extend);
}

static void expect_imm(unsigned len, unsigned size, uint64_t imm)
{
    assert_int_equal(op.len, len);
    assert_true(op.write);
    assert_int_equal(op.size, size);
    assert_true(op.has_imm);
    assert_int_equal(op.imm, imm);
    assert_int_equal(op.reg, 0);
    assert_false(op.high_byte);
    assert_false(op.zero_extend);
}

/* ---------------------------------------------------------------- register forms */

static void test_store_register(void **state)
{
    (void)state;
    OK(64, 0x89, 0x08); /* mov [rax], ecx */
    expect(2, true, 4, 1, 4);
    OK(64, 0x48, 0x89, 0x08);
    expect(3, true, 8, 1, 8);
    OK(64, 0x66, 0x89, 0x08);
    expect(3, true, 2, 1, 2);
    OK(64, 0x4c, 0x89, 0x08); /* REX.WR: r9 */
    expect(3, true, 8, 9, 8);
    OK(64, 0x44, 0x89, 0x38); /* REX.R: r15d */
    expect(3, true, 4, 15, 4);
    OK(64, 0x41, 0x89, 0x10); /* REX.B only extends the base */
    expect(3, true, 4, 2, 4);
    OK(64, 0x42, 0x89, 0x14, 0x88); /* REX.X only extends the index */
    expect(4, true, 4, 2, 4);
    OK(32, 0x89, 0x18);
    expect(2, true, 4, 3, 4);
    OK(32, 0x66, 0x89, 0x18);
    expect(3, true, 2, 3, 2);
    OK(16, 0x89, 0x07); /* mov [bx], ax */
    expect(2, true, 2, 0, 2);
    OK(16, 0x66, 0x89, 0x3f); /* mov [bx], edi */
    expect(3, true, 4, 7, 4);
}

static void test_load_register(void **state)
{
    (void)state;
    OK(64, 0x8b, 0x05, 0x10, 0x20, 0x30, 0x40); /* mov eax, [rip+disp32] */
    expect(6, false, 4, 0, 4);
    OK(64, 0x4c, 0x8b, 0x25, 1, 2, 3, 4); /* mov r12, [rip+disp32] */
    expect(7, false, 8, 12, 8);
    OK(64, 0x66, 0x44, 0x8b, 0x28); /* mov r13w, [rax] */
    expect(4, false, 2, 13, 2);
    OK(32, 0x8b, 0x31);
    expect(2, false, 4, 6, 4);
    OK(16, 0x8b, 0x0f);
    expect(2, false, 2, 1, 2);
    OK(16, 0x66, 0x8b, 0x0f);
    expect(3, false, 4, 1, 4);
}

static void test_byte_registers(void **state)
{
    (void)state;
    for (unsigned r = 0; r < 8; r++) {
        for (int m = 16; m <= 64; m *= 2) {
            uint8_t store[] = {0x88, (uint8_t)(r << 3)}, load[] = {0x8a, (uint8_t)(r << 3)};
            assert_int_equal(decode_n(store, 2, m), 0);
            assert_int_equal(op.reg, r);
            assert_int_equal(op.high_byte, r >= 4); /* AH-BH: 15:8 of reg - 4 */
            assert_true(op.write);
            assert_int_equal(op.size, 1);
            assert_int_equal(op.reg_size, 1);
            assert_int_equal(decode_n(load, 2, m), 0);
            assert_int_equal(op.reg, r);
            assert_int_equal(op.high_byte, r >= 4);
            assert_false(op.write);
        }
        /* Any REX, even 40, selects SPL/BPL/SIL/DIL instead of AH-BH. */
        uint8_t rex[] = {0x40, 0x88, (uint8_t)(r << 3)};
        assert_int_equal(decode_n(rex, 3, 64), 0);
        assert_int_equal(op.reg, r);
        assert_false(op.high_byte);
        uint8_t rexr[] = {0x44, 0x8a, (uint8_t)(r << 3)};
        assert_int_equal(decode_n(rexr, 3, 64), 0);
        assert_int_equal(op.reg, r + 8);
        assert_false(op.high_byte);
    }
    OK(64, 0x66, 0x88, 0x20); /* 66 and REX.W do not widen a byte move */
    assert_int_equal(op.size, 1);
    assert_true(op.high_byte);
    OK(64, 0x48, 0x8a, 0x08);
    assert_int_equal(op.size, 1);
    assert_int_equal(op.reg_size, 1);
    assert_int_equal(op.len, 3);
}

static void test_immediates(void **state)
{
    (void)state;
    OK(64, 0xc6, 0x00, 0x7f);
    expect_imm(3, 1, 0x7f);
    OK(64, 0xc6, 0x00, 0xff); /* already at its size: nothing to extend */
    expect_imm(3, 1, 0xff);
    OK(64, 0x48, 0xc6, 0x00, 0x80);
    expect_imm(4, 1, 0x80);
    OK(64, 0xc7, 0x00, 0x78, 0x56, 0x34, 0x12);
    expect_imm(6, 4, 0x12345678);
    OK(64, 0xc7, 0x00, 0xff, 0xff, 0xff, 0xff);
    expect_imm(6, 4, 0xffffffff);
    OK(64, 0x66, 0xc7, 0x00, 0x34, 0x92);
    expect_imm(5, 2, 0x9234);
    OK(64, 0x48, 0xc7, 0x00, 0x00, 0x00, 0x00, 0x80);
    expect_imm(7, 8, 0xffffffff80000000ull);
    OK(64, 0x48, 0xc7, 0x00, 0xff, 0xff, 0xff, 0x7f);
    expect_imm(7, 8, 0x7fffffff);
    OK(64, 0x66, 0x48, 0xc7, 0x00, 0xfe, 0xff, 0xff, 0xff); /* REX.W beats 66 */
    expect_imm(8, 8, 0xfffffffffffffffeull);
    OK(64, 0x4c, 0xc7, 0x00, 1, 0, 0, 0); /* REX.R has no register to extend */
    expect_imm(7, 8, 1);
    OK(32, 0xc7, 0x05, 0x00, 0x00, 0xe0, 0xfe, 0x01, 0x00, 0x00, 0x00);
    expect_imm(10, 4, 1);
    OK(32, 0x66, 0xc7, 0x05, 0x00, 0x00, 0xe0, 0xfe, 0xcd, 0xab);
    expect_imm(9, 2, 0xabcd);
    OK(16, 0xc7, 0x07, 0x34, 0x12);
    expect_imm(4, 2, 0x1234);
    OK(16, 0x66, 0xc7, 0x07, 0x78, 0x56, 0x34, 0x12);
    expect_imm(7, 4, 0x12345678);
    OK(16, 0xc6, 0x06, 0x00, 0x10, 0x5a);
    expect_imm(5, 1, 0x5a);
    OK(64, 0xc7, 0x44, 0x24, 0x08, 1, 2, 3, 4); /* mov dword [rsp+8], imm32 */
    expect_imm(8, 4, 0x04030201);
    OK(64, 0xc7, 0x80, 0, 0, 0, 0, 1, 2, 3, 4);
    expect_imm(10, 4, 0x04030201);
}

static void test_immediate_needs_slash_0(void **state)
{
    (void)state;
    for (uint8_t r = 1; r < 8; r++) {
        uint8_t c6[] = {0xc6, (uint8_t)(r << 3), 0}, c7[] = {0xc7, (uint8_t)(r << 3), 0, 0, 0, 0};
        assert_int_equal(decode_n(c6, sizeof(c6), 64), -1);
        assert_int_equal(decode_n(c7, sizeof(c7), 64), -1);
    }
}

static void test_movzx(void **state)
{
    (void)state;
    OK(64, 0x0f, 0xb6, 0x08); /* movzx ecx, byte [rax] */
    assert_int_equal(op.len, 3);
    assert_false(op.write);
    assert_int_equal(op.size, 1);
    assert_int_equal(op.reg, 1);
    assert_int_equal(op.reg_size, 4);
    assert_true(op.zero_extend);
    assert_false(op.has_imm);
    assert_false(op.high_byte);
    OK(64, 0x48, 0x0f, 0xb6, 0x08);
    assert_int_equal(op.reg_size, 8);
    assert_true(op.zero_extend);
    OK(64, 0x66, 0x0f, 0xb6, 0x08);
    assert_int_equal(op.size, 1);
    assert_int_equal(op.reg_size, 2);
    assert_true(op.zero_extend);
    OK(64, 0x0f, 0xb6, 0x20); /* movzx esp: the destination is never a high byte */
    assert_int_equal(op.reg, 4);
    assert_false(op.high_byte);
    OK(64, 0x0f, 0xb7, 0x08);
    assert_int_equal(op.size, 2);
    assert_int_equal(op.reg_size, 4);
    assert_true(op.zero_extend);
    OK(64, 0x66, 0x0f, 0xb7, 0x08); /* 16 into 16: nothing to extend */
    assert_int_equal(op.size, 2);
    assert_int_equal(op.reg_size, 2);
    assert_false(op.zero_extend);
    OK(64, 0x4c, 0x0f, 0xb7, 0x00);
    assert_int_equal(op.reg, 8);
    assert_int_equal(op.reg_size, 8);
    assert_int_equal(op.len, 4);
    OK(64, 0x0f, 0xb6, 0x05, 1, 2, 3, 4);
    assert_int_equal(op.len, 7);
    OK(16, 0x0f, 0xb6, 0x07);
    assert_int_equal(op.reg_size, 2);
    OK(16, 0x66, 0x0f, 0xb7, 0x07);
    assert_int_equal(op.reg_size, 4);
    assert_true(op.zero_extend);
    OK(32, 0x0f, 0xb7, 0x3d, 0, 0, 0xe0, 0xfe);
    assert_int_equal(op.len, 7);
    assert_int_equal(op.reg, 7);
}

static void test_moffs(void **state)
{
    (void)state;
    OK(64, 0xa1, 0, 0, 0xe0, 0xfe, 0, 0, 0, 0);
    expect(9, false, 4, 0, 4);
    OK(64, 0x48, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8);
    expect(10, false, 8, 0, 8);
    OK(64, 0x66, 0xa3, 1, 2, 3, 4, 5, 6, 7, 8);
    expect(10, true, 2, 0, 2);
    OK(64, 0x67, 0xa1, 0, 0, 0xe0, 0xfe);
    expect(6, false, 4, 0, 4);
    OK(64, 0x4c, 0xa3, 1, 2, 3, 4, 5, 6, 7, 8); /* REX.R: still rAX */
    expect(10, true, 8, 0, 8);
    OK(32, 0xa1, 0, 0, 0xe0, 0xfe);
    expect(5, false, 4, 0, 4);
    OK(32, 0xa3, 0, 0, 0xe0, 0xfe);
    expect(5, true, 4, 0, 4);
    OK(32, 0x67, 0xa1, 0x20, 0x03);
    expect(4, false, 4, 0, 4);
    OK(32, 0x66, 0xa1, 0, 0, 0xe0, 0xfe);
    expect(6, false, 2, 0, 2);
    OK(16, 0xa1, 0x20, 0x03);
    expect(3, false, 2, 0, 2);
    OK(16, 0x67, 0xa3, 0, 0, 0xe0, 0xfe);
    expect(6, true, 2, 0, 2);
    OK(16, 0x66, 0xa1, 0x20, 0x03);
    expect(4, false, 4, 0, 4);
    BAD(64, 0xa1, 1, 2, 3, 4); /* 64-bit moffs needs 8 bytes */
    BAD(32, 0xa3, 1, 2, 3);
    BAD(16, 0xa1, 1);
    BAD(64, 0xa0, 1, 2, 3, 4, 5, 6, 7, 8); /* 8-bit moffs forms are not decoded */
    BAD(64, 0xa2, 1, 2, 3, 4, 5, 6, 7, 8);
}

/* ---------------------------------------------------------------- ModRM lengths */

static void test_modrm_32_64(void **state)
{
    (void)state;
    static const int modes[] = {32, 64};
    for (size_t i = 0; i < 2; i++) {
        int m = modes[i];
        for (uint8_t rm = 0; rm < 8; rm++) {
            if (rm == 4 || rm == 5)
                continue;
            assert_int_equal(LENGTH(m, 0x89, rm), 2);                    /* [reg] */
            assert_int_equal(LENGTH(m, 0x89, 0x40 | rm, 9), 3);          /* disp8 */
            assert_int_equal(LENGTH(m, 0x89, 0x80 | rm, 1, 2, 3, 4), 6); /* disp32 */
            BAD(m, 0x89, 0x40 | rm);                                     /* disp8 cut */
            BAD(m, 0x89, 0x80 | rm, 1, 2, 3);                            /* disp32 cut */
        }
        assert_int_equal(LENGTH(m, 0x89, 0x05, 1, 2, 3, 4), 6);       /* disp32 / RIP */
        assert_int_equal(LENGTH(m, 0x89, 0x45, 1), 3);                /* [rbp+disp8] */
        assert_int_equal(LENGTH(m, 0x89, 0x85, 1, 2, 3, 4), 6);       /* [rbp+disp32] */
        assert_int_equal(LENGTH(m, 0x89, 0x04, 0x24), 3);             /* SIB */
        assert_int_equal(LENGTH(m, 0x89, 0x04, 0x88), 3);             /* SIB index */
        assert_int_equal(LENGTH(m, 0x89, 0x04, 0x25, 1, 2, 3, 4), 7); /* SIB base 5, mod 0 */
        assert_int_equal(LENGTH(m, 0x89, 0x04, 0xcd, 1, 2, 3, 4), 7); /* [rcx*8+disp32] */
        assert_int_equal(LENGTH(m, 0x89, 0x44, 0x24, 8), 4);          /* SIB + disp8 */
        assert_int_equal(LENGTH(m, 0x89, 0x44, 0x25, 8), 4);          /* base 5, mod 1 */
        assert_int_equal(LENGTH(m, 0x89, 0x84, 0x24, 1, 2, 3, 4), 7); /* SIB + disp32 */
        assert_int_equal(LENGTH(m, 0x89, 0x84, 0x25, 1, 2, 3, 4), 7); /* base 5, mod 2 */
        BAD(m, 0x89, 0x04);                                           /* SIB cut */
        BAD(m, 0x89, 0x04, 0x25, 1, 2, 3);                            /* disp32 cut */
        BAD(m, 0x89, 0x05, 1, 2, 3);
        BAD(m, 0x89, 0x44, 0x24);
    }
    /* 67 in 64-bit mode: 32-bit addressing keeps the SIB forms and the EIP-relative disp32. */
    assert_int_equal(LENGTH(64, 0x67, 0x89, 0x04, 0x24), 4);
    assert_int_equal(LENGTH(64, 0x67, 0x8b, 0x05, 1, 2, 3, 4), 7);
    assert_int_equal(LENGTH(64, 0x67, 0x8b, 0x06), 3); /* not the 16-bit disp16 form */
}

static void test_modrm_16(void **state)
{
    (void)state;
    for (uint8_t rm = 0; rm < 8; rm++) {
        if (rm != 6)
            assert_int_equal(LENGTH(16, 0x89, rm), 2);
        assert_int_equal(LENGTH(16, 0x89, 0x40 | rm, 9), 3);
        assert_int_equal(LENGTH(16, 0x89, 0x80 | rm, 1, 2), 4);
        assert_int_equal(LENGTH(32, 0x67, 0x89, 0x40 | rm, 9), 4);
        assert_int_equal(LENGTH(32, 0x67, 0x89, 0x80 | rm, 1, 2), 5);
        BAD(16, 0x89, 0x80 | rm, 1);
    }
    assert_int_equal(LENGTH(16, 0x89, 0x06, 0x20, 0x03), 4); /* [disp16] */
    assert_int_equal(LENGTH(16, 0x89, 0x04), 2);             /* [si]: no SIB */
    assert_int_equal(LENGTH(16, 0x89, 0x05), 2);             /* [di]: no disp32 */
    assert_int_equal(LENGTH(32, 0x67, 0x89, 0x06, 0x20, 0x03), 5);
    assert_int_equal(LENGTH(32, 0x67, 0x89, 0x04), 3);
    assert_int_equal(LENGTH(32, 0x67, 0x8b, 0x46, 0xfe), 4); /* [bp-2] */
    BAD(16, 0x89, 0x06, 0x20);
    /* 67 in 16-bit mode selects 32-bit addressing. */
    assert_int_equal(LENGTH(16, 0x67, 0x89, 0x04, 0x24), 4);
    assert_int_equal(LENGTH(16, 0x67, 0x89, 0x05, 1, 2, 3, 4), 7);
    assert_int_equal(LENGTH(16, 0x67, 0x66, 0xc7, 0x44, 0x24, 4, 1, 2, 3, 4), 10);
    assert_int_equal(op.size, 4);
}

/* ---------------------------------------------------------------- prefixes */

static void test_prefixes(void **state)
{
    (void)state;
    static const uint8_t seg[] = {0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65};
    for (size_t i = 0; i < 6; i++) {
        for (int m = 16; m <= 64; m *= 2) {
            uint8_t b[] = {seg[i], 0x89, 0x08};
            assert_int_equal(decode_n(b, 3, m), 0);
            assert_int_equal(op.len, 3);
            assert_int_equal(op.reg, 1);
        }
    }
    OK(64, 0x65, 0x66, 0x67, 0x89, 0x04, 0x24);
    expect(6, true, 2, 0, 2);
    OK(64, 0x66, 0x66, 0x89, 0x08); /* a repeated prefix is still one 66 */
    expect(4, true, 2, 1, 2);
    OK(64, 0x64, 0x48, 0x89, 0x08); /* REX after the legacy prefixes */
    expect(4, true, 8, 1, 8);
    OK(64, 0x4c, 0x66, 0x89, 0x08); /* REX before a legacy prefix is ignored */
    expect(4, true, 2, 1, 2);
    OK(64, 0x40, 0x65, 0x88, 0x20); /* ... so AH is AH again */
    assert_int_equal(op.reg, 4);
    assert_true(op.high_byte);
    OK(64, 0x44, 0x4c, 0x89, 0x08); /* the last REX counts */
    expect(4, true, 8, 9, 8);
    BAD(64, 0xf0, 0x89, 0x08); /* LOCK, REP: not in the decoded set */
    BAD(64, 0xf2, 0x89, 0x08);
    BAD(64, 0xf3, 0x89, 0x08);
    BAD(32, 0x48, 0x89, 0x08); /* 48 is DEC eAX outside 64-bit mode */
    BAD(16, 0x41, 0x89, 0x08);
}

/* ---------------------------------------------------------------- rejects */

static void test_register_direct_rejected(void **state)
{
    (void)state;
    BAD(64, 0x89, 0xc8);
    BAD(64, 0x8b, 0xc1);
    BAD(64, 0x88, 0xe0);
    BAD(64, 0x8a, 0xc4);
    BAD(64, 0xc6, 0xc0, 0x01);
    BAD(64, 0xc7, 0xc0, 1, 2, 3, 4);
    BAD(64, 0x0f, 0xb6, 0xc1);
    BAD(64, 0x0f, 0xb7, 0xc1);
    BAD(16, 0x89, 0xc0);
    BAD(32, 0x67, 0x89, 0xc0);
    BAD(64, 0xc7, 0xf8, 0, 0, 0, 0); /* XBEGIN */
}

static void test_unknown_opcodes(void **state)
{
    (void)state;
    static const uint8_t ops[] = {0x00, 0x01, 0x03, 0x08, 0x09, 0x0b, 0x21, 0x23, 0x29,
                                  0x2b, 0x31, 0x33, 0x39, 0x3b, 0x80, 0x81, 0x83, 0x84,
                                  0x85, 0x86, 0x87, 0x8c, 0x8d, 0x8e, 0x90, 0xa0, 0xa2,
                                  0xa4, 0xa5, 0xaa, 0xab, 0xf6, 0xf7, 0xfe, 0xff, 0xc4};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        uint8_t b[] = {ops[i], 0x00, 0, 0, 0, 0, 0, 0, 0, 0};
        assert_int_equal(decode_n(b, sizeof(b), 64), -1);
    }
    BAD(64, 0x0f, 0xbe, 0x00); /* MOVSX */
    BAD(64, 0x0f, 0xbf, 0x00);
    BAD(64, 0x0f, 0x10, 0x00);
    BAD(64, 0x0f, 0xb8, 0x00);
    BAD(64, 0x0f);
}

static void test_bad_mode(void **state)
{
    (void)state;
    BAD(0, 0x89, 0x08);
    BAD(8, 0x89, 0x08);
    BAD(48, 0x89, 0x08);
    BAD(128, 0x89, 0x08);
}

/* Every valid instruction, cut anywhere short, is rejected without a read past the cut. */
static void test_truncated(void **state)
{
    (void)state;
    static const struct {
        int mode;
        uint8_t len;
        uint8_t b[15];
    } insns[] = {
        {64, 2, {0x89, 0x08}},
        {64, 9, {0x65, 0x48, 0x89, 0x84, 0x24, 1, 2, 3, 4}},
        {64, 7, {0x48, 0xc7, 0x00, 1, 2, 3, 4}},
        {64, 5, {0x66, 0xc7, 0x00, 1, 2}},
        {64, 3, {0xc6, 0x00, 1}},
        {64, 4, {0x48, 0x0f, 0xb7, 0x08}},
        {64, 10, {0x48, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8}},
        {64, 7, {0x67, 0x8b, 0x05, 1, 2, 3, 4}},
        {32, 7, {0x89, 0x04, 0x25, 1, 2, 3, 4}},
        {32, 4, {0x67, 0xa1, 1, 2}},
        {16, 4, {0x89, 0x06, 1, 2}},
        {16, 7, {0x66, 0xc7, 0x07, 1, 2, 3, 4}},
    };
    for (size_t i = 0; i < sizeof(insns) / sizeof(insns[0]); i++) {
        assert_int_equal(decode_n(insns[i].b, insns[i].len, insns[i].mode), 0);
        assert_int_equal(op.len, insns[i].len);
        for (size_t n = 0; n < insns[i].len; n++) {
            assert_int_equal(decode_n(insns[i].b, n, insns[i].mode), -1);
            assert_int_equal(op.len, 0xaaaaaaaau); /* *op untouched on failure */
        }
    }
    assert_int_equal(mmio_decode(NULL, 0, 64, &op), -1);
}

static void test_trailing_bytes_ignored(void **state)
{
    (void)state;
    OK(64, 0x89, 0x08, 0x90, 0x90, 0xcc);
    expect(2, true, 4, 1, 4);
}

static void test_15_byte_limit(void **state)
{
    (void)state;
    uint8_t b[20];
    /* 11 prefixes + C7 /0 + imm16 = 15 bytes: fine; one more prefix: 16. */
    for (size_t p = 11; p <= 12; p++) {
        memset(b, 0x66, p);
        memcpy(b + p, BYTES(0xc7, 0x00, 0x34, 0x12, 0x90, 0x90), 6);
        assert_int_equal(decode_n(b, p + 6, 64), p == 11 ? 0 : -1);
    }
    assert_int_equal(op.len, 0xaaaaaaaau);
    assert_int_equal(decode_n(b + 1, 11 + 6, 64), 0);
    expect_imm(15, 2, 0x1234);

    /* 5 prefixes + REX.W A1 moffs64 = 15. */
    memset(b, 0x3e, 6);
    memcpy(b + 6, BYTES(0x48, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8), 10);
    assert_int_equal(decode_n(b + 1, 15, 64), 0);
    assert_int_equal(op.len, 15);
    assert_int_equal(decode_n(b, 16, 64), -1);

    /* 15 prefixes and no opcode within the limit. */
    memset(b, 0x2e, 15);
    memcpy(b + 15, BYTES(0x89, 0x08), 2);
    assert_int_equal(decode_n(b, 17, 32), -1);
    assert_int_equal(decode_n(b + 2, 15, 32), 0);
    assert_int_equal(op.len, 15);
    assert_int_equal(decode_n(b + 1, 16, 32), -1);
}

/* ---------------------------------------------------------------- register effects */

static const uint64_t OLD = 0x1122334455667788ull;

static void test_load_merge(void **state)
{
    (void)state;
    OK(32, 0x8b, 0x08); /* mov ecx, [eax]: 32-bit results zero-extend */
    assert_int_equal(mmio_op_gpr(&op), 1);
    assert_int_equal(mmio_load_merge(&op, OLD, 0xffffffffffffffffull), 0xffffffffull);
    OK(64, 0x48, 0x8b, 0x08); /* mov rcx, [rax] */
    assert_int_equal(mmio_load_merge(&op, OLD, 0xffffffffffffffffull), 0xffffffffffffffffull);
    OK(32, 0x66, 0x8b, 0x08); /* mov cx, [eax]: bits 63:16 kept */
    assert_int_equal(mmio_load_merge(&op, OLD, 0xabcdef), 0x112233445566cdefull);
    OK(32, 0x8a, 0x08); /* mov cl, [eax] */
    assert_int_equal(mmio_load_merge(&op, OLD, 0x1ff), 0x11223344556677ffull);
    OK(32, 0x8a, 0x28); /* mov ch, [eax]: bits 15:8 of RCX */
    assert_int_equal(mmio_op_gpr(&op), 1);
    assert_int_equal(mmio_load_merge(&op, OLD, 0x1ab), 0x112233445566ab88ull);
    OK(32, 0x0f, 0xb6, 0x08); /* movzx ecx, byte [eax] */
    assert_int_equal(mmio_load_merge(&op, OLD, 0x1ff), 0xffull);
    OK(32, 0x66, 0x0f, 0xb6, 0x08); /* movzx cx, byte [eax]: bits 63:16 kept */
    assert_int_equal(mmio_load_merge(&op, OLD, 0x1ff), 0x11223344556600ffull);
    OK(64, 0x44, 0x8b, 0x00); /* mov r8d, [rax] */
    assert_int_equal(mmio_op_gpr(&op), 8);
}

static void test_store_value(void **state)
{
    (void)state;
    OK(32, 0x89, 0x08); /* mov [eax], ecx */
    assert_int_equal(mmio_store_value(&op, OLD), 0x55667788u);
    OK(32, 0x88, 0x38); /* mov [eax], bh */
    assert_int_equal(mmio_op_gpr(&op), 3);
    assert_int_equal(mmio_store_value(&op, OLD), 0x77);
    OK(32, 0x66, 0x89, 0x08); /* mov [eax], cx */
    assert_int_equal(mmio_store_value(&op, OLD), 0x7788);
    OK(64, 0x48, 0x89, 0x08); /* mov [rax], rcx */
    assert_int_equal(mmio_store_value(&op, OLD), OLD);
    OK(64, 0x48, 0xc7, 0x00, 0xfe, 0xff, 0xff, 0xff); /* mov qword [rax], -2 */
    assert_int_equal(mmio_store_value(&op, OLD), 0xfffffffffffffffeull);
    OK(32, 0xc6, 0x00, 0x5a); /* mov byte [eax], 0x5a: the register is not read */
    assert_int_equal(mmio_store_value(&op, OLD), 0x5a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_register),
        cmocka_unit_test(test_load_register),
        cmocka_unit_test(test_byte_registers),
        cmocka_unit_test(test_immediates),
        cmocka_unit_test(test_immediate_needs_slash_0),
        cmocka_unit_test(test_movzx),
        cmocka_unit_test(test_moffs),
        cmocka_unit_test(test_modrm_32_64),
        cmocka_unit_test(test_modrm_16),
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_register_direct_rejected),
        cmocka_unit_test(test_unknown_opcodes),
        cmocka_unit_test(test_bad_mode),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_trailing_bytes_ignored),
        cmocka_unit_test(test_15_byte_limit),
        cmocka_unit_test(test_load_merge),
        cmocka_unit_test(test_store_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

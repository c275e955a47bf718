/* SPDX-License-Identifier: GPL-2.0-only */
/* Instruction lengths for exits without a next-RIP, checked against the expected opcode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/insn.h"

/* Exactly sized arrays, so AddressSanitizer catches a read past avail. */
#define BYTES(...)           ((const uint8_t[]){__VA_ARGS__})
#define LEN(kind, mode, ...) insn_length(kind, BYTES(__VA_ARGS__), sizeof(BYTES(__VA_ARGS__)), mode)

static const struct {
    enum insn_kind kind;
    uint8_t len;
    uint8_t op[3];
} kinds[] = {
    {INSN_CPUID, 2, {0x0f, 0xa2}},         {INSN_RDMSR, 2, {0x0f, 0x32}},
    {INSN_WRMSR, 2, {0x0f, 0x30}},         {INSN_HLT, 1, {0xf4}},
    {INSN_VMMCALL, 3, {0x0f, 0x01, 0xd9}}, {INSN_VMCALL, 3, {0x0f, 0x01, 0xc1}},
    {INSN_INVD, 2, {0x0f, 0x08}},          {INSN_WBINVD, 2, {0x0f, 0x09}},
    {INSN_XSETBV, 3, {0x0f, 0x01, 0xd1}},  {INSN_MONITOR, 3, {0x0f, 0x01, 0xc8}},
    {INSN_MWAIT, 3, {0x0f, 0x01, 0xc9}},   {INSN_VMRUN, 3, {0x0f, 0x01, 0xd8}},
    {INSN_VMLOAD, 3, {0x0f, 0x01, 0xda}},  {INSN_VMSAVE, 3, {0x0f, 0x01, 0xdb}},
    {INSN_STGI, 3, {0x0f, 0x01, 0xdc}},    {INSN_CLGI, 3, {0x0f, 0x01, 0xdd}},
    {INSN_SKINIT, 3, {0x0f, 0x01, 0xde}},  {INSN_INVLPGA, 3, {0x0f, 0x01, 0xdf}},
    {INSN_RDPRU, 3, {0x0f, 0x01, 0xfd}},   {INSN_IRET, 1, {0xcf}},
    {INSN_PAUSE, 2, {0xf3, 0x90}}, /* F3 counted here: it is part of the opcode */
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static const int modes[] = {16, 32, 64};

/* Decodes prefix bytes followed by kinds[k]'s opcode from an exactly sized heap buffer. */
static int decode(size_t k, const uint8_t *prefix, size_t nprefix, int mode)
{
    size_t n = nprefix + kinds[k].len;
    uint8_t *buf = malloc(n);
    memcpy(buf, prefix, nprefix);
    memcpy(buf + nprefix, kinds[k].op, kinds[k].len);
    int len = insn_length(kinds[k].kind, buf, n, mode);
    free(buf);
    return len;
}

static void test_every_kind_plain(void **state)
{
    (void)state;
    static const uint8_t none[1];
    for (size_t k = 0; k < NKINDS; k++)
        for (size_t m = 0; m < 3; m++)
            assert_int_equal(decode(k, none, 0, modes[m]), kinds[k].len);
}

static void test_every_kind_with_prefixes(void **state)
{
    (void)state;
    static const uint8_t legacy[] = {0x66, 0x2e, 0x67};
    static const uint8_t with_rex[] = {0x66, 0x2e, 0x67, 0x48};
    for (size_t k = 0; k < NKINDS; k++) {
        for (size_t m = 0; m < 3; m++)
            assert_int_equal(decode(k, legacy, sizeof(legacy), modes[m]), kinds[k].len + 3);
        /* REX.W changes none of them, PAUSE included (only REX.B would). */
        assert_int_equal(decode(k, with_rex, sizeof(with_rex), 64), kinds[k].len + 4);
    }
}

/* The one exception (arch/x86/insn.c): QEMU 7.2 reports INVD's intercept as WBINVD's. */
static bool wbinvd_takes_invd(enum insn_kind kind, enum insn_kind other)
{
    return kind == INSN_WBINVD && other == INSN_INVD;
}

/* Issue 37: kvm-unit-tests' vmexit.flat invd test stopped under QEMU ("cannot decode"). */
static void test_wbinvd_exit_at_invd(void **state)
{
    (void)state;
    assert_int_equal(LEN(INSN_WBINVD, 64, 0x0f, 0x08), 2);
    assert_int_equal(LEN(INSN_WBINVD, 64, 0x0f, 0x09), 2);
    assert_int_equal(LEN(INSN_WBINVD, 64, 0x0f, 0x0a), -1);
    assert_int_equal(LEN(INSN_INVD, 64, 0x0f, 0x09), -1);
}

static void test_every_kind_rejects_others_opcode(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++)
        for (size_t other = 0; other < NKINDS; other++)
            if (other != k && !wbinvd_takes_invd(kinds[k].kind, kinds[other].kind)) {
                size_t n = kinds[other].len;
                int len = insn_length(kinds[k].kind, kinds[other].op, n, 64);
                assert_int_equal(len, -1);
            }
}

static void test_all_legacy_prefixes(void **state)
{
    (void)state;
    assert_int_equal(LEN(INSN_CPUID, 32, 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64,
                         0x65, 0x0f, 0xa2),
                     13);
    /* Not prefixes: 0F A2 must follow directly. */
    assert_int_equal(LEN(INSN_CPUID, 32, 0x90, 0x0f, 0xa2), -1);
    assert_int_equal(LEN(INSN_CPUID, 64, 0xc4, 0x0f, 0xa2), -1);
}

static void test_rex_only_in_64bit_mode(void **state)
{
    (void)state;
    assert_int_equal(LEN(INSN_CPUID, 64, 0x48, 0x0f, 0xa2), 3);
    /* Outside 64-bit mode 48 is DEC eax: a different instruction. */
    assert_int_equal(LEN(INSN_CPUID, 32, 0x48, 0x0f, 0xa2), -1);
    assert_int_equal(LEN(INSN_CPUID, 16, 0x40, 0x0f, 0xa2), -1);
    for (unsigned rex = 0x40; rex <= 0x4f; rex++)
        assert_int_equal(LEN(INSN_VMMCALL, 64, 0x66, (uint8_t)rex, 0x0f, 0x01, 0xd9), 5);
    /* REX before a legacy prefix is ignored, not an error. */
    assert_int_equal(LEN(INSN_RDMSR, 64, 0x48, 0x66, 0x0f, 0x32), 4);
    assert_int_equal(LEN(INSN_RDMSR, 64, 0x48, 0x41, 0x0f, 0x32), 4);
}

static void test_iret(void **state)
{
    (void)state;
    assert_int_equal(LEN(INSN_IRET, 16, 0xcf), 1);
    assert_int_equal(LEN(INSN_IRET, 32, 0x66, 0xcf), 2);
    assert_int_equal(LEN(INSN_IRET, 64, 0x48, 0xcf), 2); /* IRETQ */
    assert_int_equal(LEN(INSN_IRET, 64, 0x41, 0xcf), 2);
    assert_int_equal(LEN(INSN_IRET, 32, 0x48, 0xcf), -1);
    assert_int_equal(LEN(INSN_IRET, 64, 0xca, 0x00, 0x00), -1);
}

static void test_pause_variants(void **state)
{
    (void)state;
    for (size_t m = 0; m < 3; m++) {
        assert_int_equal(LEN(INSN_PAUSE, modes[m], 0xf3, 0x90), 2);
        assert_int_equal(LEN(INSN_PAUSE, modes[m], 0x66, 0xf3, 0x90), 3);
        assert_int_equal(LEN(INSN_PAUSE, modes[m], 0xf3, 0x66, 0x90), 3);
        /* Plain NOP is not PAUSE. */
        assert_int_equal(LEN(INSN_PAUSE, modes[m], 0x90), -1);
        assert_int_equal(LEN(INSN_PAUSE, modes[m], 0x66, 0x90), -1);
        assert_int_equal(LEN(INSN_PAUSE, modes[m], 0xf3), -1);
    }
    /* REX.B 90 is xchg r8, rax. */
    assert_int_equal(LEN(INSN_PAUSE, 64, 0xf3, 0x41, 0x90), -1);
    assert_int_equal(LEN(INSN_PAUSE, 64, 0xf3, 0x49, 0x90), -1);
    /* Other REX bits leave it a NOP, so F3 makes it PAUSE. */
    assert_int_equal(LEN(INSN_PAUSE, 64, 0xf3, 0x48, 0x90), 3);
    /* A REX.B that a legacy prefix follows is ignored. */
    assert_int_equal(LEN(INSN_PAUSE, 64, 0x41, 0xf3, 0x90), 3);
    /* The last REX counts. */
    assert_int_equal(LEN(INSN_PAUSE, 64, 0xf3, 0x41, 0x48, 0x90), 4);
    assert_int_equal(LEN(INSN_PAUSE, 64, 0xf3, 0x48, 0x41, 0x90), -1);
    /* In 32-bit mode 41 is INC ecx, an instruction of its own. */
    assert_int_equal(LEN(INSN_PAUSE, 32, 0xf3, 0x41, 0x90), -1);
}

static void test_15_byte_limit(void **state)
{
    (void)state;
    uint8_t buf[20];
    /* 13 prefixes + 0F A2 = 15 bytes: allowed. */
    memset(buf, 0x66, sizeof(buf));
    buf[13] = 0x0f;
    buf[14] = 0xa2;
    assert_int_equal(insn_length(INSN_CPUID, buf, sizeof(buf), 32), 15);
    /* 14 prefixes + 0F A2 = 16 bytes. */
    memset(buf, 0x66, sizeof(buf));
    buf[14] = 0x0f;
    buf[15] = 0xa2;
    assert_int_equal(insn_length(INSN_CPUID, buf, sizeof(buf), 32), -1);
    /* 14 prefixes + F4 = 15; 15 + F4 = 16. */
    memset(buf, 0x2e, sizeof(buf));
    buf[14] = 0xf4;
    assert_int_equal(insn_length(INSN_HLT, buf, sizeof(buf), 16), 15);
    memset(buf, 0x2e, sizeof(buf));
    buf[15] = 0xf4;
    assert_int_equal(insn_length(INSN_HLT, buf, sizeof(buf), 16), -1);
    /* REX counts toward the limit too. */
    memset(buf, 0x48, sizeof(buf));
    buf[15] = 0xf4;
    assert_int_equal(insn_length(INSN_HLT, buf, sizeof(buf), 64), -1);
    buf[14] = 0xf4;
    assert_int_equal(insn_length(INSN_HLT, buf, sizeof(buf), 64), 15);
    /* All prefixes, never an opcode. */
    memset(buf, 0xf3, sizeof(buf));
    assert_int_equal(insn_length(INSN_PAUSE, buf, sizeof(buf), 64), -1);
}

static void test_truncated(void **state)
{
    (void)state;
    static const uint8_t vmmcall[] = {0x66, 0x0f, 0x01, 0xd9};
    for (size_t avail = 0; avail < sizeof(vmmcall); avail++)
        assert_int_equal(insn_length(INSN_VMMCALL, vmmcall, avail, 64), -1);
    assert_int_equal(insn_length(INSN_VMMCALL, vmmcall, sizeof(vmmcall), 64), 4);
    assert_int_equal(insn_length(INSN_HLT, NULL, 0, 32), -1);
    /* Bytes past the instruction are not looked at. */
    assert_int_equal(LEN(INSN_HLT, 32, 0xf4, 0xff, 0xff), 1);
}

static void test_wrong_opcode(void **state)
{
    (void)state;
    assert_int_equal(LEN(INSN_CPUID, 64, 0x0f, 0x32), -1);
    assert_int_equal(LEN(INSN_WRMSR, 64, 0x0f, 0x32), -1);
    assert_int_equal(LEN(INSN_VMMCALL, 64, 0x0f, 0x01, 0xc1), -1);
    assert_int_equal(LEN(INSN_VMCALL, 64, 0x0f, 0x01, 0xd9), -1);
    assert_int_equal(LEN(INSN_XSETBV, 64, 0x0f, 0x02, 0xd1), -1);
    assert_int_equal(LEN(INSN_HLT, 64, 0xf3, 0x90), -1);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    static const uint8_t hlt[] = {0xf4};
    assert_int_equal(insn_length((enum insn_kind)(INSN_IRET + 1), hlt, 1, 64), -1);
    assert_int_equal(insn_length(INSN_HLT, hlt, 1, 8), -1);
    assert_int_equal(insn_length(INSN_HLT, hlt, 1, 0), -1);
}

/* The word the fast path loads: bytes[0..3], little-endian. */
static uint32_t word(uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
    return b0 | (uint32_t)b1 << 8 | (uint32_t)b2 << 16 | (uint32_t)b3 << 24;
}

/* insn_is_plain, the inline check on 4 loaded bytes, against this file's own opcode table. */
static int mov_cr8(int mode, uint8_t *gpr, const uint8_t *bytes, size_t n)
{
    return insn_mov_to_cr8(bytes, n, mode, gpr);
}
#define MOV_CR8(mode, gpr, ...) mov_cr8(mode, gpr, BYTES(__VA_ARGS__), sizeof(BYTES(__VA_ARGS__)))

static void test_mov_to_cr8(void **state)
{
    (void)state;
    uint8_t gpr = 0xee;
    /* mov %rax, %cr8; mov %r13, %cr8 (REX.B); mod bits ignored. */
    assert_int_equal(MOV_CR8(64, &gpr, 0x44, 0x0f, 0x22, 0xc0), 4);
    assert_int_equal(gpr, 0);
    assert_int_equal(MOV_CR8(64, &gpr, 0x45, 0x0f, 0x22, 0xc5), 4);
    assert_int_equal(gpr, 13);
    assert_int_equal(MOV_CR8(64, &gpr, 0x4c, 0x0f, 0x22, 0x03), 4);
    assert_int_equal(gpr, 3);
    /* AMD's LOCK MOV CR0 is CR8, in any mode; a prefix before it counts in the length. */
    assert_int_equal(MOV_CR8(32, &gpr, 0xf0, 0x0f, 0x22, 0xc1), 4);
    assert_int_equal(gpr, 1);
    assert_int_equal(MOV_CR8(64, &gpr, 0x2e, 0xf0, 0x0f, 0x22, 0xc2), 5);
    assert_int_equal(gpr, 2);
    /* Not CR8: CR0, CR3, CR4 (and CR8's REX before a legacy prefix, which drops it). */
    assert_int_equal(MOV_CR8(64, &gpr, 0x0f, 0x22, 0xc0), -1);
    assert_int_equal(MOV_CR8(64, &gpr, 0x44, 0x0f, 0x22, 0xd8), -1);
    assert_int_equal(MOV_CR8(64, &gpr, 0x0f, 0x22, 0xe0), -1);
    assert_int_equal(MOV_CR8(64, &gpr, 0x44, 0x66, 0x0f, 0x22, 0xc0), -1);
    /* REX is no prefix outside 64-bit mode; MOV from CR8 (0F 20) is not a write; truncated. */
    assert_int_equal(MOV_CR8(32, &gpr, 0x44, 0x0f, 0x22, 0xc0), -1);
    assert_int_equal(MOV_CR8(64, &gpr, 0x44, 0x0f, 0x20, 0xc0), -1);
    assert_int_equal(MOV_CR8(64, &gpr, 0x44, 0x0f, 0x22), -1);
    assert_int_equal(MOV_CR8(48, &gpr, 0xf0, 0x0f, 0x22, 0xc0), -1);
}

static void test_plain_word(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        uint8_t b[4];
        for (unsigned trail = 0; trail < 256; trail += 51) {
            for (size_t i = 0; i < 4; i++)
                b[i] = i < kinds[k].len ? kinds[k].op[i] : (uint8_t)(trail + i);
            /* Whatever follows the instruction, it is recognised, with its length. */
            assert_true(insn_is_plain(kinds[k].kind, word(b[0], b[1], b[2], b[3])));
            assert_int_equal(insn_opcodes[kinds[k].kind].len, kinds[k].len);
            /* Any one of its bytes changed, it is not. */
            for (size_t i = 0; i < kinds[k].len; i++) {
                uint8_t c[4] = {b[0], b[1], b[2], b[3]};
                c[i] ^= (uint8_t)(trail | 1);
                bool invd = c[0] == 0x0f && c[1] == 0x08;
                if (!wbinvd_takes_invd(kinds[k].kind, invd ? INSN_INVD : kinds[k].kind))
                    assert_false(insn_is_plain(kinds[k].kind, word(c[0], c[1], c[2], c[3])));
            }
        }
        /* Another kind's opcode is not this one's. */
        for (size_t other = 0; other < NKINDS; other++) {
            if (other == k || wbinvd_takes_invd(kinds[k].kind, kinds[other].kind))
                continue;
            const uint8_t *o = kinds[other].op;
            uint32_t w = word(o[0], kinds[other].len > 1 ? o[1] : 0x90,
                              kinds[other].len > 2 ? o[2] : 0x90, 0x90);
            assert_false(insn_is_plain(kinds[k].kind, w));
        }
    }
    /* A prefix makes it the decoder's. */
    assert_false(insn_is_plain(INSN_CPUID, word(0x2e, 0x0f, 0xa2, 0x90)));
    assert_false(insn_is_plain(INSN_VMMCALL, word(0x66, 0x0f, 0x01, 0xd9)));
    assert_false(insn_is_plain(INSN_HLT, word(0x2e, 0xf4, 0x90, 0x90)));
    /* PAUSE is F3 90 as a whole; a bare 90 is NOP. */
    assert_true(insn_is_plain(INSN_PAUSE, word(0xf3, 0x90, 0xeb, 0xfc)));
    assert_false(insn_is_plain(INSN_PAUSE, word(0x90, 0x90, 0x90, 0x90)));
    assert_false(insn_is_plain(INSN_PAUSE, word(0xf3, 0x48, 0x90, 0x90)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_plain),
        cmocka_unit_test(test_every_kind_with_prefixes),
        cmocka_unit_test(test_every_kind_rejects_others_opcode),
        cmocka_unit_test(test_wbinvd_exit_at_invd),
        cmocka_unit_test(test_all_legacy_prefixes),
        cmocka_unit_test(test_rex_only_in_64bit_mode),
        cmocka_unit_test(test_iret),
        cmocka_unit_test(test_pause_variants),
        cmocka_unit_test(test_15_byte_limit),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_wrong_opcode),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_mov_to_cr8),
        cmocka_unit_test(test_plain_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

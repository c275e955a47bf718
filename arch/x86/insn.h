/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Instruction lengths for exits that do not report one (SVM without NRIPS):
 * the exit says which instruction it was; the bytes at the guest's RIP must
 * decode to that instruction, and the decoder returns its length including
 * prefixes (legacy prefixes 66 67 F0 F2 F3 2E 36 3E 26 64 65, and REX
 * 40-4F in 64-bit mode only, which must come last). Instructions are at
 * most 15 bytes.
 *
 * Contract: returns the length, or -1 when the bytes are not the expected
 * instruction (a guest that rewrote its code under the exit, or a decoder
 * gap) or do not fit in avail bytes. The caller stops the VM then rather
 * than guess.
 */
#ifndef POLLUX_ARCH_X86_INSN_H
#define POLLUX_ARCH_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INSN_MAX 15 /* the longest x86 instruction, prefixes included */

enum insn_kind {
    INSN_CPUID,   /* 0F A2 */
    INSN_RDMSR,   /* 0F 32 */
    INSN_WRMSR,   /* 0F 30 */
    INSN_HLT,     /* F4 */
    INSN_PAUSE,   /* F3 90 (F3 is part of the opcode) */
    INSN_VMMCALL, /* 0F 01 D9 */
    INSN_VMCALL,  /* 0F 01 C1 */
    INSN_INVD,    /* 0F 08 */
    INSN_WBINVD,  /* 0F 09 */
    INSN_XSETBV,  /* 0F 01 D1 */
    INSN_MONITOR, /* 0F 01 C8 */
    INSN_MWAIT,   /* 0F 01 C9 */
    INSN_VMRUN,   /* 0F 01 D8 */
    INSN_VMLOAD,  /* 0F 01 DA */
    INSN_VMSAVE,  /* 0F 01 DB */
    INSN_STGI,    /* 0F 01 DC */
    INSN_CLGI,    /* 0F 01 DD */
    INSN_SKINIT,  /* 0F 01 DE */
    INSN_INVLPGA, /* 0F 01 DF */
    INSN_RDPRU,   /* 0F 01 FD */
    INSN_IRET,    /* CF (48 CF in 64-bit mode is IRETQ) */
};

/*
 * Each kind's usual encoding, without prefixes: its len bytes as a
 * little-endian word (zero above them) and the mask of those bytes. PAUSE's
 * is F3 90: the decoder reads its F3 as a prefix, the inline check as part
 * of the opcode.
 */
struct insn_opcode {
    uint32_t word, mask;
    uint8_t len;
};
extern const struct insn_opcode insn_opcodes[INSN_IRET + 1];

/*
 * Whether code, the first 4 bytes of the instruction as a little-endian
 * word, starts with kind's usual encoding (insn_opcodes[kind].len bytes;
 * if not, ask insn_length). Inline: the common exits' instructions are
 * recognised with one load of the bytes, no call.
 */
static inline bool insn_is_plain(enum insn_kind kind, uint32_t code)
{
    return (code & insn_opcodes[kind].mask) == insn_opcodes[kind].word;
}

/* mode: 16, 32 or 64 (the guest's code-segment size). */
int insn_length(enum insn_kind kind, const uint8_t *bytes, size_t avail, int mode);

/*
 * MOV to CR8 from a register (0F 22 /r with CR8 as its control register:
 * REX.R in 64-bit mode, or AMD's LOCK prefix for CR8 in any mode), for a
 * CR8-write exit that does not name the register (SVM without decode
 * assists). Returns the length and the register in *gpr (x86 numbering,
 * REX.B included), or -1 when the bytes are not such a MOV.
 */
int insn_mov_to_cr8(const uint8_t *bytes, size_t avail, int mode, uint8_t *gpr);

#endif

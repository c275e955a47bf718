/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Decoding the guest instruction behind an MMIO exit (a nested page fault on
 * an emulated page such as the xAPIC's). Neither emulator offers decode
 * assists, so pollux fetches the bytes (vmm/exit/guest_access.c) and decodes the
 * MOV forms compilers emit for volatile loads and stores:
 *   88 /r, 89 /r        MOV r/m8, r8 / MOV r/m16/32/64, r
 *   8A /r, 8B /r        MOV r8, r/m8 / MOV r, r/m
 *   C6 /0 ib, C7 /0 id  MOV r/m8, imm8 / MOV r/m, imm16/32 (sign-extended for 64-bit)
 *   0F B6 /r, 0F B7 /r  MOVZX r, r/m8 / r, r/m16
 *   A1, A3              MOV eAX, moffs / MOV moffs, eAX
 * with prefixes 66 (16-bit operand), 67 (address size, affects the length of
 * moffs and ModRM displacement forms), segment overrides, and REX (64-bit
 * mode only: W = 64-bit operand, R extends the register, X/B only extend the
 * address and do not matter here). ModRM with any addressing form (SIB,
 * disp8, disp32, RIP-relative) is accepted: only its length matters, since
 * the fault already gives the address. A register-direct ModRM (mod = 3) is
 * not a memory access and is rejected.
 *
 * Contract: returns 0 and fills *op, or -1 for anything else (the caller
 * stops the VM with the bytes in the message). Never reads beyond len.
 */
#ifndef POLLUX_VMM_EXIT_MMIO_DECODE_H
#define POLLUX_VMM_EXIT_MMIO_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mmio_op {
    unsigned len;      /* instruction length */
    bool write;        /* store to memory */
    unsigned size;     /* access size in bytes: 1, 2, 4 or 8 */
    bool has_imm;      /* a store of an immediate */
    uint64_t imm;      /* the immediate, sign-extended to size */
    unsigned reg;      /* GPR number 0-15 (RAX=0 ... R15=15) for register forms */
    bool high_byte;    /* AH/CH/DH/BH: an 8-bit register 4-7 without REX */
    unsigned reg_size; /* destination register width for loads (movzx: 2, 4 or 8) */
    bool zero_extend;  /* movzx: a load narrower than reg_size, zero-extended */
};

/* mode: 16, 32 or 64 (code-segment size). */
int mmio_decode(const uint8_t *bytes, size_t len, int mode, struct mmio_op *op);

/* The GPR (0-15) a register form reads or writes: AH-BH live in bits 15:8 of RAX-RBX. */
unsigned mmio_op_gpr(const struct mmio_op *op);

/* The op->size bytes a store writes, given the value of mmio_op_gpr's register. */
uint64_t mmio_store_value(const struct mmio_op *op, uint64_t reg);

/*
 * A load's destination register after it read value, from its old contents,
 * as the CPU writes it: 32-bit results zero-extend to 64 bits, 8- and 16-bit
 * ones merge into the low bits (AH-BH into bits 15:8), MOVZX zero-extends to
 * its register width.
 */
uint64_t mmio_load_merge(const struct mmio_op *op, uint64_t old, uint64_t value);

#endif

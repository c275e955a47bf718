/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The instruction-length decoder (arch/x86/insn.c): the first byte picks the
 * instruction the exit names and the code-segment size, the rest are the
 * guest's bytes at RIP. A length must lie within what was given and 15. The
 * MOV-to-CR8 decoder (SVM's CR8 intercept without decode assists) reads the
 * same bytes: a length as strict, and a register 0-15.
 */
#include "tests/fuzz/fuzz.h"

#include "arch/x86/insn.h"

#define KINDS (INSN_IRET + 1)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int modes[] = {16, 32, 64};
    if (size < 1)
        return 0;
    enum insn_kind kind = (enum insn_kind)(data[0] % KINDS);
    int mode = modes[(data[0] / KINDS) % 3];
    uint8_t *bytes = malloc(size - 1 ? size - 1 : 1);
    memcpy(bytes, data + 1, size - 1);
    int len = insn_length(kind, bytes, size - 1, mode);
    FUZZ_REQUIRE(len == -1 || (len >= 1 && len <= 15 && (size_t)len <= size - 1));
    uint8_t gpr = 0xff;
    len = insn_mov_to_cr8(bytes, size - 1, mode, &gpr);
    FUZZ_REQUIRE(len == -1 || (len >= 3 && len <= 15 && (size_t)len <= size - 1 && gpr < 16));
    free(bytes);
    return 0;
}

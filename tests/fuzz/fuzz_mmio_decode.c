/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The MMIO instruction decoder (vmm/exit/mmio_decode.c) on guest-chosen bytes,
 * in each code-segment size. An accepted instruction must fit in what was
 * given and in 15 bytes, with a size and register that exist, and its
 * register effects must stay within its operand size.
 */
#include "tests/fuzz/fuzz.h"

#include "vmm/exit/mmio_decode.h"

static uint64_t mask(unsigned size)
{
    return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int modes[] = {16, 32, 64};
    if (size < 1)
        return 0;
    int mode = modes[data[0] % 3];
    uint8_t *bytes = malloc(size - 1 ? size - 1 : 1);
    memcpy(bytes, data + 1, size - 1);
    struct mmio_op op;
    if (mmio_decode(bytes, size - 1, mode, &op) == 0) {
        FUZZ_REQUIRE(op.len >= 1 && op.len <= 15 && op.len <= size - 1);
        FUZZ_REQUIRE(op.size == 1 || op.size == 2 || op.size == 4 || op.size == 8);
        FUZZ_REQUIRE(op.size != 8 || mode == 64);
        FUZZ_REQUIRE(op.reg < 16 && mmio_op_gpr(&op) < 16);
        FUZZ_REQUIRE(!op.high_byte || (op.reg >= 4 && op.reg <= 7 && op.size == 1));
        FUZZ_REQUIRE(!(op.has_imm && !op.write));
        const uint64_t old = 0x0123456789abcdefull;
        FUZZ_REQUIRE((mmio_store_value(&op, old) & ~mask(op.size)) == 0);
        if (!op.write) {
            unsigned width = op.zero_extend ? op.reg_size : op.size;
            uint64_t merged = mmio_load_merge(&op, old, ~0ull);
            if (op.high_byte)
                FUZZ_REQUIRE(merged == (old | 0xff00));
            else if (width < 4)
                FUZZ_REQUIRE((merged & ~mask(width)) == (old & ~mask(width)));
            else
                FUZZ_REQUIRE(merged == mask(op.size));
        }
    }
    free(bytes);
    return 0;
}

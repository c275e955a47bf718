/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest page-table walker (vmm/exit/gpt.c). The input gives the guest's
 * control registers, CPL, access and linear address, then its memory
 * (guest-physical 0 up). Table reads outside that memory fail, or, when the
 * first byte asks for it, wrap around it, so that deep walks are reachable
 * from small inputs. A translation must give an address below 2^52 (32
 * bits with paging off) and keep the linear address's page offset. Without
 * the wrap, the fetch walk (gpt_translate_fetched) reads only inside the
 * memory and keeps its contract: the full walk's gpa where that one
 * translates, none where it finds an entry not present or a table outside.
 * The fetch walk's memo (vmm/exit/gpt_memo.h) then answers a series of uses with
 * edits between them, taken from the input's memory read as a script: a
 * word put at an entry the memo remembers or anywhere, a bit flipped, the
 * other page, CR3 or LA57 changed. Every use must give the fetch walk's
 * answer on the memory as it is then.
 */
#include "tests/fuzz/fuzz.h"

#include "vmm/exit/gpt_memo.h"

#define HEADER 42 /* flags, cr0, cr3, cr4, efer (8 each, little-endian), cpl */

struct guest_ram {
    const uint8_t *bytes;
    size_t size;
    bool wrap;
};

static bool read_ram(uint64_t gpa, void *buf, size_t len, void *ctx)
{
    const struct guest_ram *r = ctx;
    FUZZ_REQUIRE(len == 4 || len == 8);
    if (r->wrap && r->size >= len) {
        gpa %= r->size - len + 1;
    } else if (gpa > r->size || len > r->size - gpa) {
        return false;
    }
    memcpy(buf, r->bytes + gpa, len);
    return true;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The k-th word of the script (wrapping around it); len >= 8. */
static uint64_t script_word(const uint8_t *script, size_t len, size_t k)
{
    return le64(script + (k * 8) % (len - 7));
}

static void check_memo(struct gpt_mode m, uint64_t linear, uint8_t *bytes, size_t size,
                       const uint8_t *script)
{
    if (size < 8)
        return;
    struct gpt_ram ram = {bytes, size};
    struct gpt_fetch_memo memo = {0};
    for (size_t step = 0; step < 32; step++) {
        uint64_t w = script_word(script, size, step);
        uint64_t la = (w & 4) ? linear ^ 0x1000 : linear;
        uint64_t want, got;
        bool found = gpt_translate_fetched(&m, la, &ram, &want);
        bool answered = (m.cr0 & GPT_CR0_PG) && gpt_memo_valid(&memo, &m, la);
        if (answered) {
            got = gpt_memo_gpa(&memo, la);
            FUZZ_REQUIRE(gpt_memo_host(&memo, la) == bytes + got && got < size);
        }
        FUZZ_REQUIRE((answered || gpt_memo_walk(&memo, &m, la, &ram, &got)) == found);
        FUZZ_REQUIRE(!found || got == want);
        uint64_t value = script_word(script, size, step + 1);
        size_t at = ((w >> 20) % (size - 7)) & ~(size_t)7;
        unsigned slot = (unsigned)(w >> 8 & 7) % GPT_FETCH_LEVELS;
        if ((w & 3) == 1 && memo.mode && memo.walk.entry_at[slot] != &memo.walk.entry[slot]) {
            at = (size_t)((const uint8_t *)memo.walk.entry_at[slot] - bytes);
            if (w & 0x10)
                value = le64(bytes + at) ^ (1ull << (w >> 12 & 63));
        }
        if (w & 3)
            memcpy(bytes + at, &value, 8);
        if ((w & 0xe0) == 0xe0)
            m.cr3 = value;
        if ((w & 0x700) == 0x700)
            m.cr4 ^= GPT_CR4_LA57;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER)
        return 0;
    struct gpt_mode m = {
        .cr0 = le64(data + 1),
        .cr3 = le64(data + 9),
        .cr4 = le64(data + 17),
        .efer = le64(data + 25),
        .cpl = data[33] & 3,
    };
    unsigned access = data[0] >> 1 & 3;
    uint64_t linear = le64(data + 34);
    struct fuzz_mem ram = fuzz_mem_new(0, data + HEADER, size - HEADER);
    struct guest_ram r = {ram.bytes, ram.size, data[0] & 1};
    uint64_t gpa;
    enum gpt_result res = gpt_translate(&m, linear, access, read_ram, &r, &gpa);
    FUZZ_REQUIRE(res >= GPT_BAD_TABLE && res <= GPT_OK);
    if (res == GPT_OK) {
        FUZZ_REQUIRE(gpa < 1ull << 52);
        FUZZ_REQUIRE((gpa & 0xfff) == (linear & 0xfff));
        if (!(m.cr0 & (1ull << 31)))
            FUZZ_REQUIRE(gpa == (linear & 0xffffffffu));
    }
    if (!r.wrap) {
        struct gpt_ram direct = {ram.bytes, ram.size};
        uint64_t fetched;
        bool found = gpt_translate_fetched(&m, linear, &direct, &fetched);
        if (res == GPT_OK)
            FUZZ_REQUIRE(found && fetched == gpa);
        if (res == GPT_NOT_PRESENT || res == GPT_BAD_TABLE)
            FUZZ_REQUIRE(!found);
        if (found)
            FUZZ_REQUIRE(fetched < 1ull << 52 && (fetched & 0xfff) == (linear & 0xfff));
        check_memo(m, linear, ram.bytes, ram.size, data + HEADER);
    }
    fuzz_mem_free(&ram);
    return 0;
}

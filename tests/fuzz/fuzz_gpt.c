/*
 * The guest page-table walker (vmm/gpt.c). The input gives the guest's
 * control registers, CPL, access and linear address, then its memory
 * (guest-physical 0 up). Table reads outside that memory fail, or, when the
 * first byte asks for it, wrap around it, so that deep walks are reachable
 * from small inputs. A translation must give an address below 2^52 (32
 * bits with paging off) and keep the linear address's page offset. Without
 * the wrap, the fetch walk (gpt_translate_fetched) reads only inside the
 * memory and keeps its contract: the full walk's gpa where that one
 * translates, none where it finds an entry not present or a table outside.
 */
#include "tests/fuzz/fuzz.h"

#include "vmm/gpt.h"

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
    }
    fuzz_mem_free(&ram);
    return 0;
}

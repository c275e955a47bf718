/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest image loader (vmm/load/loader.c): image_parse on the input as a
 * module, then, if it is accepted, image_load into guest memory of the
 * size the first byte picks and mbinfo_build after the image, as vm_create
 * does. Guest memory is an exactly sized heap block, so AddressSanitizer
 * sees any segment that escapes it; the accepted image must also keep the
 * loader's contract.
 */
#include "tests/fuzz/fuzz.h"

#include "vmm/load/loader.h"

#define PAGE 4096ull

static const uint64_t mem_sizes[] = {0x100000, 0x180000, 0x200000, 0x400000};
#define NSIZES (sizeof(mem_sizes) / sizeof(mem_sizes[0]))

static void check_image(const struct guest_image *img, size_t size, uint64_t mem)
{
    FUZZ_REQUIRE(img->nsegs <= IMAGE_MAX_SEGMENTS);
    bool entry_loaded = false;
    uint64_t end = 0;
    for (unsigned i = 0; i < img->nsegs; i++) {
        const struct image_segment *s = &img->segs[i];
        FUZZ_REQUIRE(s->file_size <= s->mem_size);
        FUZZ_REQUIRE(s->file_off <= size && s->file_size <= size - s->file_off);
        FUZZ_REQUIRE(s->gpa <= mem && s->mem_size <= mem - s->gpa);
        for (unsigned j = 0; j < i; j++) {
            const struct image_segment *t = &img->segs[j];
            FUZZ_REQUIRE(s->gpa + s->mem_size <= t->gpa || t->gpa + t->mem_size <= s->gpa ||
                         !s->mem_size || !t->mem_size);
        }
        entry_loaded |= img->entry >= s->gpa && img->entry < s->gpa + s->mem_size;
        if (s->gpa + s->mem_size > end)
            end = s->gpa + s->mem_size;
    }
    FUZZ_REQUIRE(entry_loaded);
    FUZZ_REQUIRE(img->end == end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *guest_mem[NSIZES];
    if (size < 1)
        return 0;
    unsigned pick = data[0] % NSIZES;
    uint64_t mem_size = mem_sizes[pick];
    data++;
    size--;
    uint8_t *image = malloc(size ? size : 1);
    memcpy(image, data, size);

    struct guest_image img;
    char err[256];
    if (image_parse(image, size, mem_size, &img, err, sizeof(err)) == 0) {
        check_image(&img, size, mem_size);
        if (!guest_mem[pick])
            guest_mem[pick] = malloc(mem_size);
        image_load(image, &img, guest_mem[pick]);
        uint64_t info = (img.end + PAGE - 1) & ~(PAGE - 1);
        /* The tail of the input doubles as the command line. */
        char cmdline[80];
        size_t n = size < sizeof(cmdline) - 1 ? size : sizeof(cmdline) - 1;
        memcpy(cmdline, data + size - n, n);
        cmdline[n] = '\0';
        if (info + PAGE <= mem_size) {
            size_t used = mbinfo_build(guest_mem[pick], mem_size, (uint32_t)info, PAGE, cmdline);
            /* A short command line always fits in a page of RAM. */
            FUZZ_REQUIRE(used > 0 && used <= PAGE && info + used <= mem_size);
        }
    } else {
        FUZZ_REQUIRE(err[0] && !strchr(err, '\n'));
    }
    free(image);
    return 0;
}

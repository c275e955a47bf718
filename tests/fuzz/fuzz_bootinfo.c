/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The multiboot information parsers (boot/mb.c). The input is physical
 * memory at INFO_BASE holding the information block; multiboot1 pointers
 * (command lines, modules, memory map) that land inside it are followed.
 * The first byte picks the protocol. On success the result must keep the
 * contract: strings terminated, counts in bounds, the info range inside.
 */
#include "tests/fuzz/fuzz.h"

#include "arch/x86/bootinfo.h"

#define INFO_BASE   0x10000ull
#define KERNEL_BASE 0x100000ull
#define KERNEL_END  0x180000ull

static void check_result(const struct boot_info *bi, uint64_t size)
{
    FUZZ_REQUIRE(bi->cmdline && bi->loader);
    FUZZ_REQUIRE(strlen(bi->cmdline) < BOOT_MAX_STRING && strlen(bi->loader) < BOOT_MAX_STRING);
    FUZZ_REQUIRE(bi->mmap_count >= 1 && bi->mmap_count <= BOOT_MAX_MMAP);
    FUZZ_REQUIRE(bi->mod_count <= BOOT_MAX_MODULES);
    for (unsigned i = 0; i < bi->mod_count; i++)
        FUZZ_REQUIRE(bi->mods[i].cmdline && strlen(bi->mods[i].cmdline) < BOOT_MAX_STRING);
    FUZZ_REQUIRE(bi->info_start >= INFO_BASE && bi->info_end <= INFO_BASE + size);
    FUZZ_REQUIRE(bi->info_start <= bi->info_end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int protocol = data[0] & 1 ? 2 : 1;
    struct fuzz_mem mem = fuzz_mem_new(INFO_BASE, data + 1, size - 1);
    static struct boot_info bi;
    char err[256];
    int rc = protocol == 2
                 ? mb2_parse(INFO_BASE, 1u << 20, fuzz_mem_map, &mem, &bi, err, sizeof(err))
                 : mb1_parse(INFO_BASE, fuzz_mem_map, &mem, &bi, err, sizeof(err));
    if (rc == 0) {
        check_result(&bi, mem.size);
        FUZZ_REQUIRE(bi.protocol == protocol);
        if (bootinfo_check(&bi, KERNEL_BASE, KERNEL_END, err, sizeof(err)) == 0) {
            for (unsigned i = 0; i < bi.mod_count; i++)
                FUZZ_REQUIRE(bi.mods[i].start < bi.mods[i].end);
        }
    } else {
        FUZZ_REQUIRE(rc == -1 && err[0] && memchr(err, '\0', sizeof(err)) && !strchr(err, '\n'));
    }
    fuzz_mem_free(&mem);
    return 0;
}

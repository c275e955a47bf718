/* SPDX-License-Identifier: GPL-2.0-only */
/* The Linux boot protocol: setup-header parsing and rejection, boot_params and e820. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "abi/virtio.h"
#include "lib/bytes.h"
#include "vmm/load/bzimage.h"

#define MIB        (1ull << 20)
#define IMAGE_SIZE 0x3000

static uint8_t image[IMAGE_SIZE];

/* A minimal protocol-2.15 header: 3 setup sectors, the kernel after them. */
static void make_image(void)
{
    memset(image, 0, sizeof(image));
    image[0x1f1] = 3;
    put_le16(image + 0x1fe, 0xaa55);
    image[0x200] = 0xeb;
    image[0x201] = 0x6a; /* header ends at 0x26c */
    memcpy(image + 0x202, "HdrS", 4);
    put_le16(image + 0x206, 0x020f);
    image[0x211] = 0x01;
    put_le32(image + 0x22c, 0x7fffffff);
    image[0x234] = 1;
    put_le32(image + 0x238, 2047);
    put_le64(image + 0x258, 0x1000000);
    put_le32(image + 0x260, 0x2000000);
    put_le32(image + 0x268, 0x1234); /* kernel_info_offset: the last header field */
}

static int parse(uint64_t mem, struct bzimage *k, char *err)
{
    return bzimage_parse(image, sizeof(image), mem, k, err, 200);
}

static void test_accepts_a_relocatable_modern_kernel(void **state)
{
    (void)state;
    make_image();
    struct bzimage k;
    char err[200] = "";
    assert_int_equal(parse(256 * MIB, &k, err), 0);
    assert_int_equal(k.version, 0x020f);
    assert_int_equal(k.kernel_off, 4 * 512);
    assert_int_equal(k.kernel_size, IMAGE_SIZE - 4 * 512);
    assert_int_equal(k.load_gpa, 0x1000000);
    assert_int_equal(k.end, 0x3000000);
    assert_int_equal(k.cmdline_max, 2047);
    assert_int_equal(k.hdr_end, 0x26c);
}

static void test_rejections_say_why(void **state)
{
    (void)state;
    struct bzimage k;
    char err[200];

    make_image();
    put_le16(image + 0x206, 0x020b);
    assert_int_equal(parse(256 * MIB, &k, err), -1);
    assert_string_equal(err, "Linux boot protocol 2.11 is older than 2.12 (no xloadflags)");

    make_image();
    image[0x234] = 0;
    assert_int_equal(parse(256 * MIB, &k, err), -1);
    assert_string_equal(err, "the Linux kernel is not relocatable");

    make_image();
    image[0x211] = 0;
    assert_int_equal(parse(256 * MIB, &k, err), -1);
    assert_string_equal(err, "not a bzImage (a zImage loads below 1 MiB)");

    make_image();
    assert_int_equal(parse(32 * MIB, &k, err), -1);
    assert_string_equal(err, "the kernel needs [0x1000000, 0x3000000): more than the VM's 32 MiB");

    make_image();
    image[0x1f1] = 40; /* setup longer than the file */
    assert_int_equal(parse(256 * MIB, &k, err), -1);
    assert_string_equal(err, "bzImage setup (40 sectors) leaves no kernel in 0x3000 bytes");

    make_image();
    memcpy(image + 0x202, "HdrX", 4);
    assert_false(bzimage_detect(image, sizeof(image)));
    assert_int_equal(parse(256 * MIB, &k, err), -1);
    assert_string_equal(err, "not a Linux bzImage (no setup header)");

    make_image();
    assert_int_equal(bzimage_parse(image, 0x240, 256 * MIB, &k, err, sizeof(err)), -1);
}

static void test_setup_sects_zero_means_four(void **state)
{
    (void)state;
    make_image();
    image[0x1f1] = 0;
    struct bzimage k;
    char err[200];
    assert_int_equal(parse(256 * MIB, &k, err), 0);
    assert_int_equal(k.kernel_off, 5 * 512);
}

static void test_initrd_goes_high_but_not_over_the_kernel(void **state)
{
    (void)state;
    make_image();
    struct bzimage k;
    char err[200];
    assert_int_equal(parse(256 * MIB, &k, err), 0);
    assert_int_equal(bzimage_initrd_gpa(&k, 256 * MIB, 0x1801), 256 * MIB - 0x2000);
    put_le32(image + 0x22c, 0x7ffffff); /* the kernel's own limit, below memory's end */
    assert_int_equal(parse(256 * MIB, &k, err), 0);
    assert_int_equal(bzimage_initrd_gpa(&k, 256 * MIB, 0x1000), 0x8000000 - 0x1000);
    assert_int_equal(bzimage_initrd_gpa(&k, 256 * MIB, 0x8000000 - 0x3000000 + 1), 0);
    assert_int_equal(bzimage_initrd_gpa(&k, 256 * MIB, 0x8000000 - 0x3000000), 0x3000000);
}

static void test_boot_params(void **state)
{
    (void)state;
    make_image();
    struct bzimage k;
    char err[200];
    assert_int_equal(parse(64 * MIB, &k, err), 0);
    struct e820_entry map[E820_MAX];
    unsigned n = e820_build(map, 64 * MIB);
    struct linux_boot b = {.cmdline_gpa = 0x20000,
                           .initrd_gpa = 0x3c00000,
                           .initrd_size = 0x12345,
                           .rsdp_gpa = 0xe0000,
                           .e820 = map,
                           .e820_count = n};
    static uint8_t bp[BOOT_PARAMS_SIZE];
    memset(bp, 0xcc, sizeof(bp));
    bzimage_boot_params(bp, image, &k, &b);
    assert_int_equal(get_le32(bp + 0x202), 0x53726448);
    assert_int_equal(get_le16(bp + 0x206), 0x020f);
    assert_int_equal(get_le32(bp + 0x268), 0x1234);
    assert_int_equal(bp[0x26c], 0); /* past the header: zero */
    assert_int_equal(bp[0x210], 0xff);
    assert_int_equal(get_le32(bp + 0x228), 0x20000);
    assert_int_equal(get_le32(bp + 0x218), 0x3c00000);
    assert_int_equal(get_le32(bp + 0x21c), 0x12345);
    assert_int_equal(get_le64(bp + 0x070), 0xe0000);
    assert_int_equal(bp[0x1e8], 3);
    assert_int_equal(get_le64(bp + 0x2d0), 0);
    assert_int_equal(get_le64(bp + 0x2d0 + 8), 0x9fc00);
    assert_int_equal(get_le32(bp + 0x2d0 + 16), E820_RAM);
    assert_int_equal(get_le64(bp + 0x2e4), 0x9fc00);
    assert_int_equal(get_le64(bp + 0x2e4 + 8), 0x100000 - 0x9fc00);
    assert_int_equal(get_le32(bp + 0x2e4 + 16), E820_RESERVED);
    assert_int_equal(get_le64(bp + 0x2f8), 0x100000);
    assert_int_equal(get_le64(bp + 0x2f8 + 8), 64 * MIB - 0x100000);
    assert_int_equal(get_le32(bp + 0x2f8 + 16), E820_RAM);
    assert_int_equal(bp[0x30c], 0);
}

static void test_e820_covers_memory_without_gaps(void **state)
{
    (void)state;
    struct e820_entry map[E820_MAX];
    unsigned n = e820_build(map, 256 * MIB);
    assert_int_equal(n, 3);
    uint64_t end = 0;
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(map[i].base, end);
        end += map[i].len;
    }
    assert_int_equal(end, 256 * MIB);
    /* The ACPI tables sit in the reserved hole, which the real-mode area stays below. */
    assert_true(E820_ACPI_BASE >= map[1].base);
    assert_true(E820_ACPI_BASE + E820_ACPI_SIZE <= map[1].base + map[1].len);
    assert_int_equal(e820_build(map, MIB), 2);
}

/*
 * The virtio window is in no e820 entry, even at the largest mem= a VM with
 * virtio devices may have: Linux's virtio_mmio maps it as a device from
 * _CRS, and a reserved entry would add nothing (above 1 MiB Linux does not
 * mark reserved ranges busy, so the driver could claim it either way).
 */
static void test_e820_leaves_the_virtio_window_out(void **state)
{
    (void)state;
    struct e820_entry map[E820_MAX];
    unsigned n = e820_build(map, VIRTIO_MMIO_BASE);
    uint64_t window_end = VIRTIO_MMIO_BASE + VIRTIO_SLOTS * VIRTIO_MMIO_SIZE;
    for (unsigned i = 0; i < n; i++)
        assert_true(map[i].base + map[i].len <= VIRTIO_MMIO_BASE || map[i].base >= window_end);
    assert_int_equal(map[n - 1].base + map[n - 1].len, VIRTIO_MMIO_BASE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts_a_relocatable_modern_kernel),
        cmocka_unit_test(test_rejections_say_why),
        cmocka_unit_test(test_setup_sects_zero_means_four),
        cmocka_unit_test(test_initrd_goes_high_but_not_over_the_kernel),
        cmocka_unit_test(test_boot_params),
        cmocka_unit_test(test_e820_covers_memory_without_gaps),
        cmocka_unit_test(test_e820_leaves_the_virtio_window_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A bystander for the isolation tests: fills its RAM with a pattern,
 * checksums it, waits MS milliseconds (argument, default 2000) halted on its
 * local APIC timer while other VMs try to escape theirs, and checksums it
 * again: @bench {"guest":"memsum","op":"checksum","before":X,"after":Y}.
 * Exits 0 if the two agree, 1 if not. The image's own data, BSS and stack
 * change as it runs and are left out; everything else in RAM is covered.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define MS_DEFAULT   2000u
#define MS_MAX       600000u
#define TICK_US      10000u
#define TIMER_VECTOR 0x41
#define MIB          0x100000u
#define MB_INFO_MEM  (1u << 0)

extern char __image_start[], __data_start[], __bss_end[];

static volatile uint32_t ticks;

__attribute__((interrupt)) static void timer_tick(struct interrupt_frame *f)
{
    (void)f;
    ticks++;
    lapic_eoi();
}

/* Address ranges: [0, image), [image, data) is its text, [page after BSS, end of RAM). */
struct range {
    uint32_t start, end;
};

static uint32_t fnv32(uint32_t h, uint32_t start, uint32_t end)
{
    __asm__("" : "+r"(start)); /* a range at 0 is not a null dereference */
    for (uint32_t a = start; a < end; a += 4)
        h = (h ^ *(volatile uint32_t *)a) * 16777619u;
    return h;
}

static uint32_t checksum(const struct range *r, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        h = fnv32(h, r[i].start, r[i].end);
    return h;
}

static void fill(uint32_t start, uint32_t end)
{
    __asm__("" : "+r"(start));
    for (uint32_t a = start; a < end; a += 4)
        *(volatile uint32_t *)a = a * 2654435761u ^ 0x6d656d73u;
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t ms = arg_uint(info, MS_DEFAULT, 1, MS_MAX);
    if (!info || !(info->flags & MB_INFO_MEM)) {
        printf("no memory size in the boot information\n");
        return 1;
    }
    uint32_t mem = MIB + info->mem_upper * 1024;
    uint32_t image_end = ((uint32_t)__bss_end + 0xfff) & ~0xfffu;
    const struct range covered[] = {
        {0, (uint32_t)__image_start},
        {(uint32_t)__image_start, (uint32_t)__data_start},
        {image_end, mem},
    };
    int n = sizeof(covered) / sizeof(covered[0]);
    /* The boot information (after the image) is overwritten: the arguments were read. */
    fill(covered[0].start, covered[0].end);
    fill(covered[2].start, covered[2].end);

    cpu_init();
    set_interrupt_handler(TIMER_VECTOR, timer_tick);
    lapic_enable();
    timing_init();
    uint32_t before = checksum(covered, n);
    printf("memsum: %u KiB covered, waiting %u ms\n",
           ((uint32_t)__data_start + mem - image_end) / 1024, ms);

    uint64_t end = rdtsc() + us_to_tsc((uint64_t)ms * 1000);
    uint32_t divider = 16;
    uint32_t count = (uint32_t)div64(div64((uint64_t)apic_timer_khz() * TICK_US, 1000), divider);
    lapic_timer_start(LAPIC_TIMER_PERIODIC, TIMER_VECTOR, count ? count : 1, divider);
    while (rdtsc() < end)
        wait_for_interrupt();
    lapic_timer_stop();

    uint32_t after = checksum(covered, n);
    printf("@bench {\"guest\":\"memsum\",\"op\":\"checksum\",\"before\":%u,\"after\":%u}\n", before,
           after);
    return before == after ? 0 : 1;
}

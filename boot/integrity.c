/* SPDX-License-Identifier: GPL-2.0-only */
#include "boot/integrity.h"

#include <stdint.h>

#include "drivers/console.h"
#include "lib/checksum.h"

/* The loader fills each section only up to its last byte: the page padding after it is undefined.
 */
extern char __kernel_start[], __text_loaded_end[], __text_end[], __rodata_loaded_end[];

static uint64_t text_at_boot, rodata_at_boot;

static uint64_t sum(const char *start, const char *end)
{
    return checksum_update(CHECKSUM_INIT, start, (size_t)(end - start));
}

void integrity_record(void)
{
    text_at_boot = sum(__kernel_start, __text_loaded_end);
    rodata_at_boot = sum(__text_end, __rodata_loaded_end);
}

bool integrity_report(void)
{
    uint64_t text = sum(__kernel_start, __text_loaded_end);
    uint64_t rodata = sum(__text_end, __rodata_loaded_end);
    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_bool(&j, "text_ok", text == text_at_boot);
    json_bool(&j, "rodata_ok", rodata == rodata_at_boot);
    json_u64(&j, "text_bytes", (uint64_t)(__text_loaded_end - __kernel_start));
    json_u64(&j, "rodata_bytes", (uint64_t)(__rodata_loaded_end - __text_end));
    json_hex(&j, "text_sum", text);
    json_hex(&j, "rodata_sum", rodata);
    console_event("integrity", &j);
    return text == text_at_boot && rodata == rodata_at_boot;
}

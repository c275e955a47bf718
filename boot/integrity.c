#include "boot/integrity.h"

#include <stdint.h>

#include "drivers/console.h"
#include "lib/checksum.h"

extern char __kernel_start[], __text_end[], __rodata_end[];

static uint64_t text_at_boot, rodata_at_boot;

static uint64_t sum(const char *start, const char *end)
{
    return checksum_update(CHECKSUM_INIT, start, (size_t)(end - start));
}

void integrity_record(void)
{
    text_at_boot = sum(__kernel_start, __text_end);
    rodata_at_boot = sum(__text_end, __rodata_end);
}

bool integrity_report(void)
{
    uint64_t text = sum(__kernel_start, __text_end);
    uint64_t rodata = sum(__text_end, __rodata_end);
    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_bool(&j, "text_ok", text == text_at_boot);
    json_bool(&j, "rodata_ok", rodata == rodata_at_boot);
    json_u64(&j, "text_bytes", (uint64_t)(__text_end - __kernel_start));
    json_u64(&j, "rodata_bytes", (uint64_t)(__rodata_end - __text_end));
    json_hex(&j, "text_sum", text);
    json_hex(&j, "rodata_sum", rodata);
    console_event("integrity", &j);
    return text == text_at_boot && rodata == rodata_at_boot;
}

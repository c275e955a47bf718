/* SPDX-License-Identifier: GPL-2.0-only */
#include "drivers/power.h"

#include "arch/x86/cpu.h"
#include "drivers/console.h"

#define QEMU_DEBUG_EXIT_PORT 0xf4
#define BOCHS_SHUTDOWN_PORT  0x8900
#define ACPI_SLP_EN          (1u << 13)

static struct {
    int valid;
    uint16_t pm1a, pm1b, typa, typb;
} s5;

void power_set_acpi(const struct acpi_info *acpi)
{
    if (!acpi->s5_valid)
        return;
    s5.valid = 1;
    s5.pm1a = acpi->pm1a_cnt_port;
    s5.pm1b = acpi->pm1b_cnt_port;
    s5.typa = acpi->slp_typa;
    s5.typb = acpi->slp_typb;
}

void system_poweroff(int status)
{
    irq_disable();
    outl(QEMU_DEBUG_EXIT_PORT, (uint32_t)status);
    for (const char *s = "Shutdown"; *s; s++)
        outb(BOCHS_SHUTDOWN_PORT, (uint8_t)*s);
    if (s5.valid) {
        outw(s5.pm1a, (uint16_t)((s5.typa << 10) | ACPI_SLP_EN));
        if (s5.pm1b)
            outw(s5.pm1b, (uint16_t)((s5.typb << 10) | ACPI_SLP_EN));
    }
    cpu_halt_forever();
}

void system_shutdown(int status)
{
    char buf[64];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_i64(&j, "status", status);
    console_sync();
    console_event("shutdown", &j);
    system_poweroff(status);
}

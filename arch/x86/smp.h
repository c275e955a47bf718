/* Bringing the application processors online. */
#ifndef POLLUX_ARCH_X86_SMP_H
#define POLLUX_ARCH_X86_SMP_H

#include "boot/bootinfo.h"
#include "arch/x86/percpu.h"
#include "drivers/acpi.h"

/*
 * Start every enabled CPU the MADT lists (up to maxcpus in all) with
 * INIT-SIPI-SIPI, one at a time. The trampoline page is a usable page below
 * 1 MiB that holds no module and no boot information. A CPU that does not
 * come online is reported with @warning and left out. Returns the number of
 * CPUs online.
 */
unsigned smp_boot(const struct acpi_info *acpi, const struct boot_info *bi, unsigned maxcpus);

/* Where each AP lands once in long mode; never returns. */
void ap_main(struct percpu *p);

#endif

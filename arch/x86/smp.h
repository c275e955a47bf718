/* SPDX-License-Identifier: GPL-2.0-only */
/* Bringing the application processors online. */
#ifndef POLLUX_ARCH_X86_SMP_H
#define POLLUX_ARCH_X86_SMP_H

#include "arch/x86/bootinfo.h"
#include "arch/x86/percpu.h"
#include "drivers/acpi.h"

/*
 * What an AP does once its CPU is set up (its local APIC, FPU and
 * virtualization backend): init, then it counts as online, then run, which
 * never returns. Given by kernel_main, which wires the floors above together.
 */
struct smp_work {
    void (*init)(bool guests); /* guests: the backend is on (virt_cpu_enable) */
    void (*run)(void);
};

/*
 * Start every enabled CPU the MADT lists (up to maxcpus in all) with
 * INIT-SIPI-SIPI, one at a time. The trampoline page is a usable page below
 * 1 MiB that holds no module and no boot information. A CPU that does not
 * come online is reported with @warning and left out. Returns the number of
 * CPUs online.
 */
unsigned smp_boot(const struct acpi_info *acpi, const struct boot_info *bi, unsigned maxcpus,
                  const struct smp_work *work);

/* Where each AP lands once in long mode; never returns. */
void ap_main(struct percpu *p);

#endif

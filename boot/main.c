/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The boot CPU's path from the loader to a running system: console, boot
 * information, memory, CPU tables, ACPI, timers, virtualization detection,
 * the other CPUs, then the work.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/features.h"
#include "arch/x86/fpu.h"
#include "arch/x86/l0_steal.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mm.h"
#include "arch/x86/panic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/trap.h"
#include "arch/x86/tsc.h"
#include "arch/x86/virt.h"
#include "arch/x86/bootinfo.h"
#include "backend/backend.h"
#include "boot/integrity.h"
#include "stats/report.h"
#include "vmm/console/console_keys.h"
#include "boot/options.h"
#include "drivers/acpi.h"
#include "drivers/console.h"
#include "drivers/pic.h"
#include "drivers/power.h"
#include "lib/string.h"
#include "sched/sched.h"
#include "sched/watchdog.h"
#include "vmm/vcpu/hlt_intercept.h"
#include "vmm/vcpu/pause.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/vmm.h"

#define MB2_INFO_MAX (1u << 20)

extern char __kernel_start[], __kernel_end[], boot_stack[];

/* Called from boot/entry.S. */
void kernel_main(uint32_t magic, uint32_t info);

static struct boot_info boot_info;
static struct acpi_info acpi;
static struct tsc_calibration tsc_cal;
static unsigned failures; /* anything that must make the final status non-zero */

static __attribute__((noreturn)) void boot_error(const char *what)
{
    kprintf("pollux: cannot boot: %s\n", what);
    system_shutdown(SHUTDOWN_BOOT_ERROR);
}

static void parse_boot_info(uint32_t magic, uint32_t info)
{
    char err[192];
    int rc;
    if (magic == MB2_BOOT_MAGIC)
        rc = mb2_parse(info, MB2_INFO_MAX, phys_map, 0, &boot_info, err, sizeof(err));
    else if (magic == MB1_BOOT_MAGIC)
        rc = mb1_parse(info, phys_map, 0, &boot_info, err, sizeof(err));
    else
        boot_error("not started by a multiboot loader (bad magic in EAX)");
    if (rc == 0)
        rc = bootinfo_check(&boot_info, (uint64_t)__kernel_start, (uint64_t)__kernel_end, err,
                            sizeof(err));
    if (rc)
        boot_error(err);
    /* Multiboot1 loaders put the kernel's own path first; drop it. */
    if (boot_info.protocol == 1) {
        const char *s = boot_info.cmdline;
        const char *word = s;
        while (*s && *s != ' ' && *s != '=')
            s++;
        if (*s != '=' && s != word) {
            while (*s == ' ')
                s++;
            boot_info.cmdline = s;
        }
    }
}

static volatile unsigned timer_fired;

static void timer_selftest_irq(struct trap_frame *f)
{
    (void)f;
    timer_fired++;
    lapic_eoi();
}

/* One-shot timer round trip: proves the interrupt path and the calibration. */
static void lapic_timer_selftest(void)
{
    const uint64_t us = 1000;
    irq_register(VECTOR_TIMER, timer_selftest_irq);
    uint64_t start = rdtsc();
    lapic_timer_oneshot((uint32_t)(lapic_timer_khz * us / 1000));
    while (!timer_fired && rdtsc() - start < 100 * us * tsc_khz / 1000)
        cpu_idle_wait();
    irq_disable();
    uint64_t elapsed_us = (rdtsc() - start) * 1000 / tsc_khz;
    if (!timer_fired)
        panic("local APIC timer: no interrupt within %lu us", 100 * us);
    kprintf("pollux: local APIC timer %lu kHz, one-shot %lu us fired after %lu us\n",
            lapic_timer_khz, us, elapsed_us);
}

static void report_boot(void)
{
    char buf[1024];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_u64(&j, "cpus", cpu_count);
    json_str(&j, "virt", virt_backend_name(virt_features.backend));
    if (virt_features.backend == VIRT_NONE)
        json_str(&j, "virt_reason", virt_features.reason);
    struct cpu_raw raw;
    features_read(&raw);
    json_str(&j, "vendor", raw.vendor);
    json_str(&j, "l0", l0_name(virt_features.l0));
    if (virt_features.l0 != L0_NONE) {
        char sig[13];
        for (unsigned i = 0; i < sizeof(sig); i++)
            sig[i] = raw.hv_signature[i] >= 0x20 && raw.hv_signature[i] < 0x7f ? raw.hv_signature[i]
                     : raw.hv_signature[i]                                     ? '?'
                                                                               : 0;
        json_str(&j, "l0_signature", sig);
        json_bool(&j, "l0_steal_time", virt_features.l0_steal_time);
    }
    json_u64(&j, "tsc_khz", tsc_cal.tsc_khz);
    json_u64(&j, "tsc_measured_khz", tsc_cal.measured_khz);
    json_str(&j, "tsc_source", tsc_cal.cpuid.accepted ? tsc_cal.cpuid.leaf : "pit");
    json_u64(&j, "lapic_timer_khz", tsc_cal.lapic_khz);
    json_str(&j, "lapic_mode", lapic_x2apic() ? "x2apic" : "xapic");
    json_u64(&j, "mem_free_mb", host_pmm.nfree * PAGE_SIZE >> 20);
    json_u64(&j, "modules", boot_info.mod_count);
    json_u64(&j, "protocol", (uint64_t)boot_info.protocol);
    json_str(&j, "spin_detector", spin_detector_name(pause_detector()));
    json_bool(&j, "pause_backstop", pause_backstop());
    json_str(&j, "hlt_intercept", hlt_intercept_name(hlt_intercept_mode()));
    if (virt_features.virq) {
        json_str(&j, "virq", virt_features.virq);
        json_bool(&j, "virq_at_entry", virt_features.virq_at_entry);
    }
    json_object(&j, "features");
    json_bool(&j, "x2apic", virt_features.x2apic);
    json_bool(&j, "tsc_deadline", virt_features.tsc_deadline);
    if (raw.ext1_ecx & (1u << 2)) {
        json_bool(&j, "npt", virt_features.npt);
        json_bool(&j, "nrips", virt_features.nrips);
        json_bool(&j, "pause_filter", virt_features.pause_filter);
        json_bool(&j, "pause_filter_thresh", virt_features.pause_filter_thresh);
        json_bool(&j, "pause_filter_by_l0", virt_features.pause_filter_by_l0);
        json_bool(&j, "idle_hlt", virt_features.idle_hlt);
        json_bool(&j, "vgif", virt_features.vgif);
        json_bool(&j, "vmcb_clean", virt_features.vmcb_clean);
        json_bool(&j, "flush_by_asid", virt_features.flush_by_asid);
        json_bool(&j, "decode_assists", virt_features.decode_assists);
        json_u64(&j, "asids", virt_features.svm_asids);
        json_bool(&j, "guest_rdtscp", virt_features.guest_rdtscp);
        json_bool(&j, "guest_invpcid", virt_features.guest_invpcid);
        json_bool(&j, "guest_xsaves", virt_features.guest_xsaves);
    } else if (raw.leaf1_ecx & (1u << 5)) {
        json_bool(&j, "ept", virt_features.ept);
        json_bool(&j, "vpid", virt_features.vpid);
        json_bool(&j, "unrestricted_guest", virt_features.unrestricted_guest);
        json_bool(&j, "ple", virt_features.ple);
        json_bool(&j, "preemption_timer", virt_features.preemption_timer);
        json_u64(&j, "preemption_timer_shift", virt_features.preemption_timer_shift);
        json_bool(&j, "ept_2m", virt_features.ept_2m);
        json_bool(&j, "ept_1g", virt_features.ept_1g);
        json_bool(&j, "ept_ad", virt_features.ept_ad);
        json_bool(&j, "true_controls", virt_features.true_controls);
        json_bool(&j, "guest_rdtscp", virt_features.guest_rdtscp);
        json_bool(&j, "guest_invpcid", virt_features.guest_invpcid);
        json_bool(&j, "guest_xsaves", virt_features.guest_xsaves);
    }
    json_close(&j);
    console_event("boot", &j);
}

/*
 * fault_test=5 and 6: every call takes half a KiB more stack, until the
 * stack's guard page stops it (the depth limit is never reached; it only
 * keeps the recursion from being provably infinite to the compiler).
 */
static __attribute__((noipa)) uint64_t recurse_without_bound(uint64_t depth)
{
    volatile uint8_t frame[512];
    frame[0] = (uint8_t)depth;
    if (depth == UINT64_MAX)
        return 0;
    return recurse_without_bound(depth + 1) + frame[0];
}

static void recurse_in_nmi(struct trap_frame *f)
{
    (void)f;
    recurse_without_bound(0);
}

static void fault_test(uint64_t kind)
{
    kprintf("pollux: fault_test=%lu: faulting on purpose\n", kind);
    switch (kind) {
    case 1:
        *(volatile uint8_t *)&kernel_main = 0xcc; /* text is read-only (W^X) */
        break;
    case 2:
        __asm__ volatile("ud2");
        break;
    case 3:
        panic("fault_test=3 requested a software panic");
    case 4:
        /* The watchdog must catch it; this CPU runs its scheduler loop until it does. */
        if (cpu_count < 2) {
            kprintf("pollux: fault_test=4 needs a second CPU\n");
            return;
        }
        watchdog_test_lockup(cpu_count - 1);
        sched_run(0);
        break;
    case 5:
        recurse_without_bound(0);
        break;
    case 6:
        /* The NMI runs on its IST stack: the overflow must stop at that stack's guard. */
        irq_register(2, recurse_in_nmi);
        lapic_send_nmi(this_cpu()->apic_id);
        for (;;)
            cpu_relax();
    }
}

static void ap_run(void)
{
    sched_run(0);
}

/* Each AP's part above the host machine: its run queue, then the scheduler loop. */
static const struct smp_work ap_work = {.init = sched_cpu_init, .run = ap_run};

void kernel_main(uint32_t magic, uint32_t info)
{
    integrity_record();
    console_init();
    kprintf("\npollux: hypervisor starting\n");
    parse_boot_info(magic, info);
    kprintf("pollux: multiboot%d from '%s', command line '%s', %u module%s\n", boot_info.protocol,
            boot_info.loader, boot_info.cmdline, boot_info.mod_count,
            boot_info.mod_count == 1 ? "" : "s");
    if (options_init(boot_info.cmdline))
        failures++;

    mm_init(&boot_info);
    /* The BIOS-area scan reads page 0, which the final page tables leave unmapped. */
    uint64_t rsdp = boot_info.rsdp ? boot_info.rsdp : acpi_scan_rsdp(phys_map, 0);
    mm_init_paging(&boot_info);

    idt_init();
    pic_disable();
    const char *why;
    struct percpu *bsp = percpu_create(0, 0, boot_stack, &why);
    if (!bsp)
        panic("the boot CPU: %s", why);
    cpus[0] = bsp;
    cpu_count = 1;
    percpu_install(bsp);

    lapic_init();
    bsp->apic_id = lapic_id();
    bsp->online = true;

    char err[192];
    if (!rsdp || acpi_init(rsdp, phys_map, 0, &acpi, err, sizeof(err))) {
        kprintf("pollux: no usable ACPI tables (%s): running on the boot CPU only\n",
                rsdp ? err : "no RSDP");
        acpi.cpu_count = 0;
    }
    power_set_acpi(&acpi);

    tsc_calibrate(&tsc_cal);
    if (tsc_cal.cpuid.leaf[0])
        kprintf("pollux: TSC %lu kHz (PIT %lu kHz, CPUID %s %lu kHz: %s)\n", tsc_cal.tsc_khz,
                tsc_cal.measured_khz, tsc_cal.cpuid.leaf, tsc_cal.cpuid.khz,
                tsc_cal.cpuid.accepted ? "agrees within 1%, in use" : "disagrees, not used");
    else
        kprintf("pollux: TSC %lu kHz (PIT %lu kHz; CPUID gives no TSC frequency)\n",
                tsc_cal.tsc_khz, tsc_cal.measured_khz);
    lapic_timer_selftest();

    struct cpu_raw raw;
    struct virt_features features;
    features_read(&raw);
    features_decode(&raw, &features);
    virt_select(&features, backend_ops(features.backend));
    l0_steal_enable();
    kprintf("pollux: %s, virtualization backend: %s%s%s\n", raw.vendor,
            virt_backend_name(virt_features.backend),
            virt_features.backend == VIRT_NONE ? " - " : "", virt_features.reason);
    if (features.l0 == L0_KVM)
        kprintf("pollux: L0 is KVM (CPUID 0x%x): nested %s; steal time %s\n", raw.hv_base,
                features.backend == VIRT_VMX   ? "VMX gives no PAUSE-loop exiting and an emulated "
                                                 "preemption timer; every vCPU switch flushes"
                : features.backend == VIRT_SVM ? "SVM's pause filter count and threshold are L0's; "
                                                 "every vCPU switch flushes"
                                               : "virtualization is not offered",
                features.l0_steal_time ? "offered" : "not offered");
    else if (features.l0 != L0_NONE)
        kprintf("pollux: L0 is a hypervisor: %s\n", l0_name(features.l0));

    fpu_cpu_init();
    sched_cpu_init(virt_cpu_enable());
    vcpu_sched_register();
    pause_setup();
    hlt_intercept_setup();
    smp_boot(&acpi, &boot_info, (unsigned)hv_options.maxcpus, &ap_work);
    report_boot();
    watchdog_set_dump(vmm_dump);
    watchdog_start();

    if (hv_options.fault_test)
        fault_test(hv_options.fault_test);

    if (boot_info.mod_count == 0)
        kprintf("pollux: no guest modules given, nothing to run\n");
    failures += vmm_start(&boot_info);
    sched_stats_start(vmm_all_stopped);
    console_keys_start();
    sched_run(vmm_all_stopped);
    stats_report_shutdown();
    if (!vmm_all_succeeded())
        failures++;
    if (!integrity_report())
        failures++;
    system_shutdown(failures ? SHUTDOWN_FAILED : SHUTDOWN_OK);
}

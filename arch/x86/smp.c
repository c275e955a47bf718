/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/smp.h"

#include "arch/x86/cpu.h"
#include "arch/x86/fpu.h"
#include "arch/x86/l0_steal.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mm.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "arch/x86/trampoline.h"
#include "arch/x86/virt.h"
#include "drivers/console.h"
#include "lib/string.h"

#define TRAMPOLINE_LOW    0x1000ull
#define TRAMPOLINE_HIGH   0x9f000ull /* below the usual EBDA */
#define INIT_DELAY_US     10000
#define SIPI_DELAY_US     200
#define AP_ONLINE_WAIT_US 1000000

extern char early_pml4[];
extern uint32_t boot_efer_nxe;

static bool overlaps(uint64_t a, uint64_t a_end, uint64_t b, uint64_t b_end)
{
    return a < b_end && b < a_end;
}

/* Usable RAM per the memory map, and claimed by no other entry. */
static bool page_is_ram(const struct boot_info *bi, uint64_t pg)
{
    bool usable = false;
    for (unsigned i = 0; i < bi->mmap_count; i++) {
        const struct mem_range *r = &bi->mmap[i];
        if (r->type == MEM_USABLE && r->base <= pg && r->base + r->len >= pg + PAGE_SIZE)
            usable = true;
        else if (r->type != MEM_USABLE && overlaps(pg, pg + PAGE_SIZE, r->base, r->base + r->len))
            return false;
    }
    return usable;
}

static uint64_t find_trampoline_page(const struct boot_info *bi)
{
    for (uint64_t pg = TRAMPOLINE_LOW; pg < TRAMPOLINE_HIGH; pg += PAGE_SIZE) {
        uint64_t end = pg + PAGE_SIZE;
        bool taken = !page_is_ram(bi, pg) || overlaps(pg, end, bi->info_start, bi->info_end);
        for (unsigned i = 0; i < bi->mod_count; i++)
            taken |= overlaps(pg, end, bi->mods[i].start, bi->mods[i].end);
        if (!taken)
            return pg;
    }
    return 0;
}

/* Set before the first AP starts, read only after. */
static const struct smp_work *ap_work;

void ap_main(struct percpu *p)
{
    write_cr3(kernel_cr3);
    percpu_install(p);
    l0_steal_enable();
    lapic_init();
    fpu_cpu_init();
    ap_work->init(virt_cpu_enable());
    __atomic_store_n(&p->online, true, __ATOMIC_RELEASE);
    ap_work->run();
    cpu_halt_forever();
}

static void ap_trampoline_entry(void *arg)
{
    ap_main(arg);
}

static void warn_offline(uint32_t apic_id, const char *why)
{
    char buf[160];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "kind", "cpu_offline");
    json_u64(&j, "apic_id", apic_id);
    json_str(&j, "reason", why);
    console_event("warning", &j);
    kprintf("cpu with APIC ID %u left offline: %s\n", apic_id, why);
}

/* The MADT lists CPUs past MAX_CPUS (those from index next on): they stay offline. */
static void report_beyond(const struct acpi_info *acpi, unsigned next)
{
    uint32_t self = lapic_id();
    unsigned left = acpi->cpus_beyond;
    for (; next < acpi->cpu_count; next++)
        left += acpi->cpus[next].apic_id != self;
    if (!left)
        return;
    char buf[160];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "kind", "cpus_beyond_max");
    json_u64(&j, "listed", acpi->cpu_count + acpi->cpus_beyond);
    json_u64(&j, "online", cpu_count);
    json_u64(&j, "max_cpus", MAX_CPUS);
    console_event("warning", &j);
    kprintf("pollux: the MADT lists %u CPUs, more than MAX_CPUS (%u): running on the first %u\n",
            acpi->cpu_count + acpi->cpus_beyond, MAX_CPUS, cpu_count);
}

static bool start_ap(struct percpu *p, uint64_t page)
{
    struct trampoline_params *params =
        (void *)(page + (uint64_t)(trampoline_params - trampoline_start));
    params->cr3 = (uint64_t)early_pml4;
    params->efer = EFER_LME | boot_efer_nxe;
    params->stack = p->stack_top;
    params->entry = (uint64_t)ap_trampoline_entry;
    params->arg = (uint64_t)p;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);

    lapic_send_init(p->apic_id);
    tsc_delay_us(INIT_DELAY_US);
    for (int sipi = 0; sipi < 2; sipi++) {
        lapic_send_sipi(p->apic_id, (uint8_t)(page >> 12));
        tsc_delay_us(SIPI_DELAY_US);
        if (__atomic_load_n(&p->online, __ATOMIC_ACQUIRE))
            return true;
    }
    uint64_t waited = 0;
    while (!__atomic_load_n(&p->online, __ATOMIC_ACQUIRE) && waited < AP_ONLINE_WAIT_US) {
        tsc_delay_us(100);
        waited += 100;
    }
    return p->online;
}

unsigned smp_boot(const struct acpi_info *acpi, const struct boot_info *bi, unsigned maxcpus,
                  const struct smp_work *work)
{
    ap_work = work;
    uint32_t self = lapic_id();
    uint64_t page = find_trampoline_page(bi);
    if (!page) {
        warn_offline(0xffffffffu, "no free page below 1 MiB for the AP trampoline");
        return cpu_count;
    }
    memcpy((void *)page, trampoline_start, (size_t)(trampoline_end - trampoline_start));
    unsigned i;
    for (i = 0; i < acpi->cpu_count; i++) {
        uint32_t id = acpi->cpus[i].apic_id;
        if (id == self)
            continue;
        if (cpu_count >= maxcpus || cpu_count >= MAX_CPUS)
            break;
        /* An xAPIC ICR names 8-bit destinations, and 0xff is the broadcast. */
        if (id >= 0xff && !lapic_x2apic()) {
            warn_offline(id, "APIC ID above 254 needs x2APIC, which this CPU does not offer");
            continue;
        }
        const char *why;
        struct percpu *p = percpu_create(cpu_count, id, NULL, &why);
        if (!p) {
            warn_offline(id, why);
            break;
        }
        cpus[cpu_count] = p;
        if (!start_ap(p, page)) {
            /* The CPU may still wake up later; keep it parked on its stack. */
            cpus[cpu_count] = NULL;
            warn_offline(id, "no response to INIT-SIPI-SIPI");
            continue;
        }
        cpu_count++;
    }
    if (cpu_count >= MAX_CPUS)
        report_beyond(acpi, i);
    return cpu_count;
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vmm.h"

#include "arch/x86/cpu.h"
#include "arch/x86/mm.h"
#include "arch/x86/pagetable.h"
#include "arch/x86/percpu.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/string.h"
#include "sched/sched.h"
#include "sched/stagger.h"
#include "stats/report.h"
#include "sched/watchdog.h"
#include "vmm/exit/cpu_model.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/trace_marker.h"
#include "vmm/exit/exits.h"
#include "vmm/load/bzimage.h"
#include "vmm/load/linux_loader.h"
#include "vmm/load/loader.h"
#include "vmm/vcpu/pause.h"
#include "vmm/console/console_keys.h"
#include "vmm/console/profile.h"
#include "vmm/console/trace.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/vcpu/vcpu_stats.h"
#include "vmm/dev/vm_devices.h"
#include "vmm/dev/virtio/blk.h"
#include "vmm/dev/virtio/net_vm.h"
#include "vmm/dev/virtio/virtio_vm.h"

#define MBINFO_MAX 4096 /* multiboot info + memory map + command line */

static unsigned vms_alive;
static unsigned vms_failed;
static uint64_t vms_stopped;
/*
 * By module index, for vmm_dump and vmm_for_each_vm. vms_lock keeps a VM
 * from being freed while vmm_for_each_vm looks at it.
 */
static struct vm *vms_running[BOOT_MAX_MODULES];
static struct spinlock vms_lock = SPINLOCK_INIT;

bool vmm_all_stopped(void)
{
    return __atomic_load_n(&vms_alive, __ATOMIC_ACQUIRE) == 0;
}

bool vmm_all_succeeded(void)
{
    return __atomic_load_n(&vms_failed, __ATOMIC_ACQUIRE) == 0;
}

static void reject(const char *module, const char *reason)
{
    char buf[512];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "module", module);
    json_str(&j, "reason", reason);
    console_event("vm_reject", &j);
    kprintf("pollux: module %s rejected: %s\n", module, reason);
}

static uint64_t trace_ring_pages(uint64_t records)
{
    return (trace_ring_bytes(records) + PAGE_SIZE - 1) / PAGE_SIZE;
}

static uint64_t disk_pages(uint64_t sectors)
{
    return (sectors * VIRTIO_BLK_SECTOR + PAGE_SIZE - 1) / PAGE_SIZE;
}

static uint64_t blk_pages(void)
{
    return (sizeof(struct virtio_blk) + PAGE_SIZE - 1) / PAGE_SIZE;
}

/* The VM's virtio-blk and its disk (vm_attach_disk), if it has them. */
static void disk_free(struct vm *vm)
{
    struct virtio_blk *b = vm->blk;
    if (!b)
        return;
    if (b->data)
        pmm_free(&host_pmm, (uint64_t)b->data, disk_pages(b->sectors));
    pmm_free(&host_pmm, (uint64_t)b, blk_pages());
    vm->blk = NULL;
}

static void vm_free(struct vm *vm)
{
    virtio_vm_cancel(vm); /* first: a device's deferred work reads its state and the VM's RAM */
    virtio_net_free(vm);  /* then: until its port leaves, other VMs may write into its RAM */
    for (unsigned i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (!v)
            continue;
        sched_unplace(&v->se);
        if (virt)
            virt->vcpu_destroy(&v->hw);
        fpu_state_free(&v->fpu);
        pmm_free(&host_pmm, (uint64_t)v, (sizeof(*v) + PAGE_SIZE - 1) / PAGE_SIZE);
    }
    if (virt)
        virt->vm_destroy(&vm->hw);
    if (vm->hw.mem)
        pmm_free(&host_pmm, vm->mem_hpa, vm->cfg.mem / PAGE_SIZE);
    if (vm->trace)
        pmm_free(&host_pmm, (uint64_t)vm->trace, trace_ring_pages(vm->trace->size));
    if (vm->profile)
        pmm_free(&host_pmm, (uint64_t)vm->profile, PROFILE_PAGES);
    trace_marks_free(vm);
    disk_free(vm);
    pmm_free(&host_pmm, (uint64_t)vm, (sizeof(*vm) + PAGE_SIZE - 1) / PAGE_SIZE);
}

/* The VMs created before the one being created now. */
struct earlier_vms {
    struct vm **vms;
    unsigned count;
};

static bool name_taken(const char *name, void *ctx)
{
    const struct earlier_vms *earlier = ctx;
    for (unsigned i = 0; i < earlier->count; i++)
        if (earlier->vms[i] && !strcmp(earlier->vms[i]->cfg.name, name))
            return true;
    return false;
}

/*
 * Zeroing a Linux guest's hundreds of MiB takes seconds under emulation, with
 * interrupts off: beat the watchdog between pieces so it is not a lockup.
 */
static void zero_guest_memory(struct vm *vm)
{
    for (uint64_t off = 0; off < vm->cfg.mem; off += TWO_MIB) {
        uint64_t len = vm->cfg.mem - off < TWO_MIB ? vm->cfg.mem - off : TWO_MIB;
        memset(vm->hw.mem + off, 0, len);
        watchdog_beat();
    }
}

/* A module whose command line is the word "initrd" belongs to the VM before it. */
static bool is_initrd_module(const struct boot_module *mod)
{
    return !strcmp(mod->cmdline, LINUX_INITRD_MODULE);
}

/* So does one whose command line is the word "disk", after the initramfs if there is one. */
static bool is_disk_module(const struct boot_module *mod)
{
    return !strcmp(mod->cmdline, VIRTIO_BLK_MODULE);
}

/*
 * Load a Linux kernel (and the initramfs in the module after it) into the
 * VM's memory; 0 and the entry point, or -1 after @vm_reject.
 */
static int load_linux(struct vm *vm, const struct boot_info *bi, unsigned index, uint32_t *entry)
{
    const struct boot_module *mod = &bi->mods[index];
    struct linux_image img = {(const uint8_t *)mod->start, 0, mod->end - mod->start, 0};
    char err[256];
    if (!vm->cfg.ioapic) {
        /* Its MADT lists the I/O APIC, and its devices' interrupts come only through it. */
        reject(vm->cfg.name, "ioapic=off: a Linux VM's interrupts come through its I/O APIC");
        return -1;
    }
    if (vm->cfg.initrd[0]) {
        if (index + 1 >= bi->mod_count || !is_initrd_module(&bi->mods[index + 1])) {
            snprintf(err, sizeof(err), "initrd=%s: the next module is not an initramfs ('%s')",
                     vm->cfg.initrd, LINUX_INITRD_MODULE);
            reject(vm->cfg.name, err);
            return -1;
        }
        const struct boot_module *rd = &bi->mods[index + 1];
        img.initrd = (const uint8_t *)rd->start;
        img.initrd_size = rd->end - rd->start;
    }
    if (linux_load(vm->hw.mem, vm->cfg.mem, vm->cfg.vcpus, vmconfig_virtio_slots(&vm->cfg), &img,
                   vm->cfg.args, entry, err, sizeof(err))) {
        reject(vm->cfg.name, err);
        return -1;
    }
    /* A PC answers what nothing backs; Linux probes such addresses. */
    if (!vm->cfg.unbacked_given)
        vm->cfg.unbacked = UNBACKED_IGNORE;
    /* Its ACPI tables say hardware-reduced: no 8259, no 8254 (docs/linux.md). */
    if (!vm->cfg.legacy_pic_given)
        vm->cfg.legacy_pic = false;
    vm->pc_platform = true;
    return 0;
}

/* Where vCPU 0 starts: the image's entry and, for a multiboot guest, its boot information. */
struct vm_entry {
    uint32_t entry; /* guest-physical, entered in 32-bit protected mode */
    uint64_t info_gpa;
    bool linux;
};

/* The VM's configuration from its module's words, under a name no earlier VM has. */
static bool vm_configure(struct vm *vm, const struct boot_module *mod, unsigned index,
                         struct vm **vms)
{
    char err[256];
    if (vmconfig_parse(mod->cmdline, index, VM_MAX_VCPUS, &vm->cfg, err, sizeof(err))) {
        /* Named as it asked (tools/run.py puts name= first), else as it would be: vm<index>. */
        reject(vm->cfg.name, err);
        return false;
    }
    struct earlier_vms earlier = {vms, index};
    if (vmconfig_unique_name(vm->cfg.name, index, name_taken, &earlier, err, sizeof(err))) {
        reject(vm->cfg.name, err);
        return false;
    }
    if (!virt) {
        reject(vm->cfg.name, "no usable hardware virtualization (see @boot virt_reason)");
        return false;
    }
    return true;
}

/* Guest RAM, zeroed, with the image (a multiboot kernel or a Linux bzImage) loaded into it. */
static bool vm_load(struct vm *vm, const struct boot_info *bi, unsigned index, struct vm_entry *out)
{
    const struct boot_module *mod = &bi->mods[index];
    const char *name = vm->cfg.name;
    char err[256];
    struct guest_image img;
    const uint8_t *data = (const uint8_t *)mod->start;
    out->linux = bzimage_detect(data, mod->end - mod->start);
    if (out->linux) {
        /* Parsed once memory exists: the loader writes as it checks. */
        img.entry = 0;
        img.end = 0;
    } else if (image_parse(data, mod->end - mod->start, vm->cfg.mem, &img, err, sizeof(err))) {
        reject(name, err);
        return false;
    }
    out->info_gpa = (img.end + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    if (out->info_gpa + MBINFO_MAX > vm->cfg.mem) {
        snprintf(err, sizeof(err),
                 "image ends at 0x%lx: no room for the boot information in %lu MiB", img.end,
                 vm->cfg.mem >> 20);
        reject(name, err);
        return false;
    }
    vm->mem_hpa = pmm_alloc(&host_pmm, vm->cfg.mem / PAGE_SIZE, TWO_MIB, 0);
    if (!vm->mem_hpa) {
        snprintf(err, sizeof(err), "out of host memory for %lu MiB", vm->cfg.mem >> 20);
        reject(name, err);
        return false;
    }
    vm->hw.mem = (uint8_t *)vm->mem_hpa;
    vm->hw.mem_size = vm->cfg.mem;
    zero_guest_memory(vm);
    if (out->linux)
        return !load_linux(vm, bi, index, &out->entry);
    char cmdline[VM_PATH_MAX + VM_ARGS_MAX + 2];
    snprintf(cmdline, sizeof(cmdline), "%s%s%s", vm->cfg.path[0] ? vm->cfg.path : name,
             vm->cfg.args[0] ? " " : "", vm->cfg.args);
    /* Before the image: one that loads over the BIOS's area has it. */
    bios_ivt_build(vm->hw.mem);
    image_load(data, &img, vm->hw.mem);
    out->entry = img.entry;
    if (!mbinfo_build(vm->hw.mem, vm->cfg.mem, (uint32_t)out->info_gpa, MBINFO_MAX, cmdline)) {
        reject(name, "the command line does not fit in the boot information");
        return false;
    }
    return true;
}

/* GET_ID's answer: the disk's file name (the path's last part; virtio_blk_init cuts it to 20). */
static const char *disk_id(const char *path)
{
    const char *name = path;
    for (const char *slash = strchr(path, '/'); slash; slash = strchr(slash + 1, '/'))
        name = slash + 1;
    return name;
}

/*
 * disk=: the VM's virtio-blk (vm->blk; its transport starts with the device
 * table). Its disk is the module after the VM's (and its initramfs's),
 * copied into host RAM and zero-padded to whole sectors: the guest's writes
 * change the copy only, and go with the VM.
 */
static bool vm_attach_disk(struct vm *vm, const struct boot_info *bi, unsigned index)
{
    unsigned at = index + 1 + (vm->cfg.initrd[0] ? 1 : 0);
    char err[256];
    if (at >= bi->mod_count || !is_disk_module(&bi->mods[at])) {
        snprintf(err, sizeof(err), "disk=%s: the module after the VM's%s is not a disk ('%s')",
                 vm->cfg.disk, vm->cfg.initrd[0] ? " and its initramfs" : "", VIRTIO_BLK_MODULE);
        reject(vm->cfg.name, err);
        return false;
    }
    const uint8_t *bytes = (const uint8_t *)bi->mods[at].start;
    uint64_t size = bi->mods[at].end - bi->mods[at].start;
    uint64_t sectors = (size + VIRTIO_BLK_SECTOR - 1) / VIRTIO_BLK_SECTOR;
    struct virtio_blk *b = page_alloc_zeroed(blk_pages());
    uint8_t *data =
        sectors ? (uint8_t *)pmm_alloc(&host_pmm, disk_pages(sectors), PAGE_SIZE, 0) : NULL;
    if (!b || (sectors && !data)) {
        if (b)
            pmm_free(&host_pmm, (uint64_t)b, blk_pages());
        snprintf(err, sizeof(err), "disk=%s: out of host memory for its %lu KiB", vm->cfg.disk,
                 size >> 10);
        reject(vm->cfg.name, err);
        return false;
    }
    /* In pieces, beating the watchdog, as zero_guest_memory does: a big disk takes seconds. */
    for (uint64_t off = 0; off < size; off += TWO_MIB) {
        uint64_t len = size - off < TWO_MIB ? size - off : TWO_MIB;
        memcpy(data + off, bytes + off, len);
        watchdog_beat();
    }
    if (sectors)
        memset(data + size, 0, sectors * VIRTIO_BLK_SECTOR - size);
    virtio_blk_init(b, data, sectors, size, disk_id(vm->cfg.disk));
    vm->blk = b;
    return true;
}

/*
 * Nested paging over guest RAM, and the trace ring: when trace= names a
 * trace, or the key console, which can turn traces on, reads keys.
 */
static bool vm_map(struct vm *vm)
{
    if (virt->vm_init(&vm->hw) ||
        virt->vm_map(&vm->hw, 0, vm->mem_hpa, vm->cfg.mem, PT_READ | PT_WRITE | PT_EXEC)) {
        reject(vm->cfg.name, "out of memory for the nested page tables");
        return false;
    }
    if (profile_us && !(vm->profile = page_alloc_zeroed(PROFILE_PAGES))) {
        reject(vm->cfg.name, "out of memory for the profile (profile_us=)");
        return false;
    }
    if (!trace_mask && !console_keys)
        return true;
    if (!(vm->trace = page_alloc_zeroed(trace_ring_pages(trace_records)))) {
        reject(vm->cfg.name, "out of memory for the trace buffer (trace_records=)");
        return false;
    }
    trace_ring_init(vm->trace, (uint32_t)trace_records, (enum trace_window)trace_window_mode);
    return true;
}

/* vCPU i, on its CPU: vCPU 0 at the entry, the others waiting for INIT and a startup IPI. */
static bool vcpu_add(struct vm *vm, unsigned i, const struct vm_entry *start)
{
    const char *name = vm->cfg.name;
    struct vcpu *v = page_alloc_zeroed((sizeof(*v) + PAGE_SIZE - 1) / PAGE_SIZE);
    if (!v) {
        reject(name, "out of memory for the vCPUs");
        return false;
    }
    int pin = i < vm->cfg.npins ? (int)vm->cfg.pins[i] : -1;
    int cpu = sched_place(pin);
    if (cpu < 0) {
        pmm_free(&host_pmm, (uint64_t)v, (sizeof(*v) + PAGE_SIZE - 1) / PAGE_SIZE);
        char err[96];
        snprintf(err, sizeof(err), "pin=%u: CPU %u cannot run guests (%u online)", vm->cfg.pins[i],
                 vm->cfg.pins[i], cpu_count);
        reject(name, err);
        return false;
    }
    vm->vcpus[vm->nvcpus++] = v;
    v->vm = vm;
    v->hw.vm = &vm->hw;
    v->hw.id = i;
    sched_entity_init(&v->se, i == 0 ? SCHED_RUNNABLE : SCHED_PARKED, (unsigned)cpu, pin,
                      &vm->group, i, rdtsc());
    vm->group_members[i] = &v->se;
    v->hw.tsc_offset = tsc_create(&vm->tsc_sync, rdtsc());
    if (fpu_state_init(&v->fpu) || virt->vcpu_create(&v->hw)) {
        reject(name, "out of memory for the vCPUs");
        return false;
    }
    vcpu_init_events(v);
    v->stagger_cycles =
        stagger_us(sched_params.seed, vm->index, i, sched_params.seed_stagger_us) * tsc_khz / 1000;
    pause_vcpu_init(v);
    v->debug.dr6 = DR6_INIT;
    guest_msrs_reset(&v->msrs);
    vlapic_advance_init(&v->timer_advance, vm->cfg.policy.timer_advance_ns, tsc_khz);
    if (i != 0) {
        v->sipi_armed = true;
        return true;
    }
    virt->vcpu_reset_protected(&v->hw, start->entry);
    if (start->linux) {
        /* Linux's 32-bit boot protocol: ESI = boot_params, interrupts off. */
        v->hw.regs.rsi = LINUX_BOOT_PARAMS_GPA;
    } else {
        v->hw.regs.rax = MB1_BOOT_MAGIC;
        v->hw.regs.rbx = start->info_gpa;
    }
    return true;
}

/* Build one VM from a module; NULL (after @vm_reject) if it cannot run. */
static struct vm *vm_create(const struct boot_info *bi, unsigned index, unsigned number,
                            struct vm **vms)
{
    struct vm *vm = page_alloc_zeroed((sizeof(*vm) + PAGE_SIZE - 1) / PAGE_SIZE);
    if (!vm) {
        char name[VM_NAME_MAX + 1];
        vmconfig_default_name(index, name);
        reject(name, "out of memory for the VM");
        return 0;
    }
    struct vm_entry start;
    char err[256];
    if (!vm_configure(vm, &bi->mods[index], index, vms) || !vm_load(vm, bi, index, &start) ||
        !vm_map(vm))
        goto fail;
    vm->index = index;
    vm->number = number;
    vm->kvm_features = vm_policy_kvm_features(vm->cfg.policy.pv, start.linux);
    vm->hw.name = vm->cfg.name;
    if (vm->cfg.disk[0] && !vm_attach_disk(vm, bi, index))
        goto fail;
    if (vm->cfg.net[0] && virtio_net_create(vm, err, sizeof(err))) {
        reject(vm->cfg.name, err);
        goto fail;
    }
    pause_vm_init(vm);
    vm->group.pivot = vm->cfg.policy.yield_pivot;
    for (unsigned i = 0; i < vm->cfg.vcpus; i++)
        if (!vcpu_add(vm, i, &start))
            goto fail;
    vm->group.members = vm->group_members;
    vm->group.count = vm->nvcpus;
    if (!trace_marks_create(vm)) {
        reject(vm->cfg.name, "out of memory for its trace marks' rounds");
        goto fail;
    }
    /* The devices (vmm/dev/), once the vCPUs exist: the per-vCPU ones have an entry each, and
     * every device its power-on state. */
    if (vm_devices_create(vm, builtin_devices, builtin_device_count, err, sizeof(err))) {
        reject(vm->cfg.name, err);
        goto fail;
    }
    cpu_model_fill_cache(&vm->cpuid, vm->nvcpus, vm->kvm_features);
    vm->live_vcpus = vm->nvcpus;
    return vm;
fail:
    vm_free(vm);
    return 0;
}

unsigned vmm_start(const struct boot_info *bi)
{
    struct vm *vms[BOOT_MAX_MODULES] = {0};
    unsigned rejected = 0;
    if (virt)
        cpu_model_init();
    vcpu_stats_register();
    for (unsigned i = 0, number = 0; i < bi->mod_count; i++) {
        if (is_initrd_module(&bi->mods[i]) || is_disk_module(&bi->mods[i]))
            continue;
        vms[i] = vm_create(bi, i, number++, vms);
        if (!vms[i])
            rejected++;
    }
    for (unsigned i = 0; i < bi->mod_count; i++) {
        struct vm *vm = vms[i];
        if (!vm)
            continue;
        char buf[1024];
        struct json j;
        json_begin(&j, buf, sizeof(buf));
        json_str(&j, "vm", vm->cfg.name);
        json_u64(&j, "vcpus", vm->nvcpus);
        json_u64(&j, "mem_mb", vm->cfg.mem >> 20);
        json_hex(&j, "mem_hpa", vm->mem_hpa);
        json_u64(&j, "cpu", vm->vcpus[0]->se.cpu);
        char pv[96];
        vm_policy_pv_names(vm->kvm_features, pv, sizeof(pv));
        json_str(&j, "pv", pv);
        json_bool(&j, "legacy_pic", vm->cfg.legacy_pic);
        json_bool(&j, "ioapic", vm->cfg.ioapic);
        if (vm->blk) {
            json_str(&j, "disk", vm->cfg.disk);
            json_u64(&j, "disk_bytes", vm->blk->bytes);
        }
        if (vm->net) {
            char mac[18];
            virtio_net_mac_text(vm->net->mac, mac);
            json_str(&j, "net", vm->cfg.net);
            json_str(&j, "mac", mac);
        }
        json_object(&j, "policy");
        vm_policy_json(&vm->cfg.policy, &vm->pause, &j);
        json_close(&j);
        console_event("vm_start", &j);
        __atomic_add_fetch(&vms_alive, 1, __ATOMIC_ACQ_REL);
        __atomic_store_n(&vms_running[i], vm, __ATOMIC_RELEASE);
        vm->start_tsc = rdtsc();
        if (vm->cfg.timeout_ms) {
            /* Saturating: a timeout beyond the TSC's range means none in practice. */
            uint64_t ms = vm->cfg.timeout_ms, start = vm->start_tsc;
            uint64_t cycles = ms > UINT64_MAX / tsc_khz ? UINT64_MAX : ms * tsc_khz;
            vm->deadline = cycles > UINT64_MAX - start ? UINT64_MAX : start + cycles;
        }
        struct vcpu *v = vm->vcpus[0];
        uint64_t flags = spin_lock_irqsave(&v->se.lock);
        sched_wake(&v->se);
        spin_unlock_irqrestore(&v->se.lock, flags);
    }
    return rejected;
}

static uint64_t to_us(uint64_t cycles)
{
    return tsc_to_ns(cycles) / 1000;
}

static void report_vm(struct vm *vm, bool tables)
{
    const void *bases[VM_MAX_VCPUS];
    struct stats_vm g;
    vcpu_stats_vm(vm, bases, &g);
    stats_report_vm(&g, tables);
}

/*
 * Its trace marks' rounds still waiting; @vm_stop, from its tables
 * (vmm/vcpu/vcpu_stats.c); then the VM's statistics round.
 */
static void report_stop(struct vm *vm)
{
    trace_marks_flush(vm);
    char buf[8192];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    stats_event_json(&j, &vm_stop_table, vm);
    json_object(&j, "vcpus");
    for (unsigned i = 0; i < vm->nvcpus; i++) {
        char id[8];
        snprintf(id, sizeof(id), "%u", i);
        json_object(&j, id);
        stats_event_json(&j, &vm_stop_vcpu_table, vm->vcpus[i]);
        json_close(&j);
    }
    json_close(&j);
    console_event("vm_stop", &j);
    profile_print(vm, vm->profile, profile_us);
    report_vm(vm, stats_tables);
}

void vmm_vcpu_retired(struct vm *vm)
{
    if (__atomic_sub_fetch(&vm->live_vcpus, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    /* The last vCPU out: nothing else refers to the VM any more. */
    vuart_set_interactive(&vm->uart, false);
    vuart_flush(&vm->uart);
    trace_flush(vm);
    report_stop(vm);
    if (vm->exit_code != 0)
        __atomic_add_fetch(&vms_failed, 1, __ATOMIC_ACQ_REL);
    uint64_t flags = spin_lock_irqsave(&vms_lock);
    __atomic_store_n(&vms_running[vm->index], NULL, __ATOMIC_RELEASE);
    spin_unlock_irqrestore(&vms_lock, flags);
    __atomic_add_fetch(&vms_stopped, 1, __ATOMIC_RELAXED);
    vm_free(vm);
    if (__atomic_sub_fetch(&vms_alive, 1, __ATOMIC_ACQ_REL) == 0)
        sched_kick(0);
}

void vmm_for_each_vm(void (*fn)(struct vm *vm, void *ctx), void *ctx)
{
    uint64_t flags = spin_lock_irqsave(&vms_lock);
    for (unsigned i = 0; i < BOOT_MAX_MODULES; i++)
        if (vms_running[i])
            fn(vms_running[i], ctx);
    spin_unlock_irqrestore(&vms_lock, flags);
}

void vmm_counts(uint64_t *running, uint64_t *stopped)
{
    *running = __atomic_load_n(&vms_alive, __ATOMIC_ACQUIRE);
    *stopped = __atomic_load_n(&vms_stopped, __ATOMIC_ACQUIRE);
}

static int highest_vector(const uint32_t reg[8])
{
    for (int i = 7; i >= 0; i--)
        if (reg[i])
            return i * 32 + 31 - __builtin_clz(reg[i]);
    return -1;
}

void vmm_dump(void)
{
    uint64_t now = rdtsc();
    for (unsigned i = 0; i < BOOT_MAX_MODULES; i++) {
        struct vm *vm = __atomic_load_n(&vms_running[i], __ATOMIC_ACQUIRE);
        if (!vm)
            continue;
        kprintf("  vm %s: %u of %u vCPUs live%s\n", vm->cfg.name, vm->live_vcpus, vm->nvcpus,
                vm->stopping ? ", stopping" : "");
        for (unsigned n = 0; n < vm->nvcpus; n++) {
            struct vcpu *v = vm->vcpus[n];
            kprintf("    vcpu %u: %s for %lu us on cpu %u%s%s, rip 0x%lx, if %d, irr %d, isr %d, "
                    "deliverable %d, extint %d, nmi %d, init %d, sipi %d, timer %s %ld us\n",
                    n, vcpu_state_names[v->se.state], to_us(now - v->se.state_since), v->se.cpu,
                    v->se.on_cpu ? " (on it)" : "", v->halted ? " (halted)" : "", v->hw.regs.rip,
                    !!(v->hw.regs.rflags & RFLAGS_IF), highest_vector(v->lapic.irr),
                    highest_vector(v->lapic.isr), vlapic_highest_pending(&v->lapic),
                    vcpu_extint_pending(v), nmi_waiting(&v->nmi), v->init_pending, v->sipi_vector,
                    v->timer.cpu >= 0 ? "due in" : "off",
                    v->timer.cpu >= 0 ? (int64_t)(v->timer.deadline - now) * 1000 / (int64_t)tsc_khz
                                      : 0);
        }
    }
}

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
#include "vmm/exits.h"
#include "vmm/loader.h"

#define TWO_MIB    (2ull << 20)
#define MBINFO_MAX 4096 /* multiboot info + memory map + command line */

static unsigned vms_alive;
static unsigned vms_failed;
static unsigned next_cpu;

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

static void vm_free(struct vm *vm)
{
    for (unsigned i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (!v)
            continue;
        virt->vcpu_destroy(v);
        fpu_state_free(&v->fpu);
        pmm_free(&host_pmm, (uint64_t)v, (sizeof(*v) + PAGE_SIZE - 1) / PAGE_SIZE);
    }
    virt->vm_destroy(vm);
    if (vm->mem)
        pmm_free(&host_pmm, vm->mem_hpa, vm->cfg.mem / PAGE_SIZE);
    pmm_free(&host_pmm, (uint64_t)vm, (sizeof(*vm) + PAGE_SIZE - 1) / PAGE_SIZE);
}

static bool name_taken(const char *name, struct vm **vms, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (vms[i] && !strcmp(vms[i]->cfg.name, name))
            return true;
    return false;
}

/* Build one VM from a module; NULL (after @vm_reject) if it cannot run. */
static struct vm *vm_create(const struct boot_module *mod, unsigned index, struct vm **vms)
{
    char err[256], label[48];
    snprintf(label, sizeof(label), "%u", index);
    struct vm *vm = page_alloc_zeroed((sizeof(*vm) + PAGE_SIZE - 1) / PAGE_SIZE);
    if (!vm) {
        reject(label, "out of memory for the VM");
        return 0;
    }
    if (vmconfig_parse(mod->cmdline, index, VM_MAX_VCPUS, &vm->cfg, err, sizeof(err))) {
        reject(label, err);
        goto fail;
    }
    if (name_taken(vm->cfg.name, vms, index)) {
        size_t len = strlen(vm->cfg.name);
        snprintf(vm->cfg.name + (len > VM_NAME_MAX - 4 ? VM_NAME_MAX - 4 : len), 5, "-%u", index);
    }
    const char *name = vm->cfg.name;
    if (vm->cfg.vcpus != 1) {
        snprintf(err, sizeof(err), "vcpus=%u: multi-vCPU VMs are not supported yet (use 1)",
                 vm->cfg.vcpus);
        reject(name, err);
        goto fail;
    }
    if (!virt) {
        reject(name, "no usable hardware virtualization (see @boot virt_reason)");
        goto fail;
    }
    struct guest_image img;
    const uint8_t *data = (const uint8_t *)mod->start;
    if (image_parse(data, mod->end - mod->start, vm->cfg.mem, &img, err, sizeof(err))) {
        reject(name, err);
        goto fail;
    }
    uint64_t info_gpa = (img.end + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    if (info_gpa + MBINFO_MAX > vm->cfg.mem) {
        snprintf(err, sizeof(err),
                 "image ends at 0x%lx: no room for the boot information in %lu MiB", img.end,
                 vm->cfg.mem >> 20);
        reject(name, err);
        goto fail;
    }

    uint64_t pages = vm->cfg.mem / PAGE_SIZE;
    vm->mem_hpa = pmm_alloc(&host_pmm, pages, TWO_MIB, 0);
    if (!vm->mem_hpa) {
        snprintf(err, sizeof(err), "out of host memory for %lu MiB", vm->cfg.mem >> 20);
        reject(name, err);
        goto fail;
    }
    vm->mem = (uint8_t *)vm->mem_hpa;
    memset(vm->mem, 0, vm->cfg.mem);
    image_load(data, &img, vm->mem);
    char cmdline[VM_PATH_MAX + VM_ARGS_MAX + 2];
    snprintf(cmdline, sizeof(cmdline), "%s%s%s", vm->cfg.path[0] ? vm->cfg.path : name,
             vm->cfg.args[0] ? " " : "", vm->cfg.args);
    if (!mbinfo_build(vm->mem, vm->cfg.mem, (uint32_t)info_gpa, MBINFO_MAX, cmdline)) {
        reject(name, "the command line does not fit in the boot information");
        goto fail;
    }
    if (virt->vm_init(vm) ||
        virt->vm_map(vm, 0, vm->mem_hpa, vm->cfg.mem, PT_READ | PT_WRITE | PT_EXEC)) {
        reject(name, "out of memory for the nested page tables");
        goto fail;
    }
    vm->index = index;
    vm->tsc_offset = -rdtsc();
    vuart_init(&vm->uart, vm->cfg.name);
    struct vcpu *v = page_alloc_zeroed((sizeof(*v) + PAGE_SIZE - 1) / PAGE_SIZE);
    if (!v || (vm->vcpus[0] = v, vm->nvcpus = 1, fpu_state_init(&v->fpu)) || virt->vcpu_create(v)) {
        reject(name, "out of memory for the vCPU");
        goto fail;
    }
    v->vm = vm;
    v->id = 0;
    virt->vcpu_reset_protected(v, img.entry);
    v->regs.rax = MB1_BOOT_MAGIC;
    v->regs.rbx = info_gpa;
    v->state = VCPU_RUNNABLE;
    return vm;
fail:
    vm_free(vm);
    return 0;
}

static unsigned place(const struct vm *vm)
{
    if (vm->cfg.npins)
        return vm->cfg.pins[0];
    /* Round robin over the CPUs that can run guests. */
    for (unsigned tries = 0; tries < cpu_count; tries++) {
        unsigned cpu = next_cpu++ % cpu_count;
        if (sched_cpu_ready(cpu))
            return cpu;
    }
    return 0;
}

unsigned vmm_start(const struct boot_info *bi)
{
    struct vm *vms[BOOT_MAX_MODULES] = {0};
    unsigned rejected = 0;
    for (unsigned i = 0; i < bi->mod_count; i++) {
        vms[i] = vm_create(&bi->mods[i], i, vms);
        if (!vms[i])
            rejected++;
    }
    for (unsigned i = 0; i < bi->mod_count; i++) {
        struct vm *vm = vms[i];
        if (!vm)
            continue;
        unsigned cpu = place(vm);
        if (!sched_cpu_ready(cpu)) {
            char err[64];
            snprintf(err, sizeof(err), "pin=%u: CPU %u cannot run guests", cpu, cpu);
            reject(vm->cfg.name, err);
            vm_free(vm);
            rejected++;
            continue;
        }
        char buf[160];
        struct json j;
        json_begin(&j, buf, sizeof(buf));
        json_str(&j, "vm", vm->cfg.name);
        json_u64(&j, "vcpus", vm->nvcpus);
        json_u64(&j, "mem_mb", vm->cfg.mem >> 20);
        json_u64(&j, "cpu", cpu);
        console_event("vm_start", &j);
        __atomic_add_fetch(&vms_alive, 1, __ATOMIC_ACQ_REL);
        sched_enqueue(cpu, vm->vcpus[0]);
    }
    return rejected;
}

static void report_stop(struct vm *vm)
{
    char buf[1024];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "vm", vm->cfg.name);
    json_i64(&j, "code", vm->exit_code);
    json_str(&j, "reason", vm->stop_reason);
    if (vm->stop_detail[0])
        json_str(&j, "detail", vm->stop_detail);
    json_u64(&j, "run_us", tsc_to_ns(rdtsc() - vm->start_tsc) / 1000);
    json_object(&j, "exits");
    struct vcpu *v = vm->vcpus[0];
    for (unsigned r = 0; r < EXIT_REASON_COUNT; r++)
        if (v->exits[r])
            json_u64(&j, exit_reason_name((enum exit_reason)r), v->exits[r]);
    json_close(&j);
    json_u64(&j, "unhandled_io_reads", vm->unhandled_io_reads);
    json_u64(&j, "unhandled_io_writes", vm->unhandled_io_writes);
    console_event("vm_stop", &j);
}

void vmm_run_vcpu(struct vcpu *v)
{
    struct vm *vm = v->vm;
    /* Time and the timeout count from when the VM first runs, not from when it queued. */
    vm->start_tsc = rdtsc();
    if (vm->cfg.timeout_ms)
        vm->deadline = vm->start_tsc + vm->cfg.timeout_ms * tsc_khz;
    fpu_guest_enter(&v->fpu);
    v->state = VCPU_RUNNING;
    uint64_t start = rdtsc();
    while (!vm->stopping) {
        if (vm->deadline) {
            if (rdtsc() >= vm->deadline) {
                vm_request_stop(vm, -1, "timeout");
                break;
            }
            sched_timer_arm(vm->deadline);
        }
        struct exit_record e;
        virt->vcpu_run(v, &e);
        v->exits[e.reason]++;
        handle_exit(v, &e);
    }
    v->run_cycles += rdtsc() - start;
    fpu_guest_leave(&v->fpu);
    v->state = VCPU_STOPPED;

    vuart_flush(&vm->uart);
    report_stop(vm);
    if (vm->exit_code != 0)
        __atomic_add_fetch(&vms_failed, 1, __ATOMIC_ACQ_REL);
    vm_free(vm);
    if (__atomic_sub_fetch(&vms_alive, 1, __ATOMIC_ACQ_REL) == 0)
        sched_kick(0);
}

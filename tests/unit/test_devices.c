/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device model (vmm/dev/): every port, MMIO range and MSR of every
 * built-in device reaches its device, through the exit handlers' own entry
 * points (io_read_other/io_write, handle_npf, vm_devices_msr); overlapping
 * claims are refused, naming both devices; an unclaimed access goes to the
 * unhandled-I/O count or the unbacked= policy; the reset hooks reach every
 * device that has one; a virtio-mmio page reaches its transport, whose
 * interrupt is an edge on its pin and whose fault is an @warning.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/json.h"
#include "stats/stats.h"
#include "vmm/load/acpi_tables.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/fwcfg.h"
#include "vmm/dev/device.h"
#include "vmm/exit/exits.h"
#include "abi/trace_marker.h"
#include "sched/deferred.h"
#include "stats/report.h"
#include "vmm/dev/trace_marker.h"
#include "vmm/exit/io.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/dev/kvmclock.h"
#include "vmm/exit/mmio.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/dev/vlapic_dev.h"
#include "vmm/dev/vm_devices.h"
#include "vmm/dev/vpic.h"
#include "vmm/dev/vpit.h"
#include "vmm/dev/virtio/virtio_vm.h"
#include "vmm/dev/virtio/blk.h"
#include "vmm/dev/virtio/net_vm.h"
#include "arch/x86/mm.h"
#include <stdlib.h>

/* ---------------------------------------------------------------- the rest of pollux */

uint64_t tsc_khz = 1000000;
static void end_emulated_instruction(struct virt_vcpu *v)
{
    (void)v;
}

/* No feature of vmm/dev/guest_msrs.c offered: none of its MSRs is loaded. */
struct guest_features guest_features;

void guest_msrs_load(const struct guest_msrs *m)
{
    (void)m;
    fail();
}

/* vmm/vcpu/vcpu.c's, which the device model does not link: the TSC written last. */
static uint64_t tsc_written;

void vcpu_write_tsc(struct vcpu *v, uint32_t index, uint64_t value)
{
    (void)v;
    assert_int_equal(index, MSR_TSC);
    tsc_written = value;
}

/* The vendor's MSRs: what it was asked, and PAT's value. */
static unsigned vendor_reads, vendor_writes;
static uint64_t vendor_pat = 0x0007040600070406ull;

static enum msr_result vendor_msr_read(struct virt_vcpu *v, uint32_t index, uint64_t *value)
{
    (void)v;
    vendor_reads++;
    *value = vendor_pat;
    return index == MSR_PAT ? MSR_DONE : MSR_NOT_MINE;
}

static enum msr_result vendor_msr_write(struct virt_vcpu *v, uint32_t index, uint64_t value)
{
    (void)v;
    (void)index;
    (void)value;
    vendor_writes++;
    return MSR_DONE;
}

static const struct virt_ops test_ops = {.end_emulated_instruction = end_emulated_instruction,
                                         .msr_read = vendor_msr_read,
                                         .msr_write = vendor_msr_write};
const struct virt_ops *virt = &test_ops;

void kprintf(const char *fmt, ...)
{
    (void)fmt;
}

/* The console's buffer has no room: a guest's line is not taken. */
static bool console_full;

bool ktryprintf(const char *fmt, ...)
{
    (void)fmt;
    return !console_full;
}

/* The last @event printed. */
static char last_event[256];

void console_event(const char *name, struct json *j)
{
    snprintf(last_event, sizeof(last_event), "@%s %s", name, json_end(j));
}

/* Host pages for virtio_net_create (vmm/dev/virtio/net_vm.c), from the heap. */
struct pmm host_pmm;

void *page_alloc_zeroed(uint64_t npages)
{
    void *p = aligned_alloc(PAGE_SIZE, npages * PAGE_SIZE);
    return p ? memset(p, 0, npages * PAGE_SIZE) : NULL;
}

void pmm_free(struct pmm *p, uint64_t phys, uint64_t npages)
{
    (void)p, (void)npages;
    free((void *)phys);
}

static int64_t stop_code;
static const char *stop_reason;
static unsigned stops, failed_accesses;

void vm_request_stop(struct vm *vm, int64_t code, const char *reason)
{
    (void)vm;
    stops++;
    stop_code = code;
    stop_reason = reason;
}

void vm_fail(struct vcpu *v, const char *reason, const char *fmt, ...)
{
    (void)v, (void)reason, (void)fmt;
    fail_msg("no access here fails to decode");
}

void vm_fail_access(struct vcpu *v, uint64_t gpa, const char *fmt, ...)
{
    (void)v, (void)gpa, (void)fmt;
    failed_accesses++;
}

static unsigned notified;

void vcpu_notify(struct vcpu *v, enum trace_wake source, const struct vcpu *from)
{
    (void)v, (void)source, (void)from;
    notified++;
}

void vcpu_trace_wakeup(struct vcpu *v, enum trace_wake source, const struct vcpu *from)
{
    (void)v, (void)source, (void)from;
}

/* The trace marker's writes, as the device passed them on. */
static unsigned marker_writes;
static uint8_t marker_value;

void trace_marker(struct vm *vm, unsigned vcpu, uint8_t value)
{
    (void)vm, (void)vcpu;
    marker_writes++;
    marker_value = value;
}

/* A mark's statistics round (vmm/dev/trace_marker.h): taken in the exit, printed later. */
void vcpu_stats_vm(const struct vm *m, const void *bases[VM_MAX_VCPUS], struct stats_vm *out)
{
    *out = (struct stats_vm){m->cfg.name, bases, m->nvcpus, NULL, NULL};
}

/* stats/report.c's queue of rounds taken, as it prints them: oldest first, then free. */
static struct stats_snapshot *taken[8];
static unsigned rounds_taken, rounds_printed;
static uint64_t printed_t[8];

void stats_take_vm(const struct stats_vm *g, struct stats_snapshot *snap)
{
    assert_true(snap->in_use);
    assert_string_equal(g->name, "test");
    snap->n = g->n;
    snap->t = ++rounds_taken;                                 /* the order they were taken in */
    memset(snap->vcpus, 0xa5, g->n * sizeof(snap->vcpus[0])); /* its room is the VM's */
    taken[(rounds_taken - 1) % 8] = snap;
}

void stats_print_taken(void)
{
    for (; rounds_printed < rounds_taken; rounds_printed++) {
        struct stats_snapshot *snap = taken[rounds_printed % 8];
        assert_int_equal(snap->n, 2);                                    /* the test VM's vCPUs */
        assert_int_equal(snap->vcpus[1].slot[0], 0xa5a5a5a5a5a5a5a5ull); /* as taken */
        printed_t[rounds_printed % 8] = snap->t;
        snap->in_use = false;
    }
}

/* The console has room for every round here. */
bool stats_print_taken_nowait(void)
{
    stats_print_taken();
    return false;
}

void sched_set_state(struct sched_entity *e, enum sched_state s, uint64_t now)
{
    (void)now;
    e->state = s;
}

void vcpu_timer_update(struct vcpu *v)
{
    (void)v;
}

/* The PV hypercalls' directed yield (vmm/dev/kvm_pv_sched.c): not reached by a device. */
enum yield_to_result sched_yield_to(struct sched_entity *e, struct sched_entity *target)
{
    (void)e;
    (void)target;
    fail_msg("a device asked for a directed yield");
    return YIELD_TO_RUNNING;
}

void sched_wake(struct sched_entity *e)
{
    (void)e;
}

/* The decoder: the next MMIO access is what the test says; loads are recorded. */
static struct mmio_op next_op;
static uint64_t stored, loaded;
static const char *decoded_for;

bool mmio_fetch(struct vcpu *v, const struct exit_record *e, const char *what, struct mmio_op *op)
{
    (void)v, (void)e;
    decoded_for = what;
    *op = next_op;
    return true;
}

uint64_t mmio_store_data(struct vcpu *v, const struct mmio_op *op)
{
    (void)v, (void)op;
    return stored;
}

void mmio_load_done(struct vcpu *v, const struct mmio_op *op, uint64_t value)
{
    (void)v, (void)op;
    loaded = value;
}

/* ---------------------------------------------------------------- a VM */

#define NVCPUS     2
#define MAXPHYADDR 40 /* the vCPUs' physical address bits */

/* The guest's CPU (vmm/exit/cpu_model.c decides it): the local APIC's power-on reads it. */
struct guest_features guest_features = {.maxphyaddr = MAXPHYADDR};

static struct vm vm;
static struct vcpu vcpus[NVCPUS];

static bool vcpu_locked(const struct vcpu *v)
{
    return v->se.lock.owner != v->se.lock.next;
}

/*
 * No queue here fills past a pass's budget (test_virtio_blk's and test_virtio_net's do): only
 * the trace marker's rounds are deferred work.
 */
static struct deferred_work *deferred;
static unsigned defers;
void sched_defer(struct deferred_work *w)
{
    assert_true(!deferred || deferred == w);
    deferred = w;
    defers++;
}

void sched_defer_cancel(struct deferred_work *w)
{
    (void)w;
}

/* Where the sender lets other CPUs run (sched.h): counted, and never under a vCPU's lock. */
static unsigned let_run, notified_when_let_run;
void sched_let_others_run(void)
{
    for (unsigned i = 0; i < NVCPUS; i++)
        assert_false(vcpu_locked(&vcpus[i]));
    let_run++;
    notified_when_let_run = notified;
}

/* The VM's disk= (vmm/vmm.c makes these from the disk module): 2 sectors. */
static struct virtio_blk blk;
static uint8_t disk[2 * VIRTIO_BLK_SECTOR];

static void make_vm_with(bool pc, bool legacy_pic, bool ioapic)
{
    virtio_net_free(&vm); /* the last test's VM leaves its switch */
    memset(&vm, 0, sizeof(vm));
    memset(vcpus, 0, sizeof(vcpus));
    strcpy(vm.cfg.name, "test");
    vm.cfg.mem = 32 << 20;
    vm.hw.mem_size = 32 << 20;
    vm.cfg.vcpus = NVCPUS;
    vm.pc_platform = pc;
    vm.cfg.legacy_pic = legacy_pic;
    vm.cfg.ioapic = ioapic;
    vm.nvcpus = NVCPUS;
    strcpy(vm.cfg.disk, "/boot/1-disk.img");
    virtio_blk_init(&blk, disk, 2, sizeof(disk), "1-disk.img");
    vm.blk = &blk;
    vm.index = 5;
    vm.number = 3;
    strcpy(vm.cfg.net, "lan0");
    char err[256];
    assert_int_equal(virtio_net_create(&vm, err, sizeof(err)), 0);
    for (unsigned i = 0; i < NVCPUS; i++) {
        vcpus[i].vm = &vm;
        vcpus[i].hw.id = i;
        vcpus[i].sipi_vector = -1;
        vm.vcpus[i] = &vcpus[i];
    }
    if (vm_devices_create(&vm, builtin_devices, builtin_device_count, err, sizeof(err)))
        fail_msg("%s", err);
    stops = failed_accesses = marker_writes = 0;
    stop_reason = 0;
}

static void make_vm(bool pc, bool legacy_pic)
{
    make_vm_with(pc, legacy_pic, true);
}

/* A Linux guest's VM: the PC devices, no 8259s nor 8254 (vmm/vmm.c's load_linux). */
static int setup_pc(void **state)
{
    (void)state;
    make_vm(true, false);
    return 0;
}

/* A bundled guest's: the 8259s and the 8254, none of the PC's. */
static int setup_plain(void **state)
{
    (void)state;
    make_vm(false, true);
    return 0;
}

/* Both: every built-in device but the PIC masks. */
static int setup_pc_legacy(void **state)
{
    (void)state;
    make_vm(true, true);
    return 0;
}

static bool present(const struct device *dev)
{
    return !dev->present || dev->present(&vm);
}

static uint32_t in(unsigned v, uint16_t port, unsigned size)
{
    return io_read_other(&vcpus[v], port, size);
}

static void out(unsigned v, uint16_t port, unsigned size, uint32_t value)
{
    io_write(&vcpus[v], port, size, value);
}

static void assert_no_unhandled_io(void)
{
    assert_int_equal(vm.unhandled_io_reads, 0);
    assert_int_equal(vm.unhandled_io_writes, 0);
}

/* A nested page fault at gpa from vCPU v: a load (returns its value) or a store. */
static uint64_t npf(unsigned v, uint64_t gpa, bool write, unsigned size, uint64_t value)
{
    struct exit_record e = {.reason = EXIT_NESTED_PAGE_FAULT};
    e.npf.gpa = gpa;
    e.npf.write = write;
    next_op = (struct mmio_op){.len = 3, .write = write, .size = size};
    stored = value;
    loaded = 0xdeadbeef;
    decoded_for = 0;
    handle_npf(&vcpus[v], &e);
    return loaded;
}

/* ---------------------------------------------------------------- ports */

/* Every port of every built-in device the VM has is indexed to that device, and only those. */
static void test_every_claimed_port_is_indexed(void **state)
{
    (void)state;
    unsigned claimed = 0;
    for (unsigned k = 0; k < builtin_device_count; k++) {
        const struct device *dev = builtin_devices[k];
        if (!present(dev))
            continue;
        for (unsigned r = 0; r < dev->ports.count; r++)
            for (uint64_t p = dev->ports.ranges[r].first; p <= dev->ports.ranges[r].last; p++) {
                struct dev_entry *d = vm_devices_find_port(&vm.devices, (uint16_t)p);
                assert_non_null(d);
                assert_string_equal(d->dev->name, dev->name);
                claimed++;
            }
    }
    unsigned indexed = 0;
    for (unsigned p = 0; p < DEV_PORTS; p++)
        indexed += vm.devices.port[p] != 0;
    assert_int_equal(indexed, claimed);
    /* 4 PIC masks; or 4 PIC, 2 ELCR, 4 PIT and port 0x61 */
    unsigned legacy = vm.cfg.legacy_pic ? 4 + 2 + 4 + 1 : 4;
    /* 5 PCI, 4 power */
    unsigned pc = vm.pc_platform ? 5 + 4 : 0;
    /* 8 COM1, 0xf4, 0x8900, 2 fw_cfg, the trace marker */
    assert_int_equal(claimed, 8 + 1 + 1 + 2 + legacy + pc + 1);
}

static void test_com1(void **state)
{
    (void)state;
    out(1, VUART_BASE + 7, 1, 0x5a); /* the scratch register */
    assert_int_equal(in(0, VUART_BASE + 7, 1), 0x5a);
    assert_int_equal(vm.uart.scr, 0x5a);
    assert_int_equal(in(0, VUART_BASE + 5, 1) & 0x60, 0x60); /* LSR: THR and the line empty */
    assert_no_unhandled_io();
    /* The fast path's inline read reaches the same register. */
    assert_int_equal(io_read(&vcpus[1], VUART_BASE + 7, 1), 0x5a);
    /* A line's end the console has no room for: not taken, so the OUT is not retired. */
    assert_true(io_write(&vcpus[0], VUART_BASE, 1, 'x'));
    console_full = true;
    assert_false(io_write(&vcpus[0], VUART_BASE, 1, '\n'));
    assert_int_equal(vm.uart.len, 1);
    assert_int_equal(vm.uart.full_waits, 1);
    console_full = false;
    assert_true(io_write(&vcpus[0], VUART_BASE, 1, '\n'));
    assert_int_equal(vm.uart.len, 0);
    assert_no_unhandled_io();
}

static void test_debug_exit(void **state)
{
    (void)state;
    out(0, DEBUG_EXIT_PORT, 4, 0x1234);
    assert_int_equal(stops, 1);
    assert_int_equal(stop_code, 0x1234);
    assert_string_equal(stop_reason, "debug-exit");
    assert_no_unhandled_io();
}

/*
 * Byte writes reach the VM's trace window (vmm/console/trace.c); other widths are unhandled.
 * Each mark takes a round of the VM's records and prints nothing: deferred work prints them;
 * a mark while TRACE_MARK_ROUNDS wait is dropped and counted; the VM's stop prints what waits.
 */
static void test_trace_marker(void **state)
{
    (void)state;
    assert_true(trace_marks_create(&vm));
    rounds_taken = rounds_printed = defers = 0;
    deferred = NULL;
    out(1, TRACE_MARKER_PORT, 1, TRACE_MARKER_START);
    assert_int_equal(marker_writes, 1);
    assert_int_equal(marker_value, TRACE_MARKER_START);
    assert_int_equal(rounds_taken, 1);
    assert_int_equal(rounds_printed, 0); /* not in the exit */
    assert_int_equal(defers, 1);
    out(1, TRACE_MARKER_PORT, 1, TRACE_MARKER_END);
    assert_int_equal(marker_writes, 2);
    assert_int_equal(marker_value, TRACE_MARKER_END);
    assert_int_equal(rounds_taken, 2);
    assert_int_equal(defers, 2);
    out(1, TRACE_MARKER_PORT, 1, TRACE_MARKER_START); /* both rounds wait: this one has none */
    assert_int_equal(marker_writes, 3);
    assert_int_equal(rounds_taken, 2);
    assert_int_equal(vm.mark_rounds_dropped, 1);
    assert_false(deferred->fn(deferred)); /* every round taken, in order */
    assert_int_equal(rounds_printed, 2);
    assert_int_equal(printed_t[0], 1);
    assert_int_equal(printed_t[1], 2);
    /* Room again; and a round still waiting when the VM stops is printed then. */
    out(1, TRACE_MARKER_PORT, 1, TRACE_MARKER_END);
    assert_int_equal(rounds_taken, 3);
    trace_marks_flush(&vm);
    assert_int_equal(rounds_printed, 3);
    assert_int_equal(printed_t[2], 3);
    trace_marks_free(&vm);
    assert_no_unhandled_io();
    out(1, TRACE_MARKER_PORT, 2, TRACE_MARKER_START);
    assert_int_equal(marker_writes, 4);
    assert_int_equal(vm.unhandled_io_writes, 1);
}

static void test_shutdown_port(void **state)
{
    (void)state;
    const char *s = "SShutdown";
    for (unsigned i = 0; s[i]; i++) {
        assert_int_equal(stops, 0);
        out(0, SHUTDOWN_PORT, 1, (uint8_t)s[i]);
    }
    assert_int_equal(stops, 1);
    assert_int_equal(stop_code, 0);
    assert_string_equal(stop_reason, "shutdown-port");
    assert_no_unhandled_io();
}

static void test_fwcfg(void **state)
{
    (void)state;
    out(0, FWCFG_PORT_SELECTOR, 2, 0x00);
    char sig[5] = {0};
    for (int i = 0; i < 4; i++)
        sig[i] = (char)in(1, FWCFG_PORT_DATA, 1);
    assert_string_equal(sig, "QEMU");
    out(1, FWCFG_PORT_SELECTOR, 2, 0x05);
    assert_int_equal(in(0, FWCFG_PORT_DATA, 1), NVCPUS);
    assert_int_equal(in(0, FWCFG_PORT_DATA, 1), 0);
    out(1, FWCFG_PORT_SELECTOR, 2, 0x03);
    uint64_t ram = 0;
    for (int i = 0; i < 8; i++)
        ram |= (uint64_t)in(0, FWCFG_PORT_DATA, 1) << (8 * i);
    assert_int_equal(ram, 32 << 20);
    assert_no_unhandled_io();
}

static void test_pic_masks(void **state)
{
    (void)state;
    out(0, 0x21, 1, 0xfb);
    out(1, 0xa1, 1, 0xef);
    out(0, 0x20, 1, 0x11); /* ICW1: taken, not kept */
    assert_int_equal(in(1, 0x21, 1), 0xfb);
    assert_int_equal(in(0, 0xa1, 1), 0xef);
    assert_int_equal(in(0, 0x20, 1), 0);
    assert_int_equal(in(0, 0xa0, 1), 0);
    assert_no_unhandled_io();
}

static void test_pci_latch(void **state)
{
    (void)state;
    out(0, 0xcf8, 4, 0x80001234);
    assert_int_equal(in(1, 0xcf8, 4), 0x80001234);
    for (uint16_t p = 0xcfc; p < 0xd00; p++) {
        assert_int_equal(in(0, p, 1), 0xffffffffu);
        out(0, p, 1, 0);
    }
    assert_int_equal(in(0, 0xcfc, 4), 0xffffffffu);
    assert_no_unhandled_io();
}

static void test_acpi_power(void **state)
{
    (void)state;
    assert_int_equal(in(0, ACPI_SLEEP_STATUS_PORT, 1), 0);
    out(0, ACPI_SLEEP_STATUS_PORT, 1, 0xff);
    out(0, ACPI_SLEEP_CONTROL_PORT, 1, ACPI_S5_SLP_TYP << 2); /* no SLP_EN: nothing */
    out(0, ACPI_RESET_PORT, 1, 0x02);                         /* no reset bit: nothing */
    assert_int_equal(stops, 0);
    out(0, ACPI_SLEEP_CONTROL_PORT, 1, ACPI_SLP_EN | ACPI_S5_SLP_TYP << 2);
    assert_int_equal(stops, 1);
    assert_string_equal(stop_reason, "poweroff");
    out(0, ACPI_RESET_PORT, 1, ACPI_RESET_VALUE);
    assert_int_equal(stops, 2);
    assert_int_equal(stop_code, VM_REBOOT_CODE);
    assert_string_equal(stop_reason, "reboot");
    out(1, 0x64, 1, 0xfe);
    assert_int_equal(stops, 3);
    assert_string_equal(stop_reason, "reboot");
    assert_no_unhandled_io();
    out(1, 0x64, 1, 0xd1); /* another keyboard-controller command: nobody's */
    assert_int_equal(vm.unhandled_io_writes, 1);
}

/* ---------------------------------------------------------------- MMIO */

/* Both ends of every built-in MMIO range find the device; a per-vCPU one, the vCPU's entry. */
static void test_every_mmio_range_finds_its_device(void **state)
{
    (void)state;
    unsigned ranges = 0;
    for (unsigned k = 0; k < builtin_device_count; k++) {
        const struct device *dev = builtin_devices[k];
        for (unsigned r = 0; r < dev->mmio.count; r++, ranges++) {
            uint64_t ends[] = {dev->mmio.ranges[r].first, dev->mmio.ranges[r].last};
            for (unsigned i = 0; i < 2; i++)
                for (unsigned v = 0; v < NVCPUS; v++) {
                    struct dev_entry *d = vm_devices_find_mmio(&vm, &vcpus[v], ends[i]);
                    assert_non_null(d);
                    assert_ptr_equal(d->dev, dev);
                    assert_ptr_equal(d->vcpu, dev->per_vcpu ? &vcpus[v] : NULL);
                }
            /* The neighbours are someone else's (the virtio slots are adjacent pages). */
            struct dev_entry *below = vm_devices_find_mmio(&vm, &vcpus[0], ends[0] - 1);
            struct dev_entry *above = vm_devices_find_mmio(&vm, &vcpus[0], ends[1] + 1);
            assert_true(below == NULL || below->dev != dev);
            assert_true(above == NULL || above->dev != dev);
        }
    }
    /* The I/O APIC's, virtio-net's, virtio-blk's; the xAPIC page is each vCPU's own (below). */
    assert_int_equal(ranges, 3);
}

static void test_xapic_page(void **state)
{
    (void)state;
    /* Each vCPU reads its own local APIC's ID (offset 0x20, bits 31:24). */
    for (unsigned v = 0; v < NVCPUS; v++) {
        assert_int_equal(npf(v, VLAPIC_BASE_DEFAULT + 0x20, false, 4, 0), (uint64_t)v << 24);
        assert_string_equal(decoded_for, "the local APIC");
    }
    npf(1, VLAPIC_BASE_DEFAULT + 0x80, true, 4, 0x30); /* TPR */
    assert_int_equal(vcpus[1].lapic.tpr, 0x30);
    assert_int_equal(vcpus[0].lapic.tpr, 0);
    assert_int_equal(npf(1, VLAPIC_BASE_DEFAULT + 0x80, false, 2, 0),
                     ~0ull); /* not 32-bit: dropped */
    /* The fast path's direct way in reaches the same registers. */
    struct exit_record e = {.reason = EXIT_NESTED_PAGE_FAULT};
    e.npf.gpa = VLAPIC_BASE_DEFAULT + 0x80;
    next_op = (struct mmio_op){.len = 3, .size = 4};
    vlapic_dev_mmio(&vcpus[1], &e);
    assert_int_equal(loaded, 0x30);
    assert_int_equal(vm.unbacked.reads + vm.unbacked.writes, 0);
}

/*
 * An IPI by ICR, NMI or fixed, to the other vCPU: delivered under the
 * target's lock, then, with no lock held, the sender lets the target's CPU
 * run (under QEMU's single-threaded TCG it would wait for this CPU's next
 * timer interrupt: issue 27's NMI storm).
 */
static void test_ipi_lets_the_target_run(void **state)
{
    (void)state;
    vcpus[1].lapic.svr |= 0x100;
    notified = let_run = 0;
    npf(0, VLAPIC_BASE_DEFAULT + 0x310, true, 4, 1u << 24); /* ICR high: APIC ID 1 */
    assert_int_equal(let_run, 0);
    npf(0, VLAPIC_BASE_DEFAULT + 0x300, true, 4, 0x4400); /* NMI, assert */
    assert_int_equal(vcpus[1].nmi.queued, 1);
    assert_int_equal(let_run, 1);
    assert_int_equal(notified_when_let_run, 1);           /* after the delivery */
    npf(0, VLAPIC_BASE_DEFAULT + 0x300, true, 4, 0x4040); /* fixed, vector 0x40 */
    assert_int_equal(vlapic_highest_pending(&vcpus[1].lapic), 0x40);
    assert_int_equal(let_run, 2);
    assert_int_equal(notified_when_let_run, 2);
    assert_int_equal(vcpus[0].nmi.queued, 0);
}

/* KVM_HC_SEND_IPI counts what the APICs accepted: KVM's __apic_accept_irq, mode by mode. */
static void test_send_reports_what_the_apic_accepted(void **state)
{
    (void)state;
    struct vcpu *t = &vcpus[1];
    struct vlapic_ipi fixed = {.vector = 0x40, .mode = APIC_DM_FIXED, .level = true};
    assert_false(vlapic_dev_send(&vcpus[0], t, &fixed)); /* software-disabled */
    t->lapic.svr |= 0x100;
    assert_true(vlapic_dev_send(&vcpus[0], t, &fixed));
    assert_true(vlapic_dev_send(&vcpus[0], t, &fixed)); /* already pending: accepted all the same */
    assert_int_equal(vlapic_highest_pending(&t->lapic), 0x40);
    struct vlapic_ipi lowest = {.vector = 0x41, .mode = APIC_DM_LOWEST, .level = true};
    assert_true(vlapic_dev_send(&vcpus[0], t, &lowest));
    struct vlapic_ipi nmi = {.mode = APIC_DM_NMI, .level = true};
    assert_true(vlapic_dev_send(&vcpus[0], t, &nmi));
    assert_int_equal(t->nmi.queued, 1);
    struct vlapic_ipi smi = {.mode = APIC_DM_SMI, .level = true};
    struct vlapic_ipi extint = {.mode = APIC_DM_EXTINT, .level = true};
    struct vlapic_ipi deassert = {.mode = APIC_DM_INIT, .level = false};
    assert_false(vlapic_dev_send(&vcpus[0], t, &smi));
    assert_false(vlapic_dev_send(&vcpus[0], t, &extint));
    assert_false(vlapic_dev_send(&vcpus[0], t, &deassert));
    assert_false(t->init_pending);
    struct vlapic_ipi init = {.mode = APIC_DM_INIT, .level = true};
    assert_true(vlapic_dev_send(&vcpus[0], t, &init));
}

static void test_ioapic_page(void **state)
{
    (void)state;
    npf(0, IOAPIC_BASE + IOAPIC_REGSEL, true, 4, 1); /* the version register */
    struct ioapic fresh;
    ioapic_reset(&fresh);
    fresh.regsel = 1;
    assert_int_equal(npf(1, IOAPIC_BASE + IOAPIC_WINDOW, false, 4, 0),
                     ioapic_read(&fresh, IOAPIC_WINDOW));
    assert_string_equal(decoded_for, "the I/O APIC");
    assert_int_equal(npf(1, IOAPIC_BASE + 0x800, false, 4, 0), ~0ull);
    assert_int_equal(vm.unbacked.reads + vm.unbacked.writes, 0);
    assert_int_equal(failed_accesses, 0);
}

/* ---------------------------------------------------------------- MSRs */

static void test_every_msr_range_finds_its_device(void **state)
{
    (void)state;
    for (unsigned k = 0; k < builtin_device_count; k++) {
        const struct device *dev = builtin_devices[k];
        for (unsigned r = 0; r < dev->msrs.count; r++) {
            uint32_t ends[] = {(uint32_t)dev->msrs.ranges[r].first,
                               (uint32_t)dev->msrs.ranges[r].last};
            for (unsigned i = 0; i < 2; i++) {
                for (unsigned v = 0; v < NVCPUS; v++) {
                    struct dev_entry *d = vm_devices_find_msr(&vm, &vcpus[v], ends[i]);
                    assert_non_null(d);
                    assert_ptr_equal(d->dev, dev);
                    assert_ptr_equal(d->vcpu, dev->per_vcpu ? &vcpus[v] : NULL);
                }
            }
        }
    }
    /* The owners pollux documents (vmm/exit/msr.h), by name. */
    static const struct {
        uint32_t index;
        const char *device; /* "vendor": the VMCB's or VMCS's; NULL: nobody's */
    } known[] = {
        {0x1b, "lapic"},           /* IA32_APIC_BASE */
        {0x6e0, "lapic"},          /* IA32_TSC_DEADLINE */
        {0x80b, "lapic"},          /* the x2APIC's EOI */
        {0xfe, "pc-msrs"},         /* MTRRCAP */
        {0x259, "pc-msrs"},        /* a fixed-range MTRR */
        {0x2ff, "pc-msrs"},        /* MTRR_DEF_TYPE */
        {0xc0010015u, "pc-msrs"},  /* AMD HWCR */
        {0xc0010004u, "pc-msrs"},  /* AMD PERF_CTR0 */
        {0x17a, "mce-msrs"},       /* IA32_MCG_STATUS */
        {0x4b564d01u, "kvm-msrs"}, /* MSR_KVM_SYSTEM_TIME_NEW */
        {0x10, "cpu-msrs"},        /* the TSC */
        {0x3a, "cpu-msrs"},        /* IA32_FEATURE_CONTROL */
        {0x48, "cpu-msrs"},        /* IA32_SPEC_CTRL: vmm/dev/guest_msrs.c's */
        {0xc1, "cpu-msrs"},        /* IA32_PMC0 */
        {0xc0000103u, "cpu-msrs"}, /* IA32_TSC_AUX */
        {0x174, "vendor"},         /* IA32_SYSENTER_CS */
        {0x277, "vendor"},         /* PAT */
        {0xc0000080u, "vendor"},   /* EFER */
        {0xc0000084u, "vendor"},   /* SFMASK */
        {0xc0000102u, "vendor"},   /* KERNEL_GS_BASE */
        {0x277 + 1, NULL},         /* past PAT */
        {0xc0000085u, NULL},       /* past SFMASK */
        {0x40000000u, NULL},       /* Hyper-V's: outside the map */
        {0xc0012000u, NULL},       /* past AMD's block */
    };
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
        unsigned owner = vm_devices_msr_owner(&vm.devices, known[k].index);
        struct dev_entry *d = vm_devices_find_msr(&vm, &vcpus[0], known[k].index);
        if (!known[k].device) {
            assert_int_equal(owner, 0);
            assert_null(d);
        } else if (!strcmp(known[k].device, "vendor")) {
            assert_int_equal(owner, DEV_MSR_VENDOR);
            assert_null(d);
        } else {
            assert_non_null(d);
            assert_string_equal(d->dev->name, known[k].device);
        }
    }
}

/* Every MSR the PC's and the machine-check rules answer is claimed by their device. */
static void test_rules_answer_only_their_devices_msrs(void **state)
{
    (void)state;
    static const uint32_t blocks[] = {0, 0xc0000000u, 0xc0010000u, 0x4b564000u};
    unsigned answered = 0;
    for (unsigned b = 0; b < 4; b++) {
        for (uint32_t i = blocks[b]; i < blocks[b] + DEV_MSR_BLOCK_SIZE; i++) {
            uint64_t value;
            const struct device *dev = 0;
            if (pc_msrs_read(&vcpus[0].pc_msrs, i, &value) != MSR_NOT_MINE)
                dev = &pc_msrs_device;
            else if (mce_read(&vcpus[0].mce, i, &value) != MSR_NOT_MINE)
                dev = &mce_msrs_device;
            if (!dev)
                continue;
            struct dev_entry *d = vm_devices_find_msr(&vm, &vcpus[0], i);
            assert_non_null(d);
            assert_ptr_equal(d->dev, dev);
            answered++;
        }
    }
    assert_true(answered > 60);
}

/*
 * RDMSR and WRMSR ask the MSR's one owner, and only it: the vendor only for
 * its own MSRs (with canonical addresses), nobody for an MSR no one claims
 * or one its device does not know (#GP).
 */
static void test_msr_exits_ask_one_owner(void **state)
{
    (void)state;
    struct vcpu *v = &vcpus[1];
    uint64_t value = 0;
    vendor_reads = vendor_writes = 0;
    assert_int_equal(msr_read(v, MSR_PAT, &value), 0);
    assert_int_equal(value, vendor_pat);
    assert_int_equal(vendor_reads, 1);
    /* Nobody's, or not known in a device's block: #GP, the vendor not asked. */
    static const uint32_t nobodys[] = {0x1234, 0x40000000u, 0x4b564d7fu, 0xc0010114u, 0x210};
    for (size_t i = 0; i < sizeof(nobodys) / sizeof(nobodys[0]); i++) {
        assert_int_equal(msr_read(v, nobodys[i], &value), -1);
        assert_int_equal(msr_write(v, nobodys[i], 0), -1);
    }
    /* A device's and pollux's own: the vendor not asked. */
    assert_int_equal(msr_read(v, MSR_MTRR_CAP, &value), 0);
    assert_int_equal(value, MTRR_CAP_VALUE);
    assert_int_equal(msr_read(v, 0x3a, &value), 0); /* IA32_FEATURE_CONTROL: locked */
    assert_int_equal(value, 1);
    assert_int_equal(msr_write(v, 0x3a, 1), -1);
    assert_int_equal(msr_read(v, 0xc1, &value), 0); /* IA32_PMC0 */
    assert_int_equal(value, 0);
    assert_int_equal(msr_write(v, 0xc1, 5), 0);
    assert_int_equal(msr_read(v, 0xc0010004u, &value), 0); /* AMD's PERF_CTR0 */
    assert_int_equal(msr_write(v, 0xc0010004u, 5), 0);
    assert_int_equal(vendor_reads, 1);
    assert_int_equal(vendor_writes, 0);
    /* The vendor's address MSRs take canonical values only. */
    assert_int_equal(msr_write(v, MSR_LSTAR, 0x0000800000000000ull), -1);
    assert_int_equal(vendor_writes, 0);
    assert_int_equal(msr_write(v, MSR_LSTAR, 0xffff800000000000ull), 0);
    assert_int_equal(vendor_writes, 1);
}

static uint64_t rd(unsigned v, uint32_t index)
{
    uint64_t value = 0;
    assert_int_equal(vm_devices_msr(&vcpus[v], index, false, &value), DEV_DONE);
    return value;
}

static enum dev_result wr(unsigned v, uint32_t index, uint64_t value)
{
    return vm_devices_msr(&vcpus[v], index, true, &value);
}

static void test_msrs_reach_the_vcpus_entry(void **state)
{
    (void)state;
    /* The local APIC: only vCPU 0 is the BSP. */
    assert_true(rd(0, MSR_IA32_APIC_BASE) & (1u << 8));
    assert_false(rd(1, MSR_IA32_APIC_BASE) & (1u << 8));
    /* The PC's MTRRs, per vCPU. */
    assert_int_equal(wr(1, MSR_MTRR_DEF_TYPE, 0xc06), DEV_DONE);
    assert_int_equal(rd(1, MSR_MTRR_DEF_TYPE), 0xc06);
    assert_int_equal(rd(0, MSR_MTRR_DEF_TYPE), MTRR_DEF_RESET);
    assert_int_equal(wr(0, MSR_MTRR_CAP, 0), DEV_FAULT);
    assert_int_equal(rd(0, MSR_MTRR_CAP), MTRR_CAP_VALUE);
    /* KVM's, per vCPU. */
    assert_int_equal(wr(1, MSR_KVM_POLL_CONTROL, 0), DEV_DONE);
    assert_int_equal(vcpus[1].poll_control, 0);
    assert_int_equal(rd(0, MSR_KVM_POLL_CONTROL), KVM_POLL_CONTROL_RESET);
    assert_int_equal(wr(0, MSR_KVM_POLL_CONTROL, 2), DEV_FAULT);
    /* In a claimed block, an MSR the rules do not know is not the device's (#GP). */
    uint64_t value;
    assert_int_equal(vm_devices_msr(&vcpus[0], 0x4b564d7fu, false, &value), DEV_NOT_MINE);
    assert_int_equal(vm_devices_msr(&vcpus[0], 0xc0010114u, false, &value), DEV_NOT_MINE);
    assert_int_equal(vm_devices_msr(&vcpus[0], 0x277, false, &value), DEV_NOT_MINE);
    /* INIT, through the device table: kvmclock off (KVM's kvmclock_reset), poll control kept. */
    assert_int_equal(wr(1, MSR_KVM_SYSTEM_TIME_NEW, 1ull << 40 | 1),
                     DEV_DONE); /* outside RAM: kept */
    assert_int_equal(rd(1, MSR_KVM_SYSTEM_TIME_NEW), 1ull << 40 | 1);
    vm_devices_init_vcpu(&vm, &vcpus[1]);
    assert_int_equal(rd(1, MSR_KVM_SYSTEM_TIME_NEW), 0);
    assert_int_equal(vcpus[1].poll_control, 0);
}

/*
 * A TSC deadline nearer than the timer advance fires as the MSR is written (KVM's
 * start_sw_tscdeadline): its vector is pending for the entry after the exit, which waits.
 */
static void test_tsc_deadline_within_the_advance_fires_at_once(void **state)
{
    (void)state;
    struct vcpu *v = &vcpus[0];
    v->lapic.svr |= 0x100;                /* software enabled */
    v->lapic.lvt_timer = 2u << 17 | 0x50; /* TSC-deadline mode, vector 0x50 */
    v->hw.tsc_offset = 0;
    uint64_t deadline = rdtsc() + 1000000000ull;
    v->timer_advance.cycles = 0;
    assert_int_equal(wr(0, MSR_TSC_DEADLINE, deadline), DEV_DONE);
    assert_int_equal(vlapic_highest_irr(&v->lapic), -1); /* armed, not fired */
    v->timer_advance.cycles = 2000000000ull;
    assert_int_equal(wr(0, MSR_TSC_DEADLINE, deadline), DEV_DONE);
    assert_int_equal(vlapic_highest_irr(&v->lapic), 0x50);
    assert_int_equal(vlapic_timer_due(&v->lapic, 0x50), deadline);
    assert_true(v->lapic.timer_due_advanced);
}

#define MOVED_BASE 0xfed40000u
#define EN         ((uint64_t)APIC_BASE_ENABLE)

/*
 * IA32_APIC_BASE moves one vCPU's xAPIC page: it answers there, the old page is nobody's
 * for that vCPU (the unbacked= policy) and still the other vCPU's APIC; INIT keeps it moved.
 */
static void test_xapic_page_moves_with_apic_base(void **state)
{
    (void)state;
    vm.cfg.unbacked = UNBACKED_IGNORE;
    assert_int_equal(wr(1, MSR_IA32_APIC_BASE, MOVED_BASE | EN), DEV_DONE);
    assert_int_equal(rd(1, MSR_IA32_APIC_BASE), MOVED_BASE | EN);
    assert_int_equal(npf(1, MOVED_BASE + 0x20, false, 4, 0), 1u << 24); /* its APIC ID */
    npf(1, MOVED_BASE + 0x80, true, 4, 0x30);                           /* TPR */
    assert_int_equal(vcpus[1].lapic.tpr, 0x30);
    assert_int_equal(vm.unbacked.reads + vm.unbacked.writes, 0);
    assert_int_equal(npf(1, VLAPIC_BASE_DEFAULT + 0x20, false, 4, 0), 0xffffffffu);
    assert_int_equal(vm.unbacked.reads, 1);
    assert_int_equal(npf(0, VLAPIC_BASE_DEFAULT + 0x80, false, 4, 0), 0); /* vCPU 0's TPR */
    assert_int_equal(npf(0, MOVED_BASE + 0x20, false, 4, 0), 0xffffffffu);
    assert_int_equal(vm.unbacked.reads, 2);
    /* INIT keeps the base where the guest put it. */
    vm_devices_init_vcpu(&vm, &vcpus[1]);
    assert_int_equal(rd(1, MSR_IA32_APIC_BASE), MOVED_BASE | EN);
    assert_int_equal(npf(1, MOVED_BASE + 0x20, false, 4, 0), 1u << 24);
    /* Onto the I/O APIC's page: the vCPU's own APIC comes first, as in KVM; the other's
     * vCPU still reaches the I/O APIC there. */
    assert_int_equal(wr(1, MSR_IA32_APIC_BASE, IOAPIC_BASE | EN), DEV_DONE);
    assert_int_equal(npf(1, IOAPIC_BASE + 0x20, false, 4, 0), 1u << 24);
    npf(0, IOAPIC_BASE + IOAPIC_REGSEL, true, 4, 0x10);
    assert_int_equal(vm_ioapic(&vm)->regsel, 0x10);
    /* Reserved bits and addresses past MAXPHYADDR fault, and the page stays. */
    assert_int_equal(wr(1, MSR_IA32_APIC_BASE, MOVED_BASE | EN | 0x200), DEV_FAULT);
    assert_int_equal(wr(1, MSR_IA32_APIC_BASE, 1ull << MAXPHYADDR | EN), DEV_FAULT);
    assert_int_equal(npf(1, IOAPIC_BASE + 0x20, false, 4, 0), 1u << 24);
    assert_string_equal(decoded_for, "the local APIC");
}

/* ---------------------------------------------------------------- unclaimed */

static void test_unclaimed_ports_are_unhandled_io(void **state)
{
    (void)state;
    assert_int_equal(in(0, 0x80, 1), 0xffffffffu);
    out(0, 0x80, 1, 0);
    assert_int_equal(in(0, 0xffff, 2), 0xffffffffu);
    /* A claimed port at a width its device does not take counts as unhandled too. */
    assert_int_equal(in(0, VUART_BASE + 7, 2), 0xffffffffu);
    out(0, FWCFG_PORT_SELECTOR, 1, 0);
    assert_int_equal(in(0, DEBUG_EXIT_PORT, 1), 0xffffffffu);
    assert_int_equal(vm.unhandled_io_reads, 4);
    assert_int_equal(vm.unhandled_io_writes, 2);
}

static void test_unclaimed_mmio_goes_to_the_policy(void **state)
{
    (void)state;
    vm.cfg.unbacked = UNBACKED_IGNORE;
    assert_int_equal(npf(0, 0xe0000000u, false, 4, 0), 0xffffffffu);
    npf(0, 0xe0000000u, true, 4, 0);
    assert_int_equal(vm.unbacked.reads, 1);
    assert_int_equal(vm.unbacked.writes, 1);
    assert_string_equal(decoded_for, "unbacked memory");
    vm.cfg.unbacked = UNBACKED_STOP;
    npf(0, 0xe0000000u, false, 4, 0);
    assert_int_equal(failed_accesses, 1);
    /* An instruction fetch from a device's page is never the device's. */
    struct exit_record e = {.reason = EXIT_NESTED_PAGE_FAULT};
    e.npf.gpa = VLAPIC_BASE_DEFAULT;
    e.npf.fetch = true;
    handle_npf(&vcpus[0], &e);
    assert_int_equal(failed_accesses, 2);
}

/* A VM without the PC platform has none of its devices: their addresses are nobody's. */
static void test_plain_vm_lacks_the_pc_devices(void **state)
{
    (void)state;
    assert_int_equal(in(0, 0xcf8, 4), 0xffffffffu);
    out(0, ACPI_RESET_PORT, 1, ACPI_RESET_VALUE);
    assert_int_equal(stops, 0);
    assert_int_equal(vm.unhandled_io_reads, 1);
    assert_int_equal(vm.unhandled_io_writes, 1);
    /* Every VM has the others. */
    assert_int_equal(npf(1, VLAPIC_BASE_DEFAULT + 0x20, false, 4, 0), 1u << 24);
    assert_non_null(vm_devices_find_port(&vm.devices, FWCFG_PORT_DATA));
}

/*
 * Every VM has an I/O APIC (issue 37: kvm-unit-tests' ioapic.flat stopped
 * with bad-access at its first write to it): a bundled guest's too.
 */
static void test_plain_vm_has_an_ioapic(void **state)
{
    test_ioapic_page(state);
    assert_int_equal(stops, 0);
}

/* ioapic=off: no window, the page is unbacked. */
static int setup_plain_no_ioapic(void **state)
{
    (void)state;
    make_vm_with(false, true, false);
    return 0;
}

static void test_ioapic_off(void **state)
{
    (void)state;
    vm.cfg.unbacked = UNBACKED_IGNORE;
    assert_int_equal(npf(0, IOAPIC_BASE + IOAPIC_WINDOW, false, 4, 0), 0xffffffffu);
    assert_int_equal(vm.unbacked.reads, 1);
    /* No I/O APIC: COM1's pin goes nowhere, and a level-triggered EOI has nothing to end. */
    assert_null(vm_ioapic(&vm));
    out(0, VUART_BASE + 4, 1, 0x08);
    out(0, VUART_BASE + 1, 1, 0x02);
    vm_devices_eoi(&vm, 0x40);
    assert_int_equal(stops + failed_accesses, 0);
}

/* ---------------------------------------------------------------- legacy_pic */

/* A Linux guest's VM (legacy_pic off): no 8254, no ELCR, the PIC masks only, LINT0 masked. */
static void test_linux_vm_has_no_pic(void **state)
{
    (void)state;
    assert_int_equal(vcpus[0].lapic.lvt_lint0, LVT_MASKED);
    assert_false(vlapic_accept_pic_intr(&vcpus[0].lapic));
    assert_string_equal(vm_devices_find_port(&vm.devices, 0x20)->dev->name, "pic-masks");
    assert_int_equal(in(0, PIT_PORT_CHANNEL0, 1), 0xffffffffu);
    out(0, PIT_PORT_MODE, 1, 0x34);
    assert_int_equal(in(0, PIT_PORT_B, 1), 0xffffffffu);
    assert_int_equal(in(0, PIC_ELCR_MASTER, 1), 0xffffffffu);
    assert_int_equal(vm.unhandled_io_reads, 3);
    assert_int_equal(vm.unhandled_io_writes, 1);
    /* The data port is the mask whatever the command port was told. */
    out(0, 0x20, 1, 0x11);
    out(0, 0x21, 1, 0x08);
    assert_int_equal(in(0, 0x21, 1), 0x08);
    /* COM1's interrupt reaches the I/O APIC's pin only. */
    out(0, VUART_BASE + 4, 1, 0x08);
    out(0, VUART_BASE + 1, 1, 0x02);
    assert_true(vm_ioapic(&vm)->lines >> VUART_IRQ & 1);
    assert_false(vm.extint);
    assert_int_equal(vm_devices_deadline(&vm.devices), 0);
}

/* A bundled guest's VM: vCPU 0's LINT0 is in ExtINT mode from power-on (and INIT), no other's. */
static void test_lint0_extint_on_vcpu0(void **state)
{
    (void)state;
    assert_int_equal(vcpus[0].lapic.lvt_lint0, 0x700);
    assert_true(vlapic_accept_pic_intr(&vcpus[0].lapic));
    assert_int_equal(vcpus[1].lapic.lvt_lint0, LVT_MASKED);
    vm_devices_init_vcpu(&vm, &vcpus[1]);
    assert_int_equal(vcpus[1].lapic.lvt_lint0, LVT_MASKED);
    vcpus[0].lapic.lvt_lint0 = LVT_MASKED;
    vm_devices_init_vcpu(&vm, &vcpus[0]);
    assert_int_equal(vcpus[0].lapic.lvt_lint0, 0x700);
    assert_string_equal(vm_devices_find_port(&vm.devices, 0x21)->dev->name, "pic");
    assert_string_equal(vm_devices_find_port(&vm.devices, PIT_PORT_B)->dev->name, "pit");
}

/* A BIOS's initialization: vectors 0x20 and 0x28, the slave on IRQ 2, then the masks. */
static void init_pics(unsigned v, uint8_t master_mask)
{
    static const uint16_t seq[][2] = {{0x20, 0x11}, {0x21, 0x20}, {0x21, 0x04}, {0x21, 0x01},
                                      {0xa0, 0x11}, {0xa1, 0x28}, {0xa1, 0x02}, {0xa1, 0x01}};
    for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
        out(v, seq[i][0], 1, seq[i][1]);
    out(v, 0x21, 1, master_mask);
}

/*
 * The PIT's channel 0, programmed from vCPU 1, gives vCPU 0's timer its
 * deadline; the edge raises IRQ 0, which reaches vCPU 0 alone; vCPU 0's
 * acknowledge takes the vector; a masked IRQ 0 waits in IRR.
 */
static void test_pic_and_pit_through_the_ports(void **state)
{
    (void)state;
    init_pics(1, 0xfe);
    out(1, PIT_PORT_MODE, 1, 0x34); /* channel 0, low then high, mode 2 */
    out(1, PIT_PORT_CHANNEL0, 1, 1193 & 0xff);
    out(1, PIT_PORT_CHANNEL0, 1, 1193 >> 8);
    uint64_t due = vm_devices_deadline(&vm.devices);
    assert_int_equal(due, vpit_irq_deadline(vm_devices_entry(&vm.devices, BUILTIN_PIT)->state));
    assert_int_not_equal(due, 0);
    assert_false(vm_devices_expire(&vm, due - 1));
    assert_false(vm.extint);
    assert_true(vm_devices_expire(&vm, due));
    assert_true(vm.extint);
    assert_true(vm_devices_deadline(&vm.devices) > due);
    assert_true(vcpu_extint_pending(&vcpus[0]));
    assert_false(vcpu_extint_pending(&vcpus[1]));
    assert_int_equal(vm_devices_intack(&vm), 0x20);
    assert_false(vm.extint);
    out(0, 0x20, 1, 0x0b); /* read the ISR */
    assert_int_equal(in(0, 0x20, 1), 0x01);
    out(0, 0x20, 1, 0x20); /* non-specific EOI */
    assert_int_equal(in(0, 0x20, 1), 0x00);
    /* Masked, the edge waits in IRR; unmasked, it asks. */
    out(0, 0x21, 1, 0xff);
    assert_false(vm_devices_expire(&vm, vm_devices_deadline(&vm.devices)));
    assert_false(vm.extint);
    out(0, 0x20, 1, 0x0a); /* read the IRR */
    assert_int_equal(in(1, 0x20, 1), 0x01);
    out(0, 0x21, 1, 0xfe);
    assert_true(vm.extint);
    /* LINT0 masked: the PIC asks, vCPU 0 does not hear it. */
    vcpus[0].lapic.lvt_lint0 |= LVT_MASKED;
    assert_false(vcpu_extint_pending(&vcpus[0]));
    /* The ELCR, and port 0x61's gate; byte accesses only. */
    out(0, PIC_ELCR_SLAVE, 1, 0xff);
    assert_int_equal(in(1, PIC_ELCR_SLAVE, 1), 0xde);
    out(0, PIT_PORT_B, 1, PORT_B_GATE2 | PORT_B_SPEAKER);
    assert_int_equal(in(0, PIT_PORT_B, 1) & 3, PORT_B_GATE2 | PORT_B_SPEAKER);
    assert_no_unhandled_io();
    assert_int_equal(in(0, PIT_PORT_CHANNEL0, 2), 0xffffffffu);
    assert_int_equal(in(0, 0x20, 2), 0xffffffffu);
    assert_int_equal(vm.unhandled_io_reads, 2);
    /* A control word stops channel 0: no deadline. */
    out(0, PIT_PORT_MODE, 1, 0x34);
    assert_int_equal(vm_devices_deadline(&vm.devices), 0);
}

/* COM1's interrupt is IRQ 4 too, as on a PC: edge, or level through the ELCR. */
static void test_com1_on_irq4(void **state)
{
    (void)state;
    init_pics(0, 0xef);
    out(0, VUART_BASE + 4, 1, 0x08); /* MCR OUT2 */
    out(0, VUART_BASE + 1, 1, 0x02); /* IER: THR empty, which it is */
    assert_true(vm.extint);
    assert_int_equal(vm_devices_intack(&vm), 0x24);
    out(0, 0x20, 1, 0x20);
    assert_false(vm.extint); /* the line is still high: an edge asks once */
    out(0, PIC_ELCR_MASTER, 1, 0x10);
    assert_true(vm.extint); /* level: it asks while the line is high */
    assert_int_equal(vm_devices_intack(&vm), 0x24);
    out(0, 0x20, 1, 0x20);
    assert_true(vm.extint);
    assert_int_equal(in(0, VUART_BASE + 2, 1), 0x02); /* IIR: THR empty, acknowledged */
    assert_false(vm.extint);
    assert_no_unhandled_io();
}

/* The PIC's and the PIT's counters, in the devices' statistics. */
static void test_legacy_stats(void **state)
{
    (void)state;
    char buf[1024];
    struct json j;
    /* Nothing counted yet: no objects (the VM's virtio devices have theirs). */
    json_begin(&j, buf, sizeof(buf));
    assert_true(vm_devices_stats(&vm, &j));
    json_end(&j);
    assert_null(strstr(buf, "\"pic\""));
    assert_null(strstr(buf, "\"pit\""));
    assert_non_null(strstr(buf, "{\"virtio-net\":"));
    init_pics(0, 0xfe);
    out(0, PIT_PORT_MODE, 1, 0x34);
    out(0, PIT_PORT_CHANNEL0, 1, 0);
    out(0, PIT_PORT_CHANNEL0, 1, 0);
    assert_true(vm_devices_expire(&vm, vm_devices_deadline(&vm.devices)));
    vm_devices_intack(&vm);
    vm_devices_intack(&vm); /* nothing left: spurious */
    json_begin(&j, buf, sizeof(buf));
    vm_devices_stats(&vm, &j);
    json_end(&j);
    assert_non_null(strstr(buf, "\"pic\":{\"raised\":1,\"acked\":1,\"spurious\":1}"));
    assert_non_null(strstr(buf, "\"pit\":{\"irqs\":1,\"coalesced\":0}"));
}

/* ---------------------------------------------------------------- overlapping claims */

static const struct dev_range com1_scratch[] = {{VUART_BASE + 7, VUART_BASE + 7}};
static const struct dev_range in_the_ioapic_page[] = {{IOAPIC_BASE + 0x800, IOAPIC_BASE + 0x1800}};
static const struct dev_range kvm_msr[] = {{0x4b564cffu, 0x4b564d00u}};

static const struct device port_thief = {.name = "thief", .ports = {com1_scratch, 1, 0, 0}};
static const struct device mmio_thief = {.name = "thief", .mmio = {in_the_ioapic_page, 1, 0, 0}};
static const struct device msr_thief = {.name = "thief", .msrs = {kvm_msr, 1, 0, 0}};
static const struct dev_range pat[] = {{MSR_PAT, MSR_PAT}}, tsc[] = {{0x10, 0x10}};
static const struct dev_range hyperv[] = {{0x40000000u, 0x40000000u}};
static const struct device pat_thief = {.name = "thief", .msrs = {pat, 1, 0, 0}};
static const struct device tsc_thief = {.name = "thief", .msrs = {tsc, 1, 0, 0}};
static const struct device hyperv_msr = {.name = "hyperv", .msrs = {hyperv, 1, 0, 0}};

static void assert_refused(const struct device *first, const struct device *second,
                           const char *what)
{
    const struct device *list[] = {first, second};
    memset(&vm.devices, 0, sizeof(vm.devices));
    char err[256] = "";
    assert_int_equal(vm_devices_create(&vm, list, 2, err, sizeof(err)), -1);
    /* vmm.c puts err in @vm_reject's reason: it names both devices. */
    assert_non_null(strstr(err, first->name));
    assert_non_null(strstr(err, second->name));
    assert_non_null(strstr(err, what));
}

static void test_overlapping_claims_are_refused(void **state)
{
    (void)state;
    assert_refused(&com1_device, &port_thief, "port 0x3ff");
    assert_refused(&port_thief, &com1_device, "port 0x3ff");
    assert_refused(&ioapic_device, &mmio_thief, "guest-physical");
    assert_refused(&mmio_thief, &ioapic_device, "guest-physical");
    assert_refused(&kvm_msrs_device, &msr_thief, "MSR");
    assert_refused(&msr_thief, &kvm_msrs_device, "MSR");
    assert_refused(&cpu_msrs_device, &tsc_thief, "MSR 0x10");
    /* The vendor's MSRs are claimed before any device's. */
    assert_refused(&pat_thief, &pat_thief, "devices vendor and thief both claim MSR 0x277");
    /* An MSR outside the map could be no one's. */
    assert_refused(&hyperv_msr, &hyperv_msr,
                   "device hyperv: MSR 0x40000000 is outside the MSR map");
    /* Neighbours that do not overlap are fine. */
    static const struct dev_range next_to_com1[] = {{VUART_BASE + 8, VUART_BASE + 8}};
    static const struct device neighbour = {.name = "neighbour", .ports = {next_to_com1, 1, 0, 0}};
    const struct device *list[] = {&com1_device, &neighbour};
    memset(&vm.devices, 0, sizeof(vm.devices));
    char err[256];
    assert_int_equal(vm_devices_create(&vm, list, 2, err, sizeof(err)), 0);
}

/* The built-in devices' claims overlap nowhere, in any kind of VM. */
static void test_builtin_devices_do_not_overlap(void **state)
{
    (void)state;
    unsigned n = 0;
    for (unsigned k = 0; k < builtin_device_count; k++)
        n += present(builtin_devices[k]);
    assert_true(vm.devices.count >= n);
}

/* disk=: virtio-blk's page is its transport's register file, started by the device table. */
static void test_virtio_blk_page(void **state)
{
    (void)state;
    const uint64_t page = VIRTIO_MMIO_BASE + VIRTIO_SLOT_BLK * VIRTIO_MMIO_SIZE;
    assert_ptr_equal(vm.virtio[VIRTIO_SLOT_BLK], &blk.transport);
    assert_int_equal(npf(1, page + VIRTIO_MMIO_MAGIC_VALUE, false, 4, 0), VIRTIO_MMIO_MAGIC);
    assert_int_equal(npf(0, page + VIRTIO_MMIO_DEVICE_ID, false, 4, 0), VIRTIO_ID_BLOCK);
    assert_int_equal(npf(0, page + VIRTIO_MMIO_CONFIG, false, 4, 0), 2); /* capacity */
    npf(0, page + VIRTIO_MMIO_STATUS, true, 4, VIRTIO_STATUS_ACKNOWLEDGE);
    assert_int_equal(npf(0, page + VIRTIO_MMIO_STATUS, false, 4, 0), VIRTIO_STATUS_ACKNOWLEDGE);
    vm_devices_reset_all(&vm);
    assert_int_equal(npf(0, page + VIRTIO_MMIO_STATUS, false, 4, 0), 0);
    assert_int_equal(blk.sectors, 2); /* a reset is the transport's: the disk stays */
    assert_int_equal(failed_accesses + stops, 0);
    /* Without disk=, the page is nobody's. */
    vm.cfg.disk[0] = '\0';
    vm.blk = NULL;
    vm.virtio[VIRTIO_SLOT_BLK] = NULL;
    memset(&vm.devices, 0, sizeof(vm.devices));
    char err[256];
    if (vm_devices_create(&vm, builtin_devices, builtin_device_count, err, sizeof(err)))
        fail_msg("%s", err);
    assert_null(vm_devices_find_mmio(&vm, &vcpus[0], page));
    assert_null(vm.virtio[VIRTIO_SLOT_BLK]);
}

/* ---------------------------------------------------------------- reset and statistics */

/*
 * Every device that has a reset hook, per-vCPU ones included, is reset at
 * creation and by vm_devices_reset_all; INIT runs a vCPU's own init hooks only.
 */
static unsigned resets[DEV_ENTRIES_MAX], inits[DEV_ENTRIES_MAX];
static struct device counted[20];

static void count_reset(struct dev_entry *d)
{
    resets[d - d->vm->devices.entries]++;
}

static void count_init(struct dev_entry *d)
{
    inits[d - d->vm->devices.entries]++;
}

static void test_reset_reaches_every_device_with_one(void **state)
{
    (void)state;
    const struct device *list[20];
    unsigned with_reset = 0, with_init = 0;
    assert_true(builtin_device_count <= 20);
    for (unsigned k = 0; k < builtin_device_count; k++) {
        counted[k] = *builtin_devices[k];
        if (counted[k].reset) {
            counted[k].reset = count_reset;
            with_reset++;
        }
        if (counted[k].init) {
            counted[k].init = count_init;
            with_init++;
        }
        list[k] = &counted[k];
    }
    assert_int_equal(with_reset, 14); /* all but debug-exit, acpi-pm and the trace marker */
    assert_int_equal(with_init, 2);   /* the local APIC and the KVM MSRs */
    memset(&vm.devices, 0, sizeof(vm.devices));
    memset(resets, 0, sizeof(resets));
    memset(inits, 0, sizeof(inits));
    char err[256];
    assert_int_equal(vm_devices_create(&vm, list, builtin_device_count, err, sizeof(err)), 0);
    /* Creation is power-on: every entry's reset, each vCPU's devices' too; no INIT. */
    unsigned per_vcpu = 0;
    for (unsigned i = 0; i < vm.devices.count; i++) {
        const struct dev_entry *d = &vm.devices.entries[i];
        assert_int_equal(resets[i], d->dev->reset ? 1 : 0);
        assert_int_equal(inits[i], 0);
        per_vcpu += d->vcpu && resets[i];
    }
    assert_int_equal(per_vcpu, 4 * NVCPUS); /* the local APIC, KVM's, the PC's and the MCE MSRs */
    memset(resets, 0, sizeof(resets));
    vm_devices_reset_all(&vm);
    for (unsigned i = 0; i < vm.devices.count; i++)
        assert_int_equal(resets[i], vm.devices.entries[i].dev->reset ? 1 : 0);
    memset(resets, 0, sizeof(resets));
    vm_devices_init_vcpu(&vm, &vcpus[1]);
    unsigned reached = 0;
    for (unsigned i = 0; i < vm.devices.count; i++) {
        const struct dev_entry *d = &vm.devices.entries[i];
        assert_int_equal(inits[i], d->vcpu == &vcpus[1] && d->dev->init ? 1 : 0);
        assert_int_equal(resets[i], 0);
        reached += inits[i];
    }
    assert_int_equal(reached, 2); /* vCPU 1's local APIC and its KVM MSRs */
}

/*
 * The run loop's hooks reach the devices that have them and no other: a
 * vCPU's load, put and TSC write its own per-vCPU entries, vCPU 0's timer the
 * devices whose deadline is due, its entry's acknowledge the INTA's device.
 */
static unsigned loads[DEV_ENTRIES_MAX], put_calls[DEV_ENTRIES_MAX], tsc_writes[DEV_ENTRIES_MAX];
static enum sched_run_result put_result;
static uint64_t expired_at;

static void count_load(struct dev_entry *d)
{
    loads[d - d->vm->devices.entries]++;
}

static void count_put(struct dev_entry *d, enum sched_run_result r)
{
    put_calls[d - d->vm->devices.entries]++;
    put_result = r;
}

static void count_tsc_write(struct dev_entry *d)
{
    tsc_writes[d - d->vm->devices.entries]++;
}

static bool note_expiry(struct dev_entry *d, uint64_t now)
{
    expired_at = now;
    dev_set_deadline(d, 0);
    return true;
}

static uint8_t inta(struct dev_entry *d)
{
    (void)d;
    return 0x42;
}

static void test_vcpu_hooks_reach_their_devices(void **state)
{
    (void)state;
    const struct device *list[20];
    unsigned with_load = 0;
    for (unsigned k = 0; k < builtin_device_count; k++) {
        counted[k] = *builtin_devices[k];
        if (counted[k].vcpu_load) {
            counted[k].vcpu_load = count_load;
            counted[k].vcpu_put = count_put;
            counted[k].tsc_written = count_tsc_write;
            with_load++;
        }
        if (counted[k].expire)
            counted[k].expire = note_expiry;
        if (counted[k].intack)
            counted[k].intack = inta;
        list[k] = &counted[k];
    }
    assert_int_equal(with_load, 1); /* the KVM MSRs' steal time */
    memset(&vm.devices, 0, sizeof(vm.devices));
    memset(loads, 0, sizeof(loads));
    memset(put_calls, 0, sizeof(put_calls));
    memset(tsc_writes, 0, sizeof(tsc_writes));
    char err[256];
    assert_int_equal(vm_devices_create(&vm, list, builtin_device_count, err, sizeof(err)), 0);
    vm_devices_vcpu_load(&vcpus[1]);
    vm_devices_vcpu_put(&vcpus[1], SCHED_RUN_PREEMPTED);
    vm_devices_tsc_written(&vcpus[1]);
    for (unsigned i = 0; i < vm.devices.count; i++) {
        const struct dev_entry *d = &vm.devices.entries[i];
        bool mine = d->vcpu == &vcpus[1] && d->dev->vcpu_load;
        assert_int_equal(loads[i], mine);
        assert_int_equal(put_calls[i], mine);
        assert_int_equal(tsc_writes[i], mine);
        if (mine)
            assert_string_equal(d->dev->name, "kvm-msrs");
    }
    assert_int_equal(put_result, SCHED_RUN_PREEMPTED);
    /* The PIT's deadline, as its expire hook keeps it; expired once due, and not before. */
    struct dev_entry *pit = vm_devices_find_port(&vm.devices, PIT_PORT_MODE);
    assert_string_equal(pit->dev->name, "pit");
    dev_set_deadline(pit, 1000);
    assert_int_equal(vm_devices_deadline(&vm.devices), 1000);
    assert_false(vm_devices_expire(&vm, 999));
    assert_int_equal(expired_at, 0);
    assert_true(vm_devices_expire(&vm, 1001));
    assert_int_equal(expired_at, 1001);
    assert_int_equal(vm_devices_deadline(&vm.devices), 0);
    assert_false(vm_devices_expire(&vm, 2000));
    assert_int_equal(vm_devices_intack(&vm), 0x42);
}

/* The real hooks: each device's state is back at power-on. */
static void test_reset_hooks_reset_the_state(void **state)
{
    (void)state;
    out(0, 0x21, 1, 0xff);
    out(0, 0xcf8, 4, 0x80000000u);
    out(0, SHUTDOWN_PORT, 1, 'S');
    out(0, FWCFG_PORT_SELECTOR, 2, 0x05);
    out(0, VUART_BASE + 7, 1, 0x77);
    npf(0, IOAPIC_BASE + IOAPIC_REGSEL, true, 4, 0x10);
    npf(1, VLAPIC_BASE_DEFAULT + 0x80, true, 4, 0x40);
    uint64_t apic_base = vcpus[1].lapic.apic_base, def_type = rd(1, MSR_MTRR_DEF_TYPE);
    assert_int_equal(wr(1, MSR_IA32_APIC_BASE, MOVED_BASE | EN), DEV_DONE);
    assert_int_equal(wr(1, MSR_KVM_POLL_CONTROL, 0), DEV_DONE);
    assert_int_equal(wr(1, MSR_MTRR_DEF_TYPE, 0x806), DEV_DONE);
    vm_devices_reset_all(&vm);
    assert_int_equal(in(0, 0x21, 1), 0);
    assert_int_equal(in(0, 0xcf8, 4), 0);
    assert_int_equal(in(0, FWCFG_PORT_DATA, 1), 'Q');
    assert_int_equal(in(0, VUART_BASE + 7, 1), 0);
    assert_int_equal(vm_ioapic(&vm)->regsel, 0);
    assert_int_equal(vcpus[1].lapic.tpr, 0);
    /* Power-on, unlike INIT, puts IA32_APIC_BASE back; poll control and the MTRRs too. */
    assert_int_equal(vcpus[1].lapic.apic_base, apic_base);
    assert_int_equal(rd(1, MSR_KVM_POLL_CONTROL), KVM_POLL_CONTROL_RESET);
    assert_int_equal(rd(1, MSR_MTRR_DEF_TYPE), def_type);
    const char *rest = "hutdown"; /* the 'S' before the reset is forgotten */
    for (unsigned i = 0; rest[i]; i++)
        out(0, SHUTDOWN_PORT, 1, (uint8_t)rest[i]);
    assert_int_equal(stops, 0);
}

/* A device's rows over its state: the VM-wide one's, its vCPU's for a per-vCPU one. */
static struct vcpu seven = {.hw.id = 7};

static void *vcpu_state(struct vm *m, struct vcpu *v)
{
    (void)m;
    return v ? v : &seven;
}

static bool never(const void *base)
{
    (void)base;
    return false;
}

static const struct stats_desc vm_rows[] = {
    STATS_ROW(vm, GAUGE, NONE, S_DEVICES, struct vcpu, hw.id, "7"),
};
static const struct stats_desc vcpu_rows[] = {
    STATS_ROW(vcpu, GAUGE, NONE, S_DEVICES, struct vcpu, hw.id, "its id"),
};
static const struct stats_desc silent_rows[] = {
    STATS_ROW(vcpu, GAUGE, NONE, S_DEVICES, struct vcpu, hw.id, "its id", .present = never),
};
static const struct stats_table vm_table = STATS_TABLE(vm_rows, 0),
                                vcpu_table = STATS_TABLE(vcpu_rows, 0),
                                silent_table = STATS_TABLE(silent_rows, 0);

/* Each device's object, a per-vCPU one's entries in one; rows of which none is present, none. */
static void test_stats_rows(void **state)
{
    (void)state;
    static const struct device vm_wide = {.name = "a", .state = vcpu_state, .stats = &vm_table};
    static const struct device per_vcpu = {
        .name = "b", .per_vcpu = true, .state = vcpu_state, .stats = &vcpu_table};
    static const struct device quiet = {.name = "c"};
    static const struct device silent = {.name = "d", .state = vcpu_state, .stats = &silent_table};
    const struct device *list[] = {&vm_wide, &silent, &quiet, &per_vcpu};
    memset(&vm.devices, 0, sizeof(vm.devices));
    char err[256], buf[256];
    assert_int_equal(vm_devices_create(&vm, list, 4, err, sizeof(err)), 0);
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    assert_true(vm_devices_stats(&vm, &j));
    assert_string_equal(buf, "{\"a\":{\"vm\":7},\"b\":{\"vcpu\":0,\"vcpu\":1}");
    memset(&vm.devices, 0, sizeof(vm.devices));
    assert_int_equal(vm_devices_create(&vm, &list[1], 2, err, sizeof(err)), 0);
    json_begin(&j, buf, sizeof(buf));
    assert_false(vm_devices_stats(&vm, &j));
    assert_string_equal(json_end(&j), "{}");
}

/*
 * net= (every VM here has it: make_vm): virtio-net's page is its
 * transport's register file, started by the device table, with the VM's
 * MAC in its configuration space; its @stats keys; the port leaves the
 * switch with the VM, and the page is nobody's without net=.
 */
static void test_virtio_net_page(void **state)
{
    (void)state;
    const uint64_t page = VIRTIO_MMIO_BASE + VIRTIO_SLOT_NET * VIRTIO_MMIO_SIZE;
    char err[256];
    assert_ptr_equal(vm.virtio[VIRTIO_SLOT_NET], &vm.net->transport);
    assert_int_equal(npf(1, page + VIRTIO_MMIO_MAGIC_VALUE, false, 4, 0), VIRTIO_MMIO_MAGIC);
    assert_int_equal(npf(0, page + VIRTIO_MMIO_DEVICE_ID, false, 4, 0), VIRTIO_ID_NET);
    assert_int_equal(npf(0, page + VIRTIO_MMIO_CONFIG, false, 4, 0), 0x584c5002); /* 02:50:4c:58 */
    assert_int_equal(npf(0, page + VIRTIO_MMIO_CONFIG + 4, false, 2, 0), 0x0300); /* 00:03 */
    assert_int_equal(npf(0, page + VIRTIO_MMIO_CONFIG + 6, false, 2, 0), VIRTIO_NET_S_LINK_UP);
    char mac[18];
    virtio_net_mac_text(vm.net->mac, mac);
    assert_string_equal(mac, "02:50:4c:58:00:03");
    char buf[1024];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    vm_devices_stats(&vm, &j);
    json_end(&j);
    assert_non_null(strstr(buf, "\"virtio-net\":{\"tx_packets\":0,\"tx_bytes\":0,\"tx_drops\":0,"
                                "\"rx_packets\":0,\"rx_bytes\":0,\"rx_drops\":0,"));
    assert_non_null(
        strstr(buf, "\"rx_held\":0,\"tx_lock_waits\":0,\"tx_lock_wait_cycles\":0,\"notifies\":0,"));
    assert_int_equal(failed_accesses + stops, 0);
    virtio_net_free(&vm);
    assert_null(vm.net);
    assert_null(vm.virtio[VIRTIO_SLOT_NET]);
    memset(&vm.devices, 0, sizeof(vm.devices));
    vm.cfg.net[0] = '\0';
    if (vm_devices_create(&vm, builtin_devices, builtin_device_count, err, sizeof(err)))
        fail_msg("%s", err);
    assert_null(vm_devices_find_mmio(&vm, &vcpus[0], page));
    /* A name no switch can have: the VM is refused, naming net=. */
    strcpy(vm.cfg.net, "");
    assert_int_equal(virtio_net_create(&vm, err, sizeof(err)), -1);
    assert_string_equal(err, "net=: a switch's name has 1 to 15 characters");
    assert_null(vm.net);
}

/* ---------------------------------------------------------------- virtio
 * (vmm/dev/virtio/virtio_vm.c) */

#define VIRTIO_TEST_SLOT 1
static _Alignas(4096) uint8_t virtio_ram[0x10000];
static struct virtio_mmio virtio_transport;
static unsigned virtio_notifies;

static void virtio_test_notify(struct virtio_mmio *t, unsigned queue)
{
    (void)t, (void)queue;
    virtio_notifies++;
}

static void virtio_test_reset(struct virtio_mmio *t)
{
    (void)t;
}

static const struct virtio_device_ops virtio_test_ops = {
    .name = "test",
    .device_id = VIRTIO_ID_BLOCK,
    .nqueues = 1,
    .notify = virtio_test_notify,
    .reset = virtio_test_reset,
};

static void *virtio_test_state(struct vm *v, struct vcpu *c)
{
    (void)v, (void)c;
    return &virtio_transport;
}

static void virtio_test_power_on(struct dev_entry *d)
{
    virtio_vm_init(d->state, d->vm, &virtio_test_ops, VIRTIO_TEST_SLOT);
}

static const struct dev_range virtio_test_page[] = {VIRTIO_VM_RANGE(VIRTIO_TEST_SLOT)};
static const struct device virtio_test_device = {
    .name = "virtio_test",
    .mmio = {virtio_test_page, 1, virtio_vm_mmio_read, virtio_vm_mmio_write},
    .state = virtio_test_state,
    .reset = virtio_test_power_on,
};

static bool nowhere(const struct vm *v)
{
    (void)v;
    return false;
}

static const struct device absent_device = {.name = "absent", .present = nowhere};

static void test_virtio_page_pin_and_warning(void **state)
{
    (void)state;
    const uint64_t base = VIRTIO_MMIO_BASE + VIRTIO_TEST_SLOT * VIRTIO_MMIO_SIZE;
    const unsigned pin = VIRTIO_GSI_FIRST + VIRTIO_TEST_SLOT;
    vm.hw.mem = virtio_ram;
    vm.hw.mem_size = vm.cfg.mem = sizeof(virtio_ram);
    memset(&vm.devices, 0, sizeof(vm.devices));
    /* The device and the I/O APIC its pin drives, in the I/O APIC's place (vm_ioapic). */
    const struct device *list[BUILTIN_DEVICE_COUNT];
    for (unsigned k = 0; k < BUILTIN_DEVICE_COUNT; k++)
        list[k] = &absent_device;
    list[0] = &virtio_test_device;
    list[BUILTIN_IOAPIC] = &ioapic_device;
    char err[256];
    assert_int_equal(vm_devices_create(&vm, list, BUILTIN_DEVICE_COUNT, err, sizeof(err)), 0);
    assert_ptr_equal(vm.virtio[VIRTIO_TEST_SLOT], &virtio_transport);
    assert_ptr_equal(virtio_transport.ram.base, virtio_ram);
    assert_int_equal(virtio_transport.ram.size, sizeof(virtio_ram));

    assert_int_equal(npf(0, base + VIRTIO_MMIO_MAGIC_VALUE, false, 4, 0), VIRTIO_MMIO_MAGIC);
    assert_int_equal(npf(0, base + VIRTIO_MMIO_DEVICE_ID, false, 4, 0), VIRTIO_ID_BLOCK);
    assert_int_equal(npf(0, base + VIRTIO_MMIO_DEVICE_ID, false, 2, 0), 0);
    npf(0, base + VIRTIO_MMIO_STATUS, true, 4, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    assert_int_equal(npf(1, base + VIRTIO_MMIO_STATUS, false, 4, 0),
                     VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);

    /* The pin, edge-triggered to vector 0x40 on vCPU 1, and that vCPU's APIC on. */
    ioapic_write(vm_ioapic(&vm), IOAPIC_REGSEL, 0x10 + 2 * pin, &(struct ioapic_msg){0});
    ioapic_write(vm_ioapic(&vm), IOAPIC_WINDOW, 0x40, &(struct ioapic_msg){0});
    ioapic_write(vm_ioapic(&vm), IOAPIC_REGSEL, 0x11 + 2 * pin, &(struct ioapic_msg){0});
    ioapic_write(vm_ioapic(&vm), IOAPIC_WINDOW, 1u << 24, &(struct ioapic_msg){0});
    vcpus[1].lapic.svr |= 0x100;

    /* A queue that breaks: DEVICE_NEEDS_RESET, the warning, and an edge on the pin. */
    struct virtio_queue *q = &virtio_transport.queues[0];
    spin_lock(&q->lock);
    virtio_mmio_fail(&virtio_transport, 0, VIRTQ_FAULT_LOOP);
    spin_unlock(&q->lock);
    assert_string_equal(last_event, "@warning {\"kind\":\"virtio\",\"vm\":\"test\",\"device\":"
                                    "\"test\",\"queue\":0,\"fault\":\"loop\"}");
    assert_int_equal(vlapic_highest_pending(&vcpus[1].lapic), 0x40);
    assert_false(vm_ioapic(&vm)->lines >> pin & 1); /* pulsed: down again */
    assert_true(npf(0, base + VIRTIO_MMIO_STATUS, false, 4, 0) & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    assert_int_equal(npf(0, base + VIRTIO_MMIO_INTERRUPT_STATUS, false, 4, 0),
                     VIRTIO_MMIO_INT_CONFIG);
    npf(0, base + VIRTIO_MMIO_QUEUE_NOTIFY, true, 4, 0);
    assert_int_equal(virtio_notifies, 0);

    char buf[256];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    stats_event_json(&j, &virtio_mmio_stats_table, &virtio_transport);
    assert_string_equal(json_end(&j),
                        "{\"notifies\":0,\"notifies_ignored\":1,\"interrupts\":1,\"faults\":1,"
                        "\"budget_stops\":0,\"deferred_passes\":0}");
    assert_int_equal(vm.unbacked.reads + vm.unbacked.writes, 0);
}

int main(void)
{
#define PC(t)        cmocka_unit_test_setup(t, setup_pc)
#define PLAIN(t)     cmocka_unit_test_setup(t, setup_plain)
#define PC_LEGACY(t) cmocka_unit_test_setup(t, setup_pc_legacy)
    const struct CMUnitTest tests[] = {
        PC(test_every_claimed_port_is_indexed),
        PC(test_com1),
        PC(test_debug_exit),
        PC(test_trace_marker),
        PC(test_shutdown_port),
        PC(test_fwcfg),
        PC(test_pic_masks),
        PC(test_pci_latch),
        PC(test_acpi_power),
        PC(test_every_mmio_range_finds_its_device),
        PC(test_virtio_net_page),
        PC(test_xapic_page),
        PC(test_xapic_page_moves_with_apic_base),
        PC(test_ipi_lets_the_target_run),
        PC(test_send_reports_what_the_apic_accepted),
        PC(test_ioapic_page),
        PC(test_virtio_blk_page),
        PC(test_every_msr_range_finds_its_device),
        PC(test_rules_answer_only_their_devices_msrs),
        PC(test_msr_exits_ask_one_owner),
        PC(test_msrs_reach_the_vcpus_entry),
        PC(test_tsc_deadline_within_the_advance_fires_at_once),
        PC(test_unclaimed_ports_are_unhandled_io),
        PC(test_unclaimed_mmio_goes_to_the_policy),
        PLAIN(test_plain_vm_lacks_the_pc_devices),
        PLAIN(test_plain_vm_has_an_ioapic),
        cmocka_unit_test_setup(test_ioapic_off, setup_plain_no_ioapic),
        PLAIN(test_builtin_devices_do_not_overlap),
        PC(test_builtin_devices_do_not_overlap),
        PC_LEGACY(test_builtin_devices_do_not_overlap),
        PLAIN(test_every_claimed_port_is_indexed),
        PC_LEGACY(test_every_claimed_port_is_indexed),
        PC(test_linux_vm_has_no_pic),
        PLAIN(test_lint0_extint_on_vcpu0),
        PLAIN(test_pic_and_pit_through_the_ports),
        PLAIN(test_com1_on_irq4),
        PLAIN(test_legacy_stats),
        PC(test_overlapping_claims_are_refused),
        PC(test_reset_reaches_every_device_with_one),
        PC(test_reset_hooks_reset_the_state),
        PLAIN(test_vcpu_hooks_reach_their_devices),
        PC(test_stats_rows),
        PC(test_virtio_page_pin_and_warning),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}

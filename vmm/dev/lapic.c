/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/vlapic_dev.h"

#include "arch/x86/cpu.h"
#include "vmm/exit/cpuid.h"
#include "sched/sched.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/vm_devices.h"

static uint64_t guest_tsc(struct vcpu *v)
{
    return rdtsc() + v->hw.tsc_offset;
}

/* Is `target` addressed by an IPI from `src`? */
static bool addressed(struct vcpu *src, struct vcpu *target, const struct vlapic_ipi *ipi)
{
    switch (ipi->shorthand) {
    case APIC_DEST_SELF:
        return target == src;
    case APIC_DEST_ALL:
        return true;
    case APIC_DEST_ALL_BUT_SELF:
        return target != src;
    default:
        return vlapic_match_dest(&target->lapic, ipi->dest, ipi->logical);
    }
}

/*
 * An IPI from src (NULL: a device's interrupt, through the I/O APIC) to t.
 * True if t's APIC accepted it, by KVM's __apic_accept_irq: a fixed one if
 * the APIC is enabled (even when the vector was already pending), an NMI, an
 * asserted INIT and a startup IPI always, SMI (no SMM here) and ExtINT never.
 */
static bool deliver(struct vcpu *src, struct vcpu *t, const struct vlapic_ipi *ipi)
{
    bool accepted = true;
    uint64_t flags = spin_lock_irqsave(&t->se.lock);
    switch (ipi->mode) {
    case APIC_DM_FIXED:
    case APIC_DM_LOWEST:
        accepted = vlapic_enabled(&t->lapic) && vlapic_sw_enabled(&t->lapic);
        if (vlapic_accept_trigger(&t->lapic, ipi->vector, ipi->trigger_level))
            vcpu_notify(t, src ? TRACE_WAKE_IPI : TRACE_WAKE_DEVICE, src);
        break;
    case APIC_DM_NMI:
        nmi_send(&t->nmi);
        vcpu_notify(t, TRACE_WAKE_NMI, src);
        break;
    case APIC_DM_INIT:
        /* INIT de-assert (level 0) is a no-op since the Pentium 4. */
        accepted = ipi->level;
        if (ipi->level && t->se.state != SCHED_PARKED && t->se.state != SCHED_STOPPED) {
            t->init_pending = true;
            vcpu_notify(t, TRACE_WAKE_INIT, src);
        } else if (ipi->level && t->se.state == SCHED_PARKED) {
            t->sipi_armed = true;
        }
        break;
    case APIC_DM_STARTUP:
        /* One startup IPI starts the AP; a second finds it running and is ignored. */
        if (t->vm->stopping)
            break;
        if (t->se.state == SCHED_PARKED && t->sipi_armed && !t->se.on_cpu) {
            t->sipi_armed = false;
            t->sipi_vector = ipi->vector;
            vcpu_trace_wakeup(t, TRACE_WAKE_SIPI, src);
            sched_set_state(&t->se, SCHED_RUNNABLE, rdtsc());
            sched_wake(&t->se);
        } else if ((t->init_pending || (t->se.state == SCHED_PARKED && t->sipi_armed)) &&
                   t->sipi_vector < 0 && t->hw.id != 0) {
            /* INIT not yet acted on, or the AP is still leaving its CPU: it restarts with this. */
            t->sipi_armed = false;
            t->sipi_vector = ipi->vector;
        }
        break;
    default: /* SMI and reserved modes: nothing to deliver */
        accepted = false;
        break;
    }
    spin_unlock_irqrestore(&t->se.lock, flags);
    return accepted;
}

static void send_ipi_from(struct vm *vm, struct vcpu *src, const struct vlapic_ipi *ipi)
{
    for (unsigned i = 0; i < vm->nvcpus; i++) {
        struct vcpu *t = vm->vcpus[i];
        if (!addressed(src, t, ipi))
            continue;
        /* Lowest priority: the first match stands for "the lowest" (all run at TPR 0). */
        deliver(src, t, ipi);
        if (ipi->mode == APIC_DM_LOWEST && ipi->shorthand == APIC_DEST_NONE)
            break;
    }
}

static void send_ipi(struct vcpu *src, const struct vlapic_ipi *ipi)
{
    send_ipi_from(src->vm, src, ipi);
    sched_let_others_run(); /* the targets' CPUs, under QEMU's one thread (sched.h) */
}

bool vlapic_dev_send(struct vcpu *src, struct vcpu *target, const struct vlapic_ipi *ipi)
{
    bool accepted = deliver(src, target, ipi);
    sched_let_others_run();
    return accepted;
}

/*
 * No sched_let_others_run here: a device interrupts from under its own
 * locks (a virtio queue's, and the switch's when a frame is delivered), and
 * under QEMU's one thread the PAUSE would run the other CPUs while they are
 * held: four Linux VMs on one switch then found it held at 68% of their
 * sends, 3.3 ms each (docs/virtio.md). The vCPU loop lets them run at its
 * next lock-free point.
 */
void vlapic_dev_interrupt(struct vm *vm, const struct vlapic_ipi *msg)
{
    send_ipi_from(vm, 0, msg);
}

/* EOIs of level-triggered vectors go on to the I/O APIC, outside the vCPU's lock. */
static void broadcast_eois(struct vcpu *v)
{
    for (;;) {
        uint64_t flags = spin_lock_irqsave(&v->se.lock);
        int vector = vlapic_take_eoi_broadcast(&v->lapic);
        spin_unlock_irqrestore(&v->se.lock, flags);
        if (vector < 0)
            return;
        vm_devices_eoi(v->vm, (uint8_t)vector);
    }
}

/*
 * The xAPIC page: only aligned 32-bit accesses reach registers, others are dropped, as on hardware.
 * The page is where the vCPU's IA32_APIC_BASE puts it (it has no claim in the table, so
 * a->offset says nothing): the register is the address's offset from there.
 */
static uint32_t page_offset(const struct vcpu *v, const struct dev_access *a)
{
    return (uint32_t)(a->addr - vlapic_base_address(&v->lapic));
}

static enum dev_result mmio_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    bool xapic = vlapic_enabled(&v->lapic) && !vlapic_x2apic(&v->lapic);
    uint32_t reg;
    a->value = ~0ull;
    if (xapic && a->size == 4)
        a->value = vlapic_mmio_read(&v->lapic, page_offset(v, a), &reg, guest_tsc(v)) ? reg : 0;
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
    broadcast_eois(v);
    return DEV_DONE;
}

static enum dev_result mmio_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d;
    struct vlapic_ipi ipi;
    bool send = false;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    bool xapic = vlapic_enabled(&v->lapic) && !vlapic_x2apic(&v->lapic);
    if (xapic && a->size == 4)
        vlapic_mmio_write(&v->lapic, page_offset(v, a), (uint32_t)a->value, guest_tsc(v), &ipi,
                          &send);
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
    if (send)
        send_ipi(v, &ipi);
    broadcast_eois(v);
    return DEV_DONE;
}

static enum dev_result msr_read(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    bool ok = vlapic_msr_read(&v->lapic, (uint32_t)a->addr, &a->value, guest_tsc(v));
    spin_unlock_irqrestore(&v->se.lock, flags);
    return ok ? DEV_DONE : DEV_FAULT;
}

static enum dev_result msr_write(struct dev_entry *d, struct vcpu *v, struct dev_access *a)
{
    (void)d;
    struct vlapic_ipi ipi;
    bool send = false;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    uint64_t now = guest_tsc(v);
    bool ok = vlapic_msr_write(&v->lapic, (uint32_t)a->addr, a->value, now, &ipi, &send);
    /*
     * A deadline nearer than the timer advance fires as it is written (KVM's
     * start_sw_tscdeadline): the entry after this exit injects it and waits.
     */
    if (a->addr == MSR_TSC_DEADLINE)
        vlapic_timer_expire_advanced(&v->lapic, now, v->timer_advance.cycles);
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
    if (send)
        send_ipi(v, &ipi);
    broadcast_eois(v);
    return ok ? DEV_DONE : DEV_FAULT;
}

/*
 * vCPU 0 of a legacy_pic=on VM starts with LINT0 in ExtINT mode, as KVM's
 * kvm_lapic_reset sets the BSP's and a PC's firmware leaves it: the 8259's
 * INT reaches it (vmm/dev/pic.c). Every other LINT0 starts masked.
 */
static void bsp_virtual_wire(struct vcpu *v)
{
    if (v->hw.id == 0 && v->vm->cfg.legacy_pic)
        vlapic_set_lint0_extint(&v->lapic);
}

/*
 * Power-on, for the guest's physical address bits: vCPU 0 is the BSP, and in
 * a legacy_pic=on VM its LINT0 passes the 8259's INT (ExtINT).
 */
static void reset(struct dev_entry *d)
{
    struct vcpu *v = d->vcpu;
    vlapic_reset(&v->lapic, v->hw.id, v->hw.id == 0, guest_features.maxphyaddr);
    bsp_virtual_wire(v);
}

/*
 * INIT (vmm/vcpu/vcpu.c, under the vCPU's lock) resets the registers but not
 * IA32_APIC_BASE (x2APIC stays on), nor pollux's counters of its timer.
 */
static void init(struct dev_entry *d)
{
    struct vcpu *v = d->vcpu;
    uint64_t base = v->lapic.apic_base;
    __typeof__(v->lapic.timer_stats) timer_stats = v->lapic.timer_stats;
    struct vlapic_ipi unused;
    bool none;
    /* INIT reaches APs only. */
    vlapic_reset(&v->lapic, v->hw.id, base & APIC_BASE_BSP, v->lapic.maxphyaddr);
    v->lapic.timer_stats = timer_stats;
    vlapic_msr_write(&v->lapic, MSR_IA32_APIC_BASE, base, 0, &unused, &none);
    bsp_virtual_wire(v);
}

static void *state(struct vm *vm, struct vcpu *v)
{
    (void)vm;
    return &v->lapic;
}

static const struct dev_range msrs[] = {
    {MSR_IA32_APIC_BASE, MSR_IA32_APIC_BASE},
    {MSR_TSC_DEADLINE, MSR_TSC_DEADLINE},
    {MSR_X2APIC_FIRST, MSR_X2APIC_LAST},
};

/*
 * Per vCPU. Its claims are the same in either mode: in x2APIC mode (or
 * disabled) the page reads all ones and drops writes, in xAPIC mode the
 * x2APIC MSRs fault (vmm/dev/vlapic.c decides), as before the device table.
 * The page claims no range: each vCPU's is at its own IA32_APIC_BASE, and
 * xapic_page_access (vmm/dev/vlapic_dev.h) finds it before the table.
 */
const struct device lapic_device = {
    .name = "lapic",
    .what = "the local APIC",
    .per_vcpu = true,
    .mmio = {0, 0, mmio_read, mmio_write},
    .msrs = {msrs, 3, msr_read, msr_write},
    .state = state,
    .reset = reset,
    .init = init,
};

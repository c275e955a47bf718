#include "vmm/vlapic_dev.h"

#include "arch/x86/cpu.h"
#include "vmm/guest_access.h"
#include "vmm/mmio.h"
#include "sched/sched.h"
#include "vmm/vcpu.h"
#include "vmm/vm_devices.h"

static uint64_t guest_tsc(struct vcpu *v)
{
    return rdtsc() + v->vm->tsc_offset;
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

static void deliver(struct vcpu *t, const struct vlapic_ipi *ipi)
{
    uint64_t flags = spin_lock_irqsave(&t->se.lock);
    switch (ipi->mode) {
    case APIC_DM_FIXED:
    case APIC_DM_LOWEST:
        if (vlapic_accept_trigger(&t->lapic, ipi->vector, ipi->trigger_level))
            vcpu_notify(t);
        break;
    case APIC_DM_NMI:
        nmi_send(&t->nmi);
        vcpu_notify(t);
        break;
    case APIC_DM_INIT:
        /* INIT de-assert (level 0) is a no-op since the Pentium 4. */
        if (ipi->level && t->se.state != SCHED_PARKED && t->se.state != SCHED_STOPPED) {
            t->init_pending = true;
            vcpu_notify(t);
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
            sched_set_state(&t->se, SCHED_RUNNABLE, rdtsc());
            sched_wake(&t->se);
        } else if ((t->init_pending || (t->se.state == SCHED_PARKED && t->sipi_armed)) &&
                   t->sipi_vector < 0 && t->id != 0) {
            /* INIT not yet acted on, or the AP is still leaving its CPU: it restarts with this. */
            t->sipi_armed = false;
            t->sipi_vector = ipi->vector;
        }
        break;
    default: /* SMI and reserved modes: nothing to deliver */
        break;
    }
    spin_unlock_irqrestore(&t->se.lock, flags);
}

static void send_ipi_from(struct vm *vm, struct vcpu *src, const struct vlapic_ipi *ipi)
{
    for (unsigned i = 0; i < vm->nvcpus; i++) {
        struct vcpu *t = vm->vcpus[i];
        if (!addressed(src, t, ipi))
            continue;
        /* Lowest priority: the first match stands for "the lowest" (all run at TPR 0). */
        deliver(t, ipi);
        if (ipi->mode == APIC_DM_LOWEST && ipi->shorthand == APIC_DEST_NONE)
            break;
    }
}

static void send_ipi(struct vcpu *src, const struct vlapic_ipi *ipi)
{
    send_ipi_from(src->vm, src, ipi);
}

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

void vlapic_dev_mmio(struct vcpu *v, const struct exit_record *e)
{
    struct mmio_op op;
    if (!mmio_fetch(v, e, "the local APIC", &op))
        return;
    uint32_t offset = (uint32_t)(e->npf.gpa - XAPIC_PAGE);
    struct vlapic_ipi ipi;
    bool send = false;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    bool xapic = vlapic_enabled(&v->lapic) && !vlapic_x2apic(&v->lapic);
    if (op.write) {
        /* Only aligned 32-bit accesses reach registers; others are dropped, as on hardware. */
        if (xapic && op.size == 4)
            vlapic_mmio_write(&v->lapic, offset, (uint32_t)mmio_store_data(v, &op), guest_tsc(v),
                              &ipi, &send);
    } else {
        uint64_t value = ~0ull;
        uint32_t reg;
        if (xapic && op.size == 4)
            value = vlapic_mmio_read(&v->lapic, offset, &reg, guest_tsc(v)) ? reg : 0;
        mmio_load_done(v, &op, value);
    }
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
    vcpu_advance(v, op.len);
    if (send)
        send_ipi(v, &ipi);
    broadcast_eois(v);
}

enum msr_result vlapic_dev_msr_read(struct vcpu *v, uint32_t index, uint64_t *value)
{
    if (!vlapic_dev_owns_msr(index))
        return MSR_NOT_MINE;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    bool ok = vlapic_msr_read(&v->lapic, index, value, guest_tsc(v));
    spin_unlock_irqrestore(&v->se.lock, flags);
    return ok ? MSR_DONE : MSR_FAULT;
}

enum msr_result vlapic_dev_msr_write(struct vcpu *v, uint32_t index, uint64_t value)
{
    if (!vlapic_dev_owns_msr(index))
        return MSR_NOT_MINE;
    struct vlapic_ipi ipi;
    bool send = false;
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    bool ok = vlapic_msr_write(&v->lapic, index, value, guest_tsc(v), &ipi, &send);
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
    if (send)
        send_ipi(v, &ipi);
    broadcast_eois(v);
    return ok ? MSR_DONE : MSR_FAULT;
}

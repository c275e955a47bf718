/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/kvm_pv_sched.h"

#include "arch/x86/tsc.h"
#include "sched/sched.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/dev/steal_time.h"
#include "vmm/dev/vlapic_dev.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/vm.h"

/* The ICR bits KVM_HC_SEND_IPI refuses (KVM's APIC_DEST_MASK, APIC_SHORT_MASK). */
#define ICR_LOGICAL   (1u << 11)
#define ICR_SHORTHAND (3u << 18)
/* Level and trigger mode (KVM's APIC_INT_ASSERT, APIC_INT_LEVELTRIG). */
#define ICR_ASSERT     (1u << 14)
#define ICR_LEVEL_TRIG (1u << 15)
/* KVM's APIC_DM_REMRD: KVM's own kick (kvm_pv_kick_cpu_op sends it), a reserved ICR mode. */
#define ICR_DM_REMRD 3u

/* The enabled record in guest RAM, or NULL (off, not offered, or outside RAM: never written). */
static uint8_t *steal_time_record_of(struct vcpu *v)
{
    uint64_t msr = v->pv.steal_time_msr;
    if (!(msr & KVM_MSR_ENABLED) || !kvm_pv_has(v, KVM_FEATURE_STEAL_TIME))
        return NULL;
    return vm_gpa_ptr(v->vm, steal_time_gpa(msr), KVM_STEAL_TIME_SIZE);
}

void kvm_pv_sched_in(struct vcpu *v)
{
    uint8_t *st = steal_time_record_of(v);
    if (!st)
        return;
    /* Charged to RUNNABLE when it was picked (sched_set_state): every wait up to this entry. */
    uint64_t runnable = v->se.cycles[SCHED_RUNNABLE];
    uint64_t steal_ns = tsc_to_ns(runnable - v->pv.runnable_cycles);
    v->pv.runnable_cycles = runnable;
    bool flush_protocol = kvm_pv_has(v, KVM_FEATURE_PV_TLB_FLUSH);
    uint8_t was = steal_time_record(st, steal_ns, flush_protocol);
    if (flush_protocol && (was & KVM_VCPU_FLUSH_TLB)) {
        virt->flush_guest_tlb(&v->hw);
        v->stats.pv_tlb_flushes++;
    }
}

/*
 * KVM 6.1 marks a vCPU preempted only when the exit before the switch left
 * it at an instruction boundary (a host interrupt; CVE-2022-39189's fix),
 * never in the middle of emulating one. pollux finishes every exit's
 * handling before the vCPU can leave its CPU (vcpu_run leaves only between
 * handle_exit and the next entry), so every leave is at a boundary and
 * every one is marked, those after a PAUSE-exit yield or a hypercall's
 * yield too: the guest then knows those vCPUs are not running.
 */
void kvm_pv_sched_out(struct vcpu *v, enum sched_run_result r)
{
    if (r != SCHED_RUN_PREEMPTED)
        return;
    uint8_t *st = steal_time_record_of(v);
    if (st)
        steal_time_set_preempted(st);
}

unsigned kvm_pv_ipi_each(uint64_t lo, uint64_t hi, uint32_t min, bool op_64_bit, unsigned nids,
                         bool (*fn)(unsigned id, void *ctx), void *ctx)
{
    unsigned cluster = op_64_bit ? 64 : 32, count = 0;
    const uint64_t words[2] = {lo, hi};
    for (unsigned w = 0; w < 2; w++) {
        /* KVM's u32 min: the high word's base wraps round past 2^32, a word's own IDs do not. */
        uint64_t base = (uint32_t)(min + w * cluster);
        for (unsigned bit = 0; bit < cluster; bit++)
            if (((words[w] >> bit) & 1) && base + bit < nids)
                count += fn((unsigned)(base + bit), ctx);
    }
    return count;
}

/* The vCPU with this APIC ID (the vCPU's index), or NULL for an ID the VM does not have. */
static struct vcpu *vcpu_by_apic_id(struct vm *vm, uint64_t id)
{
    if (id >= vm->nvcpus)
        return NULL;
    /* KVM's array_index_nospec: no speculative read past the array with a hostile ID. */
    uint64_t mask = 0 - (uint64_t)(id < vm->nvcpus);
    __asm__("" : "+r"(mask));
    return vm->vcpus[id & mask];
}

/* KVM's kvm_pv_kick_cpu_op: the sticky flag, then the usual notify (vmm/vcpu/vcpu_events.c). */
static void kick(struct vcpu *v, struct vcpu *t)
{
    uint64_t flags = spin_lock_irqsave(&t->se.lock);
    __atomic_store_n(&t->pv.pv_unhalted, true, __ATOMIC_SEQ_CST);
    vcpu_notify(t, TRACE_WAKE_KICK, v);
    spin_unlock_irqrestore(&t->se.lock, flags);
}

/*
 * KVM's kvm_sched_yield: run the target in the caller's place if it waits
 * for a CPU (sched_yield_to), counted as KVM counts it. Unlike KVM, pollux
 * also yields when nothing else waits for this CPU (KVM's
 * single_task_running() check): the target is taken from whichever queue
 * holds it.
 */
static void yield_to(struct vcpu *v, struct vcpu *t)
{
    v->stats.directed_yield_attempted++;
    if (!t || sched_yield_to(&v->se, &t->se) != YIELD_TO_TAKEN)
        return;
    v->stats.directed_yield_successful++;
    v->yield_taken = true;
}

struct send_ipi {
    struct vcpu *src;
    struct vlapic_ipi ipi;
};

/*
 * One named vCPU: absent from KVM's APIC map (and so ignored) while its
 * APIC is disabled in IA32_APIC_BASE; true if its APIC accepted the IPI.
 */
static bool send_one(unsigned id, void *ctx)
{
    struct send_ipi *s = ctx;
    struct vcpu *t = s->src->vm->vcpus[id];
    if (!vlapic_enabled(&t->lapic))
        return false;
    if ((unsigned)s->ipi.mode == ICR_DM_REMRD) {
        kick(s->src, t);
        return true;
    }
    return vlapic_dev_send(s->src, t, &s->ipi);
}

/*
 * KVM's kvm_pv_send_ipi: physical destinations only, any delivery mode, as
 * the named APICs accept it (KVM's __apic_accept_irq, vmm/dev/lapic.c); the
 * result is how many accepted. A fixed or lowest-priority IPI that is
 * level-triggered but not asserted, and an INIT likewise, reach nobody.
 */
static uint64_t send_ipi(struct vcpu *v, const struct kvm_hypercall *hc)
{
    uint64_t icr = hc->a[3];
    if (icr & (ICR_LOGICAL | ICR_SHORTHAND))
        return (uint64_t)-KVM_EINVAL;
    bool trigger_level = icr & ICR_LEVEL_TRIG, asserted = !trigger_level || (icr & ICR_ASSERT);
    enum apic_delivery mode = (enum apic_delivery)((icr >> 8) & 7);
    if ((mode == APIC_DM_FIXED || mode == APIC_DM_LOWEST) && !asserted)
        return 0;
    struct send_ipi s = {
        v,
        {.vector = (uint8_t)icr, .mode = mode, .level = asserted, .trigger_level = trigger_level}};
    unsigned n = kvm_pv_ipi_each(hc->a[0], hc->a[1], (uint32_t)hc->a[2], hc->op_64_bit,
                                 v->vm->nvcpus, send_one, &s);
    v->stats.pv_send_ipis += n;
    return n;
}

uint64_t kvm_pv_hypercall(struct vcpu *v, const struct kvm_hypercall *hc, unsigned cpl)
{
    if (cpl != 0)
        return (uint64_t)-KVM_EPERM;
    switch (hc->nr) {
    case KVM_HC_VAPIC_POLL_IRQ:
        /* Pending interrupts are delivered at the next VM entry anyway: nothing to poll. */
        return 0;
    case KVM_HC_KICK_CPU: {
        if (!kvm_pv_has(v, KVM_FEATURE_PV_UNHALT))
            break;
        struct vcpu *t = vcpu_by_apic_id(v->vm, hc->a[1]);
        if (t) {
            v->stats.pv_kicks++;
            kick(v, t);
        }
        yield_to(v, t); /* as KVM: the kicked vCPU is the one the lock goes to */
        return 0;
    }
    case KVM_HC_SCHED_YIELD:
        if (!kvm_pv_has(v, KVM_FEATURE_PV_SCHED_YIELD))
            break;
        yield_to(v, vcpu_by_apic_id(v->vm, hc->a[0]));
        return 0;
    case KVM_HC_SEND_IPI:
        if (!kvm_pv_has(v, KVM_FEATURE_PV_SEND_IPI))
            break;
        return send_ipi(v, hc);
    }
    return (uint64_t)-KVM_ENOSYS;
}

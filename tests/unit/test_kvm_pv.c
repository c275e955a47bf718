/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM's paravirtual interface as an unmodified guest sees it: hypercall
 * results, the feature leaf, kvmclock (its MSRs and the pvclock
 * arithmetic, against a reference computed in 128-bit integers), and the
 * scheduling interfaces (steal time and its preempted byte, the PV TLB
 * flush request, the kick, PV sched yield, PV send-IPI), with the
 * scheduler, the local APIC and the backend replaced by recorders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "lib/bytes.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/dev/kvm_pv_sched.h"
#include "vmm/dev/kvmclock.h"
#include "vmm/dev/steal_time.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/vm.h"

uint64_t tsc_khz = 2500000;

/* Recorders for what the scheduling interfaces ask of the rest of pollux. */
static unsigned flushes, notifies, yields, sends, refusing; /* refusing: bit i, vCPU i's APIC */
static struct vcpu *notified, *yield_target, *sent[8];
static struct vlapic_ipi last_sent;
static enum yield_to_result yield_answer;

static void record_flush(struct virt_vcpu *hw)
{
    (void)hw;
    flushes++;
}

static const struct virt_ops test_ops = {.flush_guest_tlb = record_flush};
const struct virt_ops *virt = &test_ops;

void vcpu_notify(struct vcpu *t, enum trace_wake source, const struct vcpu *from)
{
    assert_int_equal(source, TRACE_WAKE_KICK);
    assert_non_null(from);
    /* The flag is visible before the notify looks: it is the wake event. */
    assert_true(t->pv.pv_unhalted);
    notified = t;
    notifies++;
}

enum yield_to_result sched_yield_to(struct sched_entity *e, struct sched_entity *target)
{
    (void)e;
    yield_target = (struct vcpu *)((char *)target - offsetof(struct vcpu, se));
    yields++;
    return yield_answer;
}

bool vlapic_dev_send(struct vcpu *src, struct vcpu *target, const struct vlapic_ipi *ipi)
{
    (void)src;
    assert_int_equal(ipi->shorthand, APIC_DEST_NONE);
    assert_false(ipi->logical);
    assert_int_equal(ipi->vector, 0x42);
    last_sent = *ipi;
    if (sends < 8)
        sent[sends] = target;
    sends++;
    return !(refusing >> target->hw.id & 1);
}

static uint8_t guest_mem[1 << 16];
static struct vm pv_vm;
static struct vcpu pv_vcpus[4];

/*
 * A VM of four vCPUs offered `features` with pv_enforce=on (what is not
 * offered is refused), its RAM poisoned, the recorders cleared.
 */
static void pv_setup(uint32_t features)
{
    memset(&pv_vm, 0, sizeof(pv_vm));
    memset(pv_vcpus, 0, sizeof(pv_vcpus));
    memset(guest_mem, 0xee, sizeof(guest_mem));
    pv_vm.hw.mem = guest_mem;
    pv_vm.hw.mem_size = sizeof(guest_mem);
    pv_vm.cfg.mem = sizeof(guest_mem);
    pv_vm.kvm_features = features;
    pv_vm.cfg.policy.pv_enforce = true;
    pv_vm.nvcpus = 4;
    for (unsigned i = 0; i < 4; i++) {
        pv_vcpus[i].vm = &pv_vm;
        pv_vcpus[i].hw.id = i;
        pv_vcpus[i].lapic.apic_base = APIC_BASE_ENABLE;
        pv_vm.vcpus[i] = &pv_vcpus[i];
    }
    flushes = notifies = yields = sends = refusing = 0;
    notified = yield_target = NULL;
    yield_answer = YIELD_TO_TAKEN;
}

static uint64_t call(struct vcpu *v, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2,
                     uint64_t a3, unsigned cpl)
{
    struct kvm_hypercall hc = {nr, {a0, a1, a2, a3}, true};
    return kvm_pv_hypercall(v, &hc, cpl);
}

static void test_kvm_hypercalls_have_kvm_results(void **state)
{
    (void)state;
    pv_setup(0);
    struct vcpu *v = &pv_vcpus[0];
    assert_int_equal(call(v, KVM_HC_VAPIC_POLL_IRQ, 0, 0, 0, 0, 0), 0);
    assert_int_equal((int64_t)call(v, 0, 0, 0, 0, 0, 0), -1000);
    /* Not offered: as if pollux did not know them (KVM_CAP_ENFORCE_PV_FEATURE_CPUID). */
    assert_int_equal((int64_t)call(v, KVM_HC_KICK_CPU, 0, 1, 0, 0, 0), -1000);
    assert_int_equal((int64_t)call(v, KVM_HC_SCHED_YIELD, 1, 0, 0, 0, 0), -1000);
    assert_int_equal((int64_t)call(v, KVM_HC_SEND_IPI, 2, 0, 0, 0x42, 0), -1000);
    assert_int_equal(notifies + yields + sends, 0);
    assert_false(pv_vcpus[1].pv.pv_unhalted);
    assert_int_equal((int64_t)call(v, KVM_HC_VAPIC_POLL_IRQ, 0, 0, 0, 0, 3), -1);
    assert_int_equal((int64_t)call(v, 0, 0, 0, 0, 0, 3), -1);
    pv_setup(KVM_PV_SCHED_FEATURES);
    assert_int_equal((int64_t)call(v, KVM_HC_KICK_CPU, 0, 1, 0, 0, 3), -1);
    assert_int_equal(notifies + yields, 0);
}

/* pv_enforce=off (the default, as KVM): every call and MSR is served whatever CPUID offers. */
static void test_served_whatever_cpuid_offers_without_enforce(void **state)
{
    (void)state;
    pv_setup(0);
    pv_vm.cfg.policy.pv_enforce = false;
    struct vcpu *v = &pv_vcpus[0];
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 2, 0, 0, 0x42, 0), 1);
    assert_ptr_equal(sent[0], &pv_vcpus[1]);
    /* kvm-unit-tests' apic "PV IPIs testing": min 2^32 - 1 names nobody, and the result is 0. */
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 0xffffffffu, 0, 0xffffffffu, 0, 0), 0);
    assert_int_equal(sends, 1);
    assert_int_equal(call(v, KVM_HC_KICK_CPU, 0, 2, 0, 0, 0), 0);
    assert_true(pv_vcpus[2].pv.pv_unhalted);
    assert_int_equal(call(v, KVM_HC_SCHED_YIELD, 3, 0, 0, 0, 0), 0);
    assert_ptr_equal(yield_target, &pv_vcpus[3]);
    /* Steal time, and the PV TLB flush protocol with it (KVM's record_steal_time). */
    uint64_t value;
    uint8_t *st = guest_mem + 0x1000;
    memset(st, 0, KVM_STEAL_TIME_SIZE);
    assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, 0x1000 | 1), MSR_DONE);
    assert_int_equal(kvm_pv_msr_read(v, MSR_KVM_STEAL_TIME, &value), MSR_DONE);
    assert_int_equal(value, 0x1000 | 1);
    kvm_pv_sched_out(v, SCHED_RUN_PREEMPTED);
    st[STEAL_TIME_PREEMPTED] |= KVM_VCPU_FLUSH_TLB;
    kvm_pv_sched_in(v);
    assert_int_equal(flushes, 1);
}

static void test_feature_leaf_names_what_is_offered(void **state)
{
    (void)state;
    struct cpuid_regs r;
    assert_true(kvm_pv_cpuid(KVM_CPUID_FEATURES, 0, &r));
    assert_int_equal(r.eax, (1u << 3) | (1u << 12) | (1u << 24));
    assert_int_equal(r.ebx | r.ecx | r.edx, 0);
    assert_true(kvm_pv_cpuid(KVM_CPUID_FEATURES, KVM_PV_SCHED_FEATURES | 1u << 30, &r));
    /* Bits 5, 7, 9, 11, 13, and nothing beyond the set pv= chooses from. */
    assert_int_equal(r.eax, (1u << 3) | (1u << 12) | (1u << 24) | 0x2aa0);
    assert_true(kvm_pv_cpuid(KVM_CPUID_FEATURES, 1u << KVM_FEATURE_PV_UNHALT, &r));
    assert_int_equal(r.eax, (1u << 3) | (1u << 7) | (1u << 12) | (1u << 24));
}

/* The steal-time record on its own: the version dance and the sums. */
static void test_steal_time_record_versions_and_sums(void **state)
{
    (void)state;
    static uint8_t st[KVM_STEAL_TIME_SIZE] __attribute__((aligned(64)));
    memset(st, 0, sizeof(st));
    put_le32(st + STEAL_TIME_VERSION, 7); /* an odd leftover: bumped first */
    put_le64(st + STEAL_TIME_STEAL, 100);
    st[STEAL_TIME_PREEMPTED] = KVM_VCPU_PREEMPTED;
    assert_int_equal(steal_time_record(st, 50, false), KVM_VCPU_PREEMPTED);
    assert_int_equal(get_le32(st + STEAL_TIME_VERSION), 10);
    assert_int_equal(get_le64(st + STEAL_TIME_STEAL), 150);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], 0);
    assert_int_equal(steal_time_record(st, 0, true), 0);
    assert_int_equal(get_le32(st + STEAL_TIME_VERSION), 12);
    assert_int_equal(get_le64(st + STEAL_TIME_STEAL), 150);
    st[STEAL_TIME_PREEMPTED] = KVM_VCPU_PREEMPTED | KVM_VCPU_FLUSH_TLB;
    assert_int_equal(steal_time_record(st, 1, true), KVM_VCPU_PREEMPTED | KVM_VCPU_FLUSH_TLB);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], 0);
    assert_int_equal(get_le64(st + STEAL_TIME_STEAL), 151);
    /* The flags word and the padding are the guest's: untouched. */
    for (unsigned i = STEAL_TIME_PREEMPTED + 1; i < KVM_STEAL_TIME_SIZE; i++)
        assert_int_equal(st[i], 0);
    steal_time_set_preempted(st);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], KVM_VCPU_PREEMPTED);
    assert_int_equal(get_le32(st + STEAL_TIME_VERSION), 14); /* a plain store, no version */
}

static void test_steal_time_msr_values(void **state)
{
    (void)state;
    struct vcpu *v = &pv_vcpus[0];
    uint64_t value;
    pv_setup(0);
    /* Not offered: not this keeper's (the MSR path then raises #GP). */
    assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, 0x1000 | 1), MSR_NOT_MINE);
    assert_int_equal(kvm_pv_msr_read(v, MSR_KVM_STEAL_TIME, &value), MSR_NOT_MINE);
    assert_int_equal(guest_mem[0x1000 + STEAL_TIME_VERSION], 0xee);

    pv_setup(1u << KVM_FEATURE_STEAL_TIME);
    /* Bits 5:1 are reserved. */
    for (unsigned bit = 1; bit <= 5; bit++)
        assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, 0x1000 | 1 | 1u << bit),
                         MSR_FAULT);
    assert_int_equal(v->pv.steal_time_msr, 0);
    /* Outside guest RAM, or straddling its end: accepted, kept, and nothing written. */
    uint64_t outside[] = {sizeof(guest_mem), sizeof(guest_mem) - 0x40 + 0x40, 0xfee00000u,
                          1ull << 40};
    for (unsigned i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
        assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, outside[i] | 1), MSR_DONE);
        assert_int_equal(kvm_pv_msr_read(v, MSR_KVM_STEAL_TIME, &value), MSR_DONE);
        assert_int_equal(value, outside[i] | 1);
        v->se.cycles[SCHED_RUNNABLE] += 2500;
        kvm_pv_sched_in(v);
        kvm_pv_sched_out(v, SCHED_RUN_PREEMPTED);
    }
    for (size_t i = 0; i < sizeof(guest_mem); i++)
        if (guest_mem[i] != 0xee)
            fail_msg("byte 0x%zx of guest RAM written", i);

    /* Enabled in RAM: written at once, version even, preempted clear. */
    memset(guest_mem + 0x1000, 0, KVM_STEAL_TIME_SIZE);
    guest_mem[0x1000 + STEAL_TIME_PREEMPTED] = KVM_VCPU_PREEMPTED;
    assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, 0x1000 | 1), MSR_DONE);
    assert_int_equal(get_le32(guest_mem + 0x1000 + STEAL_TIME_VERSION), 2);
    assert_int_equal(guest_mem[0x1000 + STEAL_TIME_PREEMPTED], 0);
    assert_int_equal(get_le64(guest_mem + 0x1000), 0); /* steal counts from the enable */
    /* Disabled: nothing is written any more. */
    assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, 0x1000), MSR_DONE);
    v->se.cycles[SCHED_RUNNABLE] += 2500;
    kvm_pv_sched_out(v, SCHED_RUN_PREEMPTED);
    kvm_pv_sched_in(v);
    assert_int_equal(get_le32(guest_mem + 0x1000 + STEAL_TIME_VERSION), 2);
    assert_int_equal(guest_mem[0x1000 + STEAL_TIME_PREEMPTED], 0);
    /* INIT turns it off. */
    assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, 0x1000 | 1), MSR_DONE);
    kvm_pv_vcpu_reset(v);
    assert_int_equal(kvm_pv_msr_read(v, MSR_KVM_STEAL_TIME, &value), MSR_DONE);
    assert_int_equal(value, 0);
}

/* Steal grows by the RUNNABLE time between entries; preempted follows the run results. */
static void test_steal_and_preempted_across_runs(void **state)
{
    (void)state;
    pv_setup(1u << KVM_FEATURE_STEAL_TIME);
    struct vcpu *v = &pv_vcpus[2];
    uint8_t *st = guest_mem + 0x2040;
    memset(st, 0, KVM_STEAL_TIME_SIZE);
    v->se.cycles[SCHED_RUNNABLE] = 123456; /* before the enable: not steal */
    assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, 0x2040 | 1), MSR_DONE);
    uint32_t version = get_le32(st + STEAL_TIME_VERSION);

    /* It blocks in HLT: never marked. */
    kvm_pv_sched_out(v, SCHED_RUN_BLOCKED);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], 0);
    kvm_pv_sched_out(v, SCHED_RUN_PARKED);
    kvm_pv_sched_out(v, SCHED_RUN_STOPPED);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], 0);
    /* Woken, it waited 4 us in a queue (10000 cycles at 2.5 GHz), then runs. */
    v->se.cycles[SCHED_RUNNABLE] += 10000;
    kvm_pv_sched_in(v);
    assert_int_equal(get_le64(st), 4000);
    assert_int_equal(get_le32(st + STEAL_TIME_VERSION), version + 2);
    /* Preempted while runnable: marked, with no version change (a plain store). */
    kvm_pv_sched_out(v, SCHED_RUN_PREEMPTED);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], KVM_VCPU_PREEMPTED);
    assert_int_equal(get_le32(st + STEAL_TIME_VERSION), version + 2);
    /* Back after 1 ms of waiting: cleared, and the wait is steal. */
    v->se.cycles[SCHED_RUNNABLE] += 2500000;
    kvm_pv_sched_in(v);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], 0);
    assert_int_equal(get_le64(st), 1004000);
    assert_int_equal(get_le32(st + STEAL_TIME_VERSION), version + 4);
    /* Alone on its CPU, it was never runnable and waiting: no steal. */
    kvm_pv_sched_in(v);
    assert_int_equal(get_le64(st), 1004000);
    assert_int_equal(get_le32(st + STEAL_TIME_VERSION) % 2, 0);
    /* Without PV TLB flush a FLUSH_TLB bit asks nothing: no flush. */
    kvm_pv_sched_out(v, SCHED_RUN_PREEMPTED);
    st[STEAL_TIME_PREEMPTED] |= KVM_VCPU_FLUSH_TLB;
    kvm_pv_sched_in(v);
    assert_int_equal(flushes, 0);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], 0);
}

/* A sibling's KVM_VCPU_FLUSH_TLB in the preempted byte: one flush at the next entry. */
static void test_flush_request_is_exchanged_at_entry(void **state)
{
    (void)state;
    pv_setup(1u << KVM_FEATURE_STEAL_TIME | 1u << KVM_FEATURE_PV_TLB_FLUSH);
    struct vcpu *v = &pv_vcpus[1];
    uint8_t *st = guest_mem + 0x3000;
    memset(st, 0, KVM_STEAL_TIME_SIZE);
    assert_int_equal(kvm_pv_msr_write(v, MSR_KVM_STEAL_TIME, 0x3000 | 1), MSR_DONE);
    kvm_pv_sched_out(v, SCHED_RUN_PREEMPTED);
    kvm_pv_sched_in(v);
    assert_int_equal(flushes, 0); /* preempted alone asks no flush */
    kvm_pv_sched_out(v, SCHED_RUN_PREEMPTED);
    __atomic_fetch_or(st + STEAL_TIME_PREEMPTED, KVM_VCPU_FLUSH_TLB, __ATOMIC_SEQ_CST);
    kvm_pv_sched_in(v);
    assert_int_equal(flushes, 1);
    assert_int_equal(v->stats.pv_tlb_flushes, 1);
    assert_int_equal(st[STEAL_TIME_PREEMPTED], 0);
    kvm_pv_sched_in(v);
    assert_int_equal(flushes, 1); /* taken once */
}

static void test_kick_sets_the_flag_and_yields(void **state)
{
    (void)state;
    pv_setup(1u << KVM_FEATURE_PV_UNHALT);
    struct vcpu *v = &pv_vcpus[0];
    assert_int_equal(call(v, KVM_HC_KICK_CPU, 0, 3, 0, 0, 0), 0);
    assert_ptr_equal(notified, &pv_vcpus[3]);
    assert_true(pv_vcpus[3].pv.pv_unhalted);
    assert_false(pv_vcpus[1].pv.pv_unhalted);
    /* As KVM: the kicker then yields to the kicked vCPU, and leaves its CPU if it was taken. */
    assert_ptr_equal(yield_target, &pv_vcpus[3]);
    assert_true(v->yield_taken);
    assert_int_equal(v->stats.directed_yield_attempted, 1);
    assert_int_equal(v->stats.directed_yield_successful, 1);
    assert_int_equal(v->stats.pv_kicks, 1);
    /* APIC IDs the VM does not have: ignored, nothing read past the array. */
    v->yield_taken = false;
    uint64_t bad[] = {4, 63, 64, 0xff, 1ull << 32, UINT64_MAX};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(call(v, KVM_HC_KICK_CPU, 0, bad[i], 0, 0, 0), 0);
    assert_int_equal(notifies, 1);
    assert_int_equal(yields, 1);
    assert_false(v->yield_taken);
    assert_int_equal(v->stats.pv_kicks, 1);
    kvm_pv_vcpu_reset(&pv_vcpus[3]); /* INIT drops it */
    assert_false(pv_vcpus[3].pv.pv_unhalted);
}

static void test_sched_yield_to_each_kind_of_target(void **state)
{
    (void)state;
    pv_setup(1u << KVM_FEATURE_PV_SCHED_YIELD | 1u << KVM_FEATURE_STEAL_TIME);
    struct vcpu *v = &pv_vcpus[1];
    /* Waiting for a CPU: taken, and the caller must leave its CPU. */
    assert_int_equal(call(v, KVM_HC_SCHED_YIELD, 2, 0, 0, 0, 0), 0);
    assert_ptr_equal(yield_target, &pv_vcpus[2]);
    assert_true(v->yield_taken);
    assert_int_equal(v->stats.directed_yield_successful, 1);
    /* Every refusal: the call still returns 0 and the caller goes on. */
    static const enum yield_to_result refused[] = {
        YIELD_TO_SELF, YIELD_TO_RUNNING, YIELD_TO_NOT_RUNNABLE, YIELD_TO_PINNED, YIELD_TO_MISSED};
    for (unsigned i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        v->yield_taken = false;
        yield_answer = refused[i];
        assert_int_equal(call(v, KVM_HC_SCHED_YIELD, i % 4, 0, 0, 0, 0), 0);
        assert_false(v->yield_taken);
    }
    /* An APIC ID out of range: no target at all, counted as attempted like KVM. */
    assert_int_equal(call(v, KVM_HC_SCHED_YIELD, 4, 0, 0, 0, 0), 0);
    assert_int_equal(yields, 6);
    assert_int_equal(v->stats.directed_yield_attempted, 7);
    assert_int_equal(v->stats.directed_yield_successful, 1);
    assert_int_equal(notifies, 0);
}

static void test_send_ipi_reaches_its_bitmap(void **state)
{
    (void)state;
    pv_setup(1u << KVM_FEATURE_PV_SEND_IPI);
    struct vcpu *v = &pv_vcpus[0];
    /* IDs 1 and 3 from min 0; bit 5 (ID 5) and the high word are beyond the VM. */
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 0x2a, 1, 0, 0x42, 0), 2);
    assert_int_equal(sends, 2);
    assert_ptr_equal(sent[0], &pv_vcpus[1]);
    assert_ptr_equal(sent[1], &pv_vcpus[3]);
    assert_int_equal(v->stats.pv_send_ipis, 2);
    /* min shifts the bitmap: bit 0 is ID 2. */
    sends = 0;
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 3, 0, 2, 0x42, 0), 2);
    assert_ptr_equal(sent[0], &pv_vcpus[2]);
    assert_ptr_equal(sent[1], &pv_vcpus[3]);
    /* min is KVM's u32: a2's upper half is dropped, and the high word's base wraps past 2^32. */
    sends = 0;
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 1, 1, 0xffffffc0u, 0x42, 0), 1);
    assert_ptr_equal(sent[0], &pv_vcpus[0]);
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 1, 1, UINT64_MAX - 10, 0x42, 0), 0);
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 1, 0, 1ull << 32 | 2, 0x42, 0), 1);
    assert_ptr_equal(sent[1], &pv_vcpus[2]);
    assert_int_equal(sends, 2);
    /* A word's own IDs do not wrap: from 2^32 - 2, bits 2 and up are not IDs 0 and up. */
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 0xc, 0, 0xfffffffeu, 0x42, 0), 0);
    assert_int_equal(sends, 2);
}

/* The result is how many APICs accepted it; every delivery mode goes to them, as KVM. */
static void test_send_ipi_counts_what_was_accepted(void **state)
{
    (void)state;
    pv_setup(1u << KVM_FEATURE_PV_SEND_IPI);
    struct vcpu *v = &pv_vcpus[0];
    refusing = 1u << 2;
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 0xe, 0, 0, 0x42, 0), 2);
    assert_int_equal(sends, 3);
    assert_int_equal(v->stats.pv_send_ipis, 2);
    /* An APIC disabled in IA32_APIC_BASE is not in KVM's map: not even asked. */
    pv_vcpus[3].lapic.apic_base = 0;
    sends = 0;
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 0xa, 0, 0, 0x42, 0), 1);
    assert_int_equal(sends, 1);
    refusing = 0;
    /* Lowest priority, SMI, NMI, INIT, SIPI, ExtINT: the APIC decides (vmm/dev/lapic.c). */
    const unsigned modes[] = {1, 2, 4, 5, 6, 7};
    for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        sends = 0;
        assert_int_equal(call(v, KVM_HC_SEND_IPI, 2, 0, 0, 0x42 | modes[i] << 8, 0), 1);
        assert_int_equal(sends, 1);
        assert_int_equal(last_sent.mode, modes[i]);
        assert_true(last_sent.level); /* edge: asserted */
    }
    /* Level and trigger: a level-triggered IPI not asserted is refused by every APIC ... */
    sends = 0;
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 2, 0, 0, 0x42 | 1u << 15, 0), 0);
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 2, 0, 0, 0x42 | 1u << 8 | 1u << 15, 0), 0);
    assert_int_equal(sends, 0);
    /* ... an INIT de-assert reaches the APIC as one (which ignores it) ... */
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 2, 0, 0, 0x42 | 5u << 8 | 1u << 15, 0), 1);
    assert_false(last_sent.level);
    /* ... and an asserted one is level-triggered (TMR, EOI broadcast). */
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 2, 0, 0, 0x42 | 3u << 14, 0), 1);
    assert_true(last_sent.level && last_sent.trigger_level);
    /* Mode 3 (KVM's APIC_DM_REMRD) is KVM's kick: the target's flag, no APIC delivery. */
    sends = 0;
    assert_int_equal(call(v, KVM_HC_SEND_IPI, 4, 0, 0, 0x42 | 3u << 8, 0), 1);
    assert_int_equal(sends, 0);
    assert_ptr_equal(notified, &pv_vcpus[2]);
    assert_true(pv_vcpus[2].pv.pv_unhalted);
    /* Logical destinations and shorthands are refused. */
    assert_int_equal((int64_t)call(v, KVM_HC_SEND_IPI, 1, 0, 0, 0x42 | 1u << 11, 0), -22);
    assert_int_equal((int64_t)call(v, KVM_HC_SEND_IPI, 1, 0, 0, 0x42 | 3u << 18, 0), -22);
    assert_int_equal(sends, 0);
}

static unsigned ids_seen[130], ids_count;

static bool collect(unsigned id, void *ctx)
{
    (void)ctx;
    ids_seen[ids_count++] = id;
    return id % 2 == 0; /* what the even IDs accepted is what comes back */
}

/* The two words' clusters: 64 IDs each from 64-bit code, 32 otherwise. */
static void test_send_ipi_clusters(void **state)
{
    (void)state;
    ids_count = 0;
    assert_int_equal(kvm_pv_ipi_each(1ull << 63, 1, 0, true, 200, collect, NULL), 1);
    assert_int_equal(ids_count, 2);
    assert_int_equal(ids_seen[0], 63);
    assert_int_equal(ids_seen[1], 64);
    ids_count = 0;
    assert_int_equal(kvm_pv_ipi_each(1u << 31 | 1ull << 40, 1, 0, false, 200, collect, NULL), 1);
    assert_int_equal(ids_count, 2);
    assert_int_equal(ids_seen[0], 31);
    assert_int_equal(ids_seen[1], 32); /* bit 40 of a 32-bit word does not exist */
    ids_count = 0;
    assert_int_equal(kvm_pv_ipi_each(UINT64_MAX, UINT64_MAX, 10, true, 64, collect, NULL), 27);
    assert_int_equal(ids_count, 54);
    assert_int_equal(ids_seen[0], 10);
    assert_int_equal(ids_seen[53], 63);
}

/* What the guest computes, in exact arithmetic. */
static uint64_t reference_ns(uint64_t delta, uint64_t khz)
{
    return (uint64_t)((unsigned __int128)delta * 1000000 / khz);
}

static void test_pvclock_scale_matches_the_reference(void **state)
{
    (void)state;
    static const uint64_t rates[] = {1000,    100000,  999999,  1000000,
                                     1000001, 2500000, 3600123, 5000000};
    static const uint64_t deltas[] = {0, 1, 1000, 123456789, 1ull << 40, 3ull << 50};
    for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        struct pvclock_scale s = pvclock_scale_for(rates[i]);
        assert_true(s.mul >= 1u << 31);
        for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++) {
            uint64_t got = pvclock_scale_delta(deltas[j], s),
                     want = reference_ns(deltas[j], rates[i]);
            uint64_t diff = got > want ? got - want : want - got;
            /* mul is rounded down: at most one part in 2^31, plus a nanosecond of truncation. */
            assert_true(diff <= want / (1u << 30) + 1);
        }
    }
    /* 2.5 GHz: halve the ticks, then 0.8 of 2^32. */
    struct pvclock_scale s = pvclock_scale_for(2500000);
    assert_int_equal(s.shift, -1);
    assert_int_equal(s.mul, 3435973836u);
    /* 1 MHz: doubled ten times into (1e9, 2e9], to 1.024 GHz. */
    s = pvclock_scale_for(1000);
    assert_int_equal(s.shift, 10);
    assert_int_equal(s.mul, 4194304000u);
}

static void test_system_time_msr_writes_the_structure(void **state)
{
    (void)state;
    static struct vm vm;
    static struct vcpu v;
    vm.hw.mem = guest_mem;
    vm.cfg.mem = sizeof(guest_mem);
    vm.hw.mem_size = sizeof(guest_mem);
    v.vm = &vm;
    /* The VM's TSC offset at creation, and the vCPU's. */
    vm.tsc_sync.offset = v.hw.tsc_offset = -1000000ull;
    memset(guest_mem, 0xee, sizeof(guest_mem));

    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, 0x1000 | 1), MSR_DONE);
    uint8_t *p = guest_mem + 0x1000;
    assert_int_equal(get_le32(p), 2); /* even: complete */
    assert_int_equal(get_le64(p + 8), 0);
    assert_int_equal(get_le64(p + 16), 0);
    struct pvclock_scale s = pvclock_scale_for(tsc_khz);
    assert_int_equal(get_le32(p + 24), s.mul);
    assert_int_equal((int8_t)p[28], s.shift);
    assert_int_equal(p[29], PVCLOCK_TSC_STABLE_BIT);
    uint64_t value;
    assert_int_equal(kvm_pv_msr_read(&v, MSR_KVM_SYSTEM_TIME_NEW, &value), MSR_DONE);
    assert_int_equal(value, 0x1001);

    /* Enabled again: the version moves on by two. Disabled: memory is left alone. */
    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, 0x1000 | 1), MSR_DONE);
    assert_int_equal(get_le32(p), 4);
    /* The vCPU moved its TSC: its TSC at kvmclock 0 is that much further, still stable. */
    v.hw.tsc_offset += 0x123456789;
    kvmclock_update(&v);
    assert_int_equal(get_le32(p), 6);
    assert_int_equal(get_le64(p + 8), 0x123456789);
    assert_int_equal(get_le64(p + 16), 0);
    assert_int_equal(p[29], PVCLOCK_TSC_STABLE_BIT);
    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, 0x2000), MSR_DONE);
    assert_int_equal(guest_mem[0x2000], 0xee);
    /* Outside guest RAM: accepted and ignored, as KVM does. */
    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, sizeof(guest_mem) - 8 + 1),
                     MSR_DONE);

    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_WALL_CLOCK_NEW, 0x3000), MSR_DONE);
    assert_int_equal(get_le32(guest_mem + 0x3000), 2);
    assert_int_equal(get_le32(guest_mem + 0x3004), 0);
    assert_int_equal(get_le32(guest_mem + 0x3008), 0);
    assert_int_equal(kvm_pv_msr_read(&v, MSR_KVM_WALL_CLOCK_NEW, &value), MSR_DONE);
    assert_int_equal(value, 0x3000);

    /*
     * INIT turns kvmclock off, as KVM's kvm_vcpu_reset (kvmclock_reset): the
     * MSR reads 0 and the old structure is never written again; the wall
     * clock is the VM's and stays.
     */
    assert_int_equal(kvm_pv_msr_write(&v, MSR_KVM_SYSTEM_TIME_NEW, 0x1000 | 1), MSR_DONE);
    kvm_pv_vcpu_reset(&v);
    assert_int_equal(kvm_pv_msr_read(&v, MSR_KVM_SYSTEM_TIME_NEW, &value), MSR_DONE);
    assert_int_equal(value, 0);
    memset(p, 0xee, PVCLOCK_TIME_INFO_SIZE);
    v.hw.tsc_offset += 1000; /* a TSC write would rewrite an enabled structure */
    kvmclock_update(&v);
    assert_int_equal(p[0], 0xee);
    assert_int_equal(kvm_pv_msr_read(&v, MSR_KVM_WALL_CLOCK_NEW, &value), MSR_DONE);
    assert_int_equal(value, 0x3000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kvm_hypercalls_have_kvm_results),
        cmocka_unit_test(test_served_whatever_cpuid_offers_without_enforce),
        cmocka_unit_test(test_feature_leaf_names_what_is_offered),
        cmocka_unit_test(test_steal_time_record_versions_and_sums),
        cmocka_unit_test(test_steal_time_msr_values),
        cmocka_unit_test(test_steal_and_preempted_across_runs),
        cmocka_unit_test(test_flush_request_is_exchanged_at_entry),
        cmocka_unit_test(test_kick_sets_the_flag_and_yields),
        cmocka_unit_test(test_sched_yield_to_each_kind_of_target),
        cmocka_unit_test(test_send_ipi_reaches_its_bitmap),
        cmocka_unit_test(test_send_ipi_counts_what_was_accepted),
        cmocka_unit_test(test_send_ipi_clusters),
        cmocka_unit_test(test_pvclock_scale_matches_the_reference),
        cmocka_unit_test(test_system_time_msr_writes_the_structure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

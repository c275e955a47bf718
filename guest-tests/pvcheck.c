/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A guest that holds pollux to KVM's PV scheduling interfaces as a guest can
 * see them (docs/hypercalls.md, issue 23):
 *   - CPUID 0x40000101 offers exactly the pv= set the argument names
 *     ("all", the default, or "none");
 *   - steal time: each vCPU enables its record; bits 5:1 of the MSR #GP; an
 *     address outside RAM is accepted and nothing is written (a canary at
 *     its low 32 bits stays intact); with the enable bit clear nothing is
 *     written; a vCPU never sees its own version odd; steal grows for the
 *     two vCPUs that share a host CPU and not for the one alone on its own;
 *   - the preempted byte: a vCPU that runs always finds its own clear; the
 *     BSP, on its own CPU, sees a sibling's byte set while its counter
 *     stands still, and clear whenever it sees the counter move on both
 *     sides of the read (where the emulator runs CPUs at once); a PV TLB
 *     flush request (bit 1) set in a preempted sibling's byte is consumed
 *     when it runs;
 *   - KVM_HC_SCHED_YIELD towards the sibling waiting for the caller's CPU
 *     runs it before the caller's next instruction;
 *   - KVM_HC_KICK_CPU wakes a vCPU halted with IF=0, a fixed IPI does not
 *     (it stays pending until STI), an out-of-range APIC ID wakes nothing,
 *     a kick ends only one halt, and one that comes first ends the next;
 *   - KVM_HC_SEND_IPI reaches exactly the vCPUs of its bitmap, returns how
 *     many accepted, ignores IDs the VM lacks (a word's IDs do not wrap past
 *     2^32, the high word's base does: KVM's u32 min), delivers NMIs and
 *     lowest-priority IPIs, accepts no SMI and no level-triggered IPI that
 *     is not asserted, and refuses a logical destination or a shorthand
 *     with -KVM_EINVAL.
 * With "none" (pv=none) CPUID offers nothing and, as KVM serves them
 * whatever CPUID says, the MSR and the hypercalls still work; with
 * "enforced" (pv=none:pv_enforce=on, KVM_CAP_ENFORCE_PV_FEATURE_CPUID) the
 * MSR #GPs and the hypercalls return -KVM_ENOSYS. "all" needs three vCPUs
 * laid out vcpus=3:pin=0,1,1 with nothing else on those CPUs: the BSP alone
 * on one host CPU, vCPUs 1 and 2 sharing another. Each check prints
 * "check <name>: ok" or "check <name>: FAIL ..."; "pv stats: ..." gives
 * what the boot test compares with the vCPUs' @stats; the exit code is the
 * number of failures.
 */
#include <stddef.h>

#include "guest-tests/runtime/check.h"
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/fault.h"
#include "guest-tests/runtime/kvm.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define VECTOR_TIMER 0x40
#define VECTOR_GO    0x41 /* wakes an AP to look at the phase */
#define VECTOR_FIXED 0x42 /* the maskable IPI that must not end a halt with IF=0 */
#define VECTOR_PV    0x43 /* what KVM_HC_SEND_IPI delivers */

#define NVCPUS  3
#define BSP     0
#define TARGET  1 /* shares its host CPU with PARTNER */
#define PARTNER 2

#define KVM_ALWAYS                                                                                 \
    ((1u << KVM_FEATURE_CLOCKSOURCE2) | (1u << KVM_FEATURE_POLL_CONTROL) |                         \
     (1u << KVM_FEATURE_CLOCKSOURCE_STABLE_BIT))
#define KVM_PV_ALL                                                                                 \
    ((1u << KVM_FEATURE_STEAL_TIME) | (1u << KVM_FEATURE_PV_UNHALT) |                              \
     (1u << KVM_FEATURE_PV_TLB_FLUSH) | (1u << KVM_FEATURE_PV_SEND_IPI) |                          \
     (1u << KVM_FEATURE_PV_SCHED_YIELD))

#define ICR_DM_LOWEST  (1u << 8)
#define ICR_DM_NMI     (4u << 8)
#define ICR_LOGICAL    (1u << 11)
#define ICR_SELF       (1u << 18)
#define ICR_DM_SMI     (2u << 8)
#define ICR_LEVEL_TRIG (1u << 15)
#define OUT_OF_RAM_BIT 40 /* 1 TiB: far above any bundled guest's RAM */

/* The overcommitted phase: long against the 4 ms slices, so each sibling waits about half of it. */
#define SPIN_MS 200
/*
 * A sibling seen running on both sides of a read of its byte within this
 * window ran across the read: it cannot have left and come back within it,
 * since it leaves for its partner's whole slice.
 */
#define SAMPLE_WINDOW_US 50
#define YIELDS           5
#define HALT_SETTLE_MS   20  /* time for a wake-up that must not come */
#define WAKE_TIMEOUT_MS  500 /* time for one that must */

/* ------------------------------------------------------------ shared state */

static volatile struct kvm_steal_time steal_time[NVCPUS];
/* Where an out-of-RAM record's address points once truncated to 32 bits: must stay intact. */
static volatile uint8_t canary[64] __attribute__((aligned(64)));

enum phase { PHASE_NONE, PHASE_ENABLE, PHASE_SPIN, PHASE_YIELD, PHASE_KICK, PHASE_DONE };
static volatile uint32_t phase, acked[NVCPUS];

/* Interrupts each vCPU took, by vector. */
static volatile uint32_t pv_ipis[NVCPUS], fixed_ipis[NVCPUS], nmis[NVCPUS], timer_ticks;

/* What each AP found on its own record. */
static volatile uint32_t enable_ok[NVCPUS], own_reads[NVCPUS], own_odd[NVCPUS], own_flagged[NVCPUS];
/* Each AP's progress while it spins. */
static volatile uint32_t counter[NVCPUS];
static volatile uint32_t spin_stop, yield_done;
static volatile uint32_t yield_result[YIELDS], yield_moved[YIELDS], yield_seen_preempted[YIELDS];

/* The kick protocol between the BSP and TARGET. */
enum kick_state {
    KICK_IDLE,
    KICK_HALTED,       /* first halt, IF=0 */
    KICK_WOKEN,        /* left it */
    KICK_HALTED_AGAIN, /* second halt: the first kick must not end it */
    KICK_WAIT_EARLY,   /* left it; spinning until the BSP has kicked */
    KICK_WOKEN_EARLY   /* the halt after that kick ended at once */
};
static volatile uint32_t kick_state, kicked_early, nmi_rescues;

__attribute__((interrupt)) static void go_handler(struct interrupt_frame *f)
{
    (void)f;
    lapic_eoi();
}

__attribute__((interrupt)) static void fixed_handler(struct interrupt_frame *f)
{
    (void)f;
    fixed_ipis[this_cpu_index()]++;
    lapic_eoi();
}

__attribute__((interrupt)) static void pv_handler(struct interrupt_frame *f)
{
    (void)f;
    pv_ipis[this_cpu_index()]++;
    lapic_eoi();
}

__attribute__((interrupt)) static void nmi_handler(struct interrupt_frame *f)
{
    (void)f;
    nmis[this_cpu_index()]++;
}

__attribute__((interrupt)) static void timer_handler(struct interrupt_frame *f)
{
    (void)f;
    timer_ticks++;
    lapic_eoi();
}

/* ------------------------------------------------------------ helpers */

static void compiler_barrier(void)
{
    __asm__ volatile("" ::: "memory");
}

/* A spin without PAUSE, so that spin detection never moves anything. */
static bool wait_at_least(volatile uint32_t *v, uint32_t want, uint32_t ms)
{
    bool reached = false;
    __asm__ volatile("sti");
    for (uint64_t end = rdtsc() + us_to_tsc((uint64_t)ms * 1000); !reached && rdtsc() < end;) {
        reached = *v >= want;
        compiler_barrier();
    }
    __asm__ volatile("cli");
    return reached;
}

/* Interrupts on for a while: whatever was sent to the BSP arrives. */
static void settle_ms(uint32_t ms)
{
    __asm__ volatile("sti");
    delay_us(ms * 1000);
    __asm__ volatile("cli");
}

/* Halt until the BSP's timer fires: it leaves its CPU and comes back, which writes its record. */
static void sleep_ms(uint32_t ms)
{
    uint32_t ticks = timer_ticks;
    lapic_timer_start(LAPIC_TIMER_ONESHOT, VECTOR_TIMER, apic_timer_khz() * ms, 1);
    while (timer_ticks == ticks)
        wait_for_interrupt();
}

/* The record's steal as a reader on another vCPU must take it: version even and unchanged. */
static bool read_steal(uint32_t i, uint64_t *steal)
{
    for (int tries = 0; tries < 100000; tries++) {
        uint32_t v1 = steal_time[i].version;
        compiler_barrier();
        uint64_t value = steal_time[i].steal; /* two loads in 32-bit code */
        compiler_barrier();
        if (!(v1 & 1) && steal_time[i].version == v1) {
            *steal = value;
            return true;
        }
    }
    return false;
}

static uint64_t record_msr(uint32_t i)
{
    return (uint32_t)(uintptr_t)&steal_time[i] | KVM_MSR_ENABLED;
}

/* Start a phase on the APs and wait until both have finished it. */
static bool run_phase(enum phase p, uint32_t ms)
{
    __atomic_store_n(&phase, p, __ATOMIC_RELEASE);
    send_ipi(cpu_apic_id(TARGET), VECTOR_GO);
    send_ipi(cpu_apic_id(PARTNER), VECTOR_GO);
    return wait_at_least(&acked[TARGET], p, ms) && wait_at_least(&acked[PARTNER], p, ms);
}

/* ------------------------------------------------------------ the APs */

/* Enable this vCPU's record: the host writes it at once, version even and not preempted. */
static void enable_own_record(uint32_t i)
{
    wrmsr(MSR_KVM_STEAL_TIME, record_msr(i));
    enable_ok[i] = rdmsr(MSR_KVM_STEAL_TIME) == record_msr(i) && steal_time[i].version != 0 &&
                   !(steal_time[i].version & 1) && steal_time[i].preempted == 0;
}

/*
 * Count until *stop, with interrupts on (Bochs SVM preempts a guest only then
 * or at PAUSE), looking at its own record now and then: the host writes it
 * only while this vCPU is not running, so the version is even and the byte
 * clear whenever it looks.
 */
static void spin_until(uint32_t i, volatile uint32_t *stop)
{
    volatile struct kvm_steal_time *own = &steal_time[i];
    __asm__ volatile("sti");
    for (uint32_t n = 1; !*stop; n++) {
        counter[i]++;
        if (n % 64)
            continue;
        own_reads[i]++;
        if (own->version & 1)
            own_odd[i]++;
        if (own->preempted)
            own_flagged[i]++;
    }
    __asm__ volatile("cli");
}

/*
 * PARTNER runs only while TARGET waits for their shared CPU, which its
 * preempted byte says. PARTNER yields to it: TARGET runs in its place, so
 * its counter has moved when the hypercall returns. Without the yield
 * PARTNER would go on with most of its slice left and TARGET standing still.
 */
static void yield_to_target(void)
{
    for (int k = 0; k < YIELDS; k++) {
        __asm__ volatile("sti");
        uint64_t end = rdtsc() + us_to_tsc(1000000);
        while (!(steal_time[TARGET].preempted & KVM_VCPU_PREEMPTED) && rdtsc() < end)
            compiler_barrier();
        __asm__ volatile("cli");
        yield_seen_preempted[k] = steal_time[TARGET].preempted & KVM_VCPU_PREEMPTED;
        uint32_t before = counter[TARGET];
        yield_result[k] = hypercall(KVM_HC_SCHED_YIELD, cpu_apic_id(TARGET), 0, 0);
        yield_moved[k] = counter[TARGET] - before;
    }
    yield_done = 1;
}

static void halt_interrupts_off(void)
{
    __asm__ volatile("hlt" ::: "memory");
}

/* TARGET's side of the kick checks (interrupts off throughout, except to take the fixed IPI). */
static void kick_target(void)
{
    kick_state = KICK_HALTED;
    halt_interrupts_off();
    kick_state = KICK_WOKEN;
    __asm__ volatile("sti; nop; cli" ::: "memory"); /* the fixed IPI, pending since the halt */
    kick_state = KICK_HALTED_AGAIN;
    halt_interrupts_off();
    kick_state = KICK_WAIT_EARLY;
    while (!kicked_early)
        compiler_barrier();
    halt_interrupts_off();
    kick_state = KICK_WOKEN_EARLY;
}

static void ap_main(uint32_t index)
{
    if (index >= NVCPUS)
        return;
    uint32_t seen = PHASE_NONE;
    while (seen != PHASE_DONE) {
        while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) == seen)
            wait_for_interrupt();
        seen = phase;
        switch (seen) {
        case PHASE_ENABLE:
            enable_own_record(index);
            break;
        case PHASE_SPIN:
            spin_until(index, &spin_stop);
            break;
        case PHASE_YIELD:
            if (index == PARTNER)
                yield_to_target();
            else
                spin_until(index, &yield_done);
            break;
        case PHASE_KICK:
            if (index == TARGET)
                kick_target();
            break;
        default:
            break;
        }
        __atomic_store_n(&acked[index], seen, __ATOMIC_RELEASE);
    }
}

/* ------------------------------------------------------------ CPUID and absent features */

static void check_cpuid(bool all)
{
    struct cpuid_regs f = cpuid(KVM_CPUID_FEATURES, 0);
    uint32_t want = KVM_ALWAYS | (all ? KVM_PV_ALL : 0);
    printf("kvm features 0x%x (want 0x%x)\n", f.eax, want);
    vcheck(kvm_signature_found() && f.eax == want && f.ebx == 0 && f.ecx == 0 && f.edx == 0,
           "kvm-cpuid", "CPUID 0x40000101 does not offer exactly the VM's pv= set");
}

static void check_absent(void)
{
    uint64_t v;
    unsigned r = try_rdmsr(MSR_KVM_STEAL_TIME, &v);
    unsigned w = try_wrmsr(MSR_KVM_STEAL_TIME, record_msr(BSP));
    if (r != VECTOR_GP || w != VECTOR_GP)
        printf("  MSR_KVM_STEAL_TIME: RDMSR %s, WRMSR %s\n", fault_name(r), fault_name(w));
    vcheck(r == VECTOR_GP && w == VECTOR_GP, "steal-time-absent",
           "MSR_KVM_STEAL_TIME exists without KVM_FEATURE_STEAL_TIME");
    uint32_t kick = hypercall(KVM_HC_KICK_CPU, 0, 0, 0);
    uint32_t yield = hypercall(KVM_HC_SCHED_YIELD, 0, 0, 0);
    uint32_t ipi = hypercall4(KVM_HC_SEND_IPI, 1, 0, 0, VECTOR_PV);
    if (kick != KVM_RESULT_ENOSYS || yield != KVM_RESULT_ENOSYS || ipi != KVM_RESULT_ENOSYS)
        printf("  kick %d, sched yield %d, send-IPI %d\n", (int)kick, (int)yield, (int)ipi);
    vcheck(kick == KVM_RESULT_ENOSYS && yield == KVM_RESULT_ENOSYS && ipi == KVM_RESULT_ENOSYS,
           "hypercalls-absent", "a hypercall of a feature not offered did not return -1000");
    settle_ms(5);
    vcheck(pv_ipis[BSP] == 0, "send-ipi-absent", "KVM_HC_SEND_IPI delivered without the feature");
}

/* pv=none without pv_enforce: nothing offered, everything served (KVM's guest_pv_has). */
static void check_served(void)
{
    uint64_t v = 0, own = record_msr(BSP);
    unsigned w = try_wrmsr(MSR_KVM_STEAL_TIME, own);
    unsigned r = try_rdmsr(MSR_KVM_STEAL_TIME, &v);
    vcheck(w == NO_FAULT && r == NO_FAULT && v == own && steal_time[BSP].version != 0 &&
               !(steal_time[BSP].version & 1),
           "steal-time-served", "MSR_KVM_STEAL_TIME refused, or its record not written");
    wrmsr(MSR_KVM_STEAL_TIME, 0);
    uint32_t kick = hypercall(KVM_HC_KICK_CPU, 0, 1, 0);
    uint32_t yield = hypercall(KVM_HC_SCHED_YIELD, 1, 0, 0);
    uint32_t ipi = hypercall4(KVM_HC_SEND_IPI, 1, 0, 0, VECTOR_PV);
    if (kick != 0 || yield != 0 || ipi != 1)
        printf("  kick %d, sched yield %d, send-IPI %d\n", (int)kick, (int)yield, (int)ipi);
    vcheck(kick == 0 && yield == 0 && ipi == 1, "hypercalls-served",
           "a hypercall not offered in CPUID was refused");
    wait_at_least(&pv_ipis[BSP], 1, WAKE_TIMEOUT_MS);
    vcheck(pv_ipis[BSP] == 1, "send-ipi-served", "KVM_HC_SEND_IPI to itself did not arrive once");
}

/* ------------------------------------------------------------ the MSR */

static void check_msr(void)
{
    uint64_t v = 0, own = record_msr(BSP);
    unsigned f = try_wrmsr(MSR_KVM_STEAL_TIME, own);
    unsigned r = try_rdmsr(MSR_KVM_STEAL_TIME, &v);
    vcheck(f == NO_FAULT && r == NO_FAULT && v == own && steal_time[BSP].version != 0 &&
               !(steal_time[BSP].version & 1) && steal_time[BSP].preempted == 0,
           "steal-enable", "enabling did not write the record at once (even version, byte clear)");

    bool all_gp = true;
    for (unsigned bit = 1; bit <= 5; bit++) {
        unsigned g = try_wrmsr(MSR_KVM_STEAL_TIME, own | 1u << bit);
        if (g != VECTOR_GP) {
            printf("  bit %u: %s\n", bit, fault_name(g));
            all_gp = false;
        }
    }
    try_rdmsr(MSR_KVM_STEAL_TIME, &v);
    vcheck(all_gp && v == own, "steal-reserved-bits",
           "a reserved bit (5:1) did not #GP, or changed the MSR");

    /* Outside RAM: accepted, read back, never written, even where it wraps to the canary. */
    for (size_t i = 0; i < sizeof(canary); i++)
        canary[i] = 0xa5;
    uint64_t far = (1ull << OUT_OF_RAM_BIT) | (uint32_t)(uintptr_t)canary | KVM_MSR_ENABLED;
    f = try_wrmsr(MSR_KVM_STEAL_TIME, far);
    r = try_rdmsr(MSR_KVM_STEAL_TIME, &v);
    for (int i = 0; i < 3; i++)
        sleep_ms(2);
    bool intact = true;
    for (size_t i = 0; i < sizeof(canary); i++)
        intact &= canary[i] == 0xa5;
    vcheck(f == NO_FAULT && r == NO_FAULT && v == far && intact, "steal-out-of-ram",
           "an address outside RAM was refused, not read back, or written to RAM");

    /* Enable bit clear: nothing is written; enabling again writes at once, with no new steal. */
    try_wrmsr(MSR_KVM_STEAL_TIME, own & ~(uint64_t)KVM_MSR_ENABLED);
    const uint32_t marker = 0x5554;
    steal_time[BSP].version = marker;
    steal_time[BSP].steal = marker;
    steal_time[BSP].preempted = 0;
    for (int i = 0; i < 3; i++)
        sleep_ms(2);
    bool untouched = steal_time[BSP].version == marker && steal_time[BSP].steal == marker;
    f = try_wrmsr(MSR_KVM_STEAL_TIME, own);
    /* A host tick right after the WRMSR may add an entry of its own: allow one, with little steal.
     */
    uint32_t version = steal_time[BSP].version;
    uint64_t steal = steal_time[BSP].steal;
    vcheck(untouched && f == NO_FAULT && !(version & 1) && version >= marker + 2 &&
               version <= marker + 4 && steal >= marker && steal - marker < 1000000,
           "steal-disable", "the record was written while disabled, or not at once on enabling");
}

/* ------------------------------------------------------------ overcommit */

struct byte_samples {
    uint32_t set, set_but_moved, running, running_flagged, flush_requests;
};

/*
 * One look at a sibling's byte from the BSP. Set: the sibling must stand
 * still while it stays set (and TARGET gets a PV TLB flush request, as
 * Linux's kvm_flush_tlb_multi sets it). Clear, with the counter seen moving
 * before and after the read, within a window shorter than any time the
 * sibling spends off its CPU: the sibling ran across the read, so the byte
 * must have been clear.
 */
static void sample_byte(uint32_t t, struct byte_samples *s, uint64_t window)
{
    volatile uint8_t *byte = &steal_time[t].preempted;
    volatile uint32_t *c = &counter[t];
    uint64_t start = rdtsc();
    if (*byte & KVM_VCPU_PREEMPTED) {
        s->set++;
        uint32_t c0 = *c;
        uint8_t expected = KVM_VCPU_PREEMPTED;
        if (t == TARGET &&
            __atomic_compare_exchange_n(byte, &expected, KVM_VCPU_PREEMPTED | KVM_VCPU_FLUSH_TLB,
                                        false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            s->flush_requests++;
        while (rdtsc() - start < window)
            compiler_barrier();
        uint32_t c1 = *c;
        if ((*byte & KVM_VCPU_PREEMPTED) && c1 != c0)
            s->set_but_moved++;
        return;
    }
    uint32_t c0 = *c, c1, c2, c3;
    do
        c1 = *c;
    while (c1 == c0 && rdtsc() - start < window);
    uint8_t b = *byte;
    c2 = *c;
    do
        c3 = *c;
    while (c3 == c2 && rdtsc() - start < window);
    if (c1 != c0 && c3 != c2 && rdtsc() - start < window) {
        s->running++;
        if (b)
            s->running_flagged++;
    }
}

static uint32_t flush_requests;

static void check_overcommit(void)
{
    uint64_t before[NVCPUS], after[NVCPUS];
    bool consistent = true;
    for (uint32_t i = 0; i < NVCPUS; i++)
        consistent &= read_steal(i, &before[i]);
    struct byte_samples s[NVCPUS] = {0};
    uint64_t window = us_to_tsc(SAMPLE_WINDOW_US);
    uint64_t start = rdtsc(), length = us_to_tsc(SPIN_MS * 1000);
    __atomic_store_n(&phase, PHASE_SPIN, __ATOMIC_RELEASE);
    send_ipi(cpu_apic_id(TARGET), VECTOR_GO);
    send_ipi(cpu_apic_id(PARTNER), VECTOR_GO);
    for (uint32_t n = 0; rdtsc() - start < length; n++)
        sample_byte(n & 1 ? TARGET : PARTNER, &s[n & 1 ? TARGET : PARTNER], window);
    spin_stop = 1;
    bool done = wait_at_least(&acked[TARGET], PHASE_SPIN, 2000) &&
                wait_at_least(&acked[PARTNER], PHASE_SPIN, 2000);
    uint64_t elapsed_us = tsc_to_us(rdtsc() - start);
    for (uint32_t i = 0; i < NVCPUS; i++)
        consistent &= read_steal(i, &after[i]);
    uint32_t steal_us[NVCPUS];
    for (uint32_t i = 0; i < NVCPUS; i++) {
        steal_us[i] = (uint32_t)div64(after[i] - before[i], 1000);
        printf("vcpu %u: steal %u us of %u us, %u own reads (%u odd, %u flagged), counter %u\n", i,
               steal_us[i], (uint32_t)elapsed_us, own_reads[i], own_odd[i], own_flagged[i],
               counter[i]);
    }
    for (uint32_t i = TARGET; i <= PARTNER; i++)
        printf("vcpu %u byte: set %u (moved %u), seen running %u (flagged %u)\n", i, s[i].set,
               s[i].set_but_moved, s[i].running, s[i].running_flagged);
    flush_requests = s[TARGET].flush_requests;

    bool odd = false, flagged = false;
    for (uint32_t i = TARGET; i <= PARTNER; i++) {
        odd |= own_odd[i] != 0 || own_reads[i] == 0;
        flagged |= own_flagged[i] != 0;
    }
    vcheck(done, "spin-phase", "the siblings did not finish the overcommitted phase");
    vcheck(consistent && !odd, "steal-version",
           "a vCPU saw its own version odd, or a sibling's never read consistently");
    /* Each sibling waits about half the phase; the BSP, alone on its CPU, not at all. */
    uint32_t phase_us = (uint32_t)elapsed_us;
    vcheck(steal_us[TARGET] >= phase_us / 8 && steal_us[PARTNER] >= phase_us / 8,
           "steal-overcommitted", "the vCPUs sharing a CPU gained less than 1/8 of the phase");
    vcheck(steal_us[BSP] <= phase_us / 20, "steal-alone",
           "the vCPU alone on its CPU gained steal (is anything else on its CPU?)");
    /*
     * The siblings' own reads say it for every emulator; the BSP's samples
     * add a view from outside where the emulator runs CPUs at once (QEMU's
     * single-threaded TCG runs them in turn, and the BSP never sees a
     * sibling move within a window).
     */
    vcheck(!flagged && s[TARGET].running_flagged == 0 && s[PARTNER].running_flagged == 0,
           "preempted-clear-running", "a running vCPU's byte was set");
    vcheck(s[TARGET].set > 0 && s[PARTNER].set > 0 && s[TARGET].set_but_moved == 0 &&
               s[PARTNER].set_but_moved == 0,
           "preempted-set-waiting", "a waiting sibling's byte was never set, or it ran while set");
    vcheck(flush_requests > 0 && steal_time[TARGET].preempted == 0, "pv-tlb-flush-consumed",
           "no flush request was made, or one was left in the byte after the sibling ran");
}

/* ------------------------------------------------------------ sched yield */

static void check_sched_yield(void)
{
    bool done = run_phase(PHASE_YIELD, 5000);
    bool ok = done;
    for (int k = 0; k < YIELDS; k++) {
        if (!yield_seen_preempted[k] || yield_result[k] != 0 || yield_moved[k] == 0) {
            printf("  yield %d: target preempted %u, result %d, target moved %u\n", k,
                   yield_seen_preempted[k], (int)yield_result[k], yield_moved[k]);
            ok = false;
        }
    }
    vcheck(ok, "sched-yield", "the preempted sibling did not run before the caller went on");
    /* Targets that cannot take the CPU: itself, one running elsewhere, IDs the VM lacks. */
    uint32_t self = hypercall(KVM_HC_SCHED_YIELD, cpu_apic_id(BSP), 0, 0);
    uint32_t other = hypercall(KVM_HC_SCHED_YIELD, cpu_apic_id(TARGET), 0, 0);
    uint32_t beyond = hypercall(KVM_HC_SCHED_YIELD, NVCPUS, 0, 0);
    uint32_t huge = hypercall(KVM_HC_SCHED_YIELD, 0xffffffffu, 0, 0);
    vcheck(self == 0 && other == 0 && beyond == 0 && huge == 0, "sched-yield-any-target",
           "KVM_HC_SCHED_YIELD did not return 0");
}

/* ------------------------------------------------------------ kick */

static uint32_t kicks; /* kicks naming a vCPU of the VM (the BSP's pv_kicks) */

static uint32_t kick(uint32_t apic_id)
{
    if (apic_id < NVCPUS)
        kicks++;
    return hypercall(KVM_HC_KICK_CPU, 0, apic_id, 0);
}

/* Wait for TARGET to reach state; if it stays halted, an NMI gets it out (and is counted). */
static bool target_reaches(uint32_t state, uint32_t ms)
{
    if (wait_at_least(&kick_state, state, ms))
        return true;
    nmi_rescues++;
    send_nmi(cpu_apic_id(TARGET));
    wait_at_least(&kick_state, state, ms);
    return false;
}

static void check_kick(void)
{
    __atomic_store_n(&phase, PHASE_KICK, __ATOMIC_RELEASE);
    send_ipi(cpu_apic_id(TARGET), VECTOR_GO);
    send_ipi(cpu_apic_id(PARTNER), VECTOR_GO);
    bool halted = wait_at_least(&kick_state, KICK_HALTED, 1000);
    settle_ms(HALT_SETTLE_MS); /* it reaches the HLT meanwhile */
    uint32_t fixed_before = fixed_ipis[TARGET];
    send_ipi(cpu_apic_id(TARGET), VECTOR_FIXED);
    settle_ms(HALT_SETTLE_MS);
    vcheck(halted && kick_state == KICK_HALTED, "kick-fixed-ipi-no-wake",
           "a maskable interrupt ended a halt with IF=0");

    uint32_t r = kick(cpu_apic_id(TARGET));
    bool woke = target_reaches(KICK_WOKEN, WAKE_TIMEOUT_MS);
    vcheck(r == 0 && woke, "kick-wakes", "KVM_HC_KICK_CPU did not end a halt with IF=0");
    bool held = target_reaches(KICK_HALTED_AGAIN, WAKE_TIMEOUT_MS);
    vcheck(held && fixed_ipis[TARGET] == fixed_before + 1, "kick-ipi-held",
           "the fixed IPI was not kept pending until STI");

    /* Second halt: neither the first kick nor kicks to IDs the VM lacks may end it. */
    settle_ms(HALT_SETTLE_MS);
    uint32_t r3 = kick(NVCPUS), r255 = kick(0xff), rmax = kick(0xffffffffu);
    settle_ms(HALT_SETTLE_MS);
    bool still = kick_state == KICK_HALTED_AGAIN;
    vcheck(still && r3 == 0 && r255 == 0 && rmax == 0, "kick-out-of-range",
           "a kick to an APIC ID the VM lacks (or the first kick, again) ended a halt");
    r = kick(cpu_apic_id(TARGET));
    woke = target_reaches(KICK_WAIT_EARLY, WAKE_TIMEOUT_MS);
    vcheck(r == 0 && woke, "kick-wakes-again", "the second kick did not end the second halt");

    /* A kick while the target runs: the halt that follows ends at once. */
    r = kick(cpu_apic_id(TARGET));
    kicked_early = 1;
    woke = target_reaches(KICK_WOKEN_EARLY, WAKE_TIMEOUT_MS);
    vcheck(r == 0 && woke, "kick-before-halt", "a kick before the halt did not end it");
    wait_at_least(&acked[TARGET], PHASE_KICK, 1000);
}

/* ------------------------------------------------------------ send IPI */

static uint32_t delivered; /* what KVM_HC_SEND_IPI returned in all (the BSP's pv_send_ipis) */

/*
 * One KVM_HC_SEND_IPI of VECTOR_PV (or an NMI): the result must be want,
 * and exactly the vCPUs of mask (bit i: vCPU i) must take one interrupt.
 */
static void send_check(const char *name, uint32_t lo, uint32_t hi, uint32_t min, uint32_t icr,
                       uint32_t want, uint32_t mask)
{
    volatile uint32_t *count = (icr & ICR_DM_NMI) == ICR_DM_NMI ? nmis : pv_ipis;
    uint32_t before[NVCPUS];
    for (uint32_t i = 0; i < NVCPUS; i++)
        before[i] = count[i];
    uint32_t r = hypercall4(KVM_HC_SEND_IPI, lo, hi, min, icr);
    if (r != KVM_RESULT_EINVAL)
        delivered += r;
    for (uint32_t i = 0; i < NVCPUS; i++)
        if (mask >> i & 1)
            wait_at_least(&count[i], before[i] + 1, WAKE_TIMEOUT_MS);
    settle_ms(5); /* anything more that would come */
    bool exact = r == want;
    for (uint32_t i = 0; i < NVCPUS; i++)
        exact &= count[i] - before[i] == (mask >> i & 1);
    if (!exact)
        printf("  %s: returned %d (want %d), took %u %u %u\n", name, (int)r, (int)want,
               count[0] - before[0], count[1] - before[1], count[2] - before[2]);
    vcheck(exact, name, "the wrong vCPUs took the IPI, or the wrong count came back");
}

static void check_send_ipi(void)
{
    send_check("send-ipi-bitmap", 0x6, 0, 0, VECTOR_PV, 2, 0x6);
    send_check("send-ipi-self", 0x1, 0, 0, VECTOR_PV, 1, 0x1);
    send_check("send-ipi-min", 0x2, 0, 1, VECTOR_PV, 1, 0x4);
    /* In 32-bit code the second word starts at min + 32, in KVM's u32: here ID 1. */
    send_check("send-ipi-high-word", 0, 0x1, (uint32_t)-31, VECTOR_PV, 1, 0x2);
    send_check("send-ipi-all-bits", 0xffffffffu, 0xffffffffu, 0, VECTOR_PV, NVCPUS, 0x7);
    send_check("send-ipi-out-of-range", 0xffffffffu << NVCPUS, 0xffffffffu, 0, VECTOR_PV, 0, 0);
    /* The low word's IDs from 2^32 - 16 do not wrap round; the high word's start at 16. */
    send_check("send-ipi-no-wrap", 0xffffffffu, 0xffffffffu, 0xfffffff0u, VECTOR_PV, 0, 0);
    send_check("send-ipi-wrap", 0xffffffffu, 0x5, (uint32_t)-32, VECTOR_PV, 2, 0x5);
    send_check("send-ipi-nmi", 0x2, 0, 0, ICR_DM_NMI, 1, 0x2);
    send_check("send-ipi-lowest-priority", 0x2, 0, 0, VECTOR_PV | ICR_DM_LOWEST, 1, 0x2);
    send_check("send-ipi-smi", 0x2, 0, 0, ICR_DM_SMI, 0, 0);
    send_check("send-ipi-level-deassert", 0x2, 0, 0, VECTOR_PV | ICR_LEVEL_TRIG, 0, 0);
    send_check("send-ipi-logical", 0x2, 0, 0, VECTOR_PV | ICR_LOGICAL, KVM_RESULT_EINVAL, 0);
    send_check("send-ipi-shorthand", 0x2, 0, 0, VECTOR_PV | ICR_SELF, KVM_RESULT_EINVAL, 0);
}

/* ------------------------------------------------------------ main */

static void check_all(void)
{
    /* Before the fault handlers: a #GP on an AP then stops the VM with the runtime's message. */
    vcheck(run_phase(PHASE_ENABLE, 1000) && enable_ok[TARGET] && enable_ok[PARTNER],
           "steal-enable-aps", "an AP's record was not written at once on enabling");
    fault_catch_install();
    check_msr();
    check_overcommit();
    check_sched_yield();
    check_kick();
    check_send_ipi();
    __atomic_store_n(&phase, PHASE_DONE, __ATOMIC_RELEASE);
    send_ipi(cpu_apic_id(TARGET), VECTOR_GO);
    send_ipi(cpu_apic_id(PARTNER), VECTOR_GO);
    vcheck(nmi_rescues == 0 && nmis[BSP] == 0, "no-rescue",
           "a halted vCPU needed an NMI to go on (see above)");
    printf("pv stats: kicks %u, send_ipi %u, yields %u, tlb_flush_requests %u\n", kicks, delivered,
           (uint32_t)YIELDS, flush_requests);
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    const char *args = cmdline_args(info);
    bool served = word_is(args, "none"), enforced = word_is(args, "enforced");
    bool all = !served && !enforced;
    uint32_t n = smp_start(false, ap_main);
    set_interrupt_handler(VECTOR_NMI, nmi_handler);
    set_interrupt_handler(VECTOR_TIMER, timer_handler);
    set_interrupt_handler(VECTOR_GO, go_handler);
    set_interrupt_handler(VECTOR_FIXED, fixed_handler);
    set_interrupt_handler(VECTOR_PV, pv_handler);
    check_cpuid(all);
    if (!all) {
        fault_catch_install();
        if (served)
            check_served();
        else
            check_absent();
    } else if (n == NVCPUS)
        check_all();
    else
        vcheck(false, "layout", "run with vcpus=3:pin=0,1,1");
    return check_summary("pvcheck");
}

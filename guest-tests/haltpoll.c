/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A guest that polls for itself, as Linux's cpuidle-haltpoll does: it finds
 * KVM's poll-control feature (CPUID 0x40000100/0x40000101), turns host
 * polling off on every vCPU (MSR_KVM_POLL_CONTROL = 0), checks that the MSR
 * reads back 0 and that setting a reserved bit faults, then ping-pongs an
 * IPI between vCPUs 0 and 1, each polling the flag itself for a short
 * window before it halts. Arguments: round trips (default 200) and the
 * guest's poll window in microseconds (default 20). Exits 0, or 2 if the
 * feature or the MSR misbehaved.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/kvm.h"
#include "guest-tests/runtime/ping.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define WRMSR_LEN       2
#define ITERS_DEFAULT   200u
#define ITERS_MAX       100000u
#define POLL_US_DEFAULT 20u
#define EXIT_BROKEN     2

/* What an interrupt gate pushes, without an error code: the return point. */
struct return_frame {
    uint32_t eip, cs, eflags;
};

static volatile uint32_t gp_count[MAX_CPUS];
static volatile uint32_t gp_ready, opted_out, broken, stop, finished;
static volatile uint32_t responder_caught;
static uint64_t poll_cycles;

/* The only #GP expected is the WRMSR of a reserved bit: note it and step over the WRMSR. */
__attribute__((interrupt)) static void gp_handler(struct interrupt_frame *f, unsigned long error)
{
    (void)error;
    ((struct return_frame *)f)->eip += WRMSR_LEN;
    gp_count[this_cpu_index()]++;
}

static bool feature_offered(void)
{
    if (!kvm_signature_found()) {
        printf("no KVM signature at 0x40000100 (eax 0x%x)\n", cpuid(KVM_CPUID_SIGNATURE, 0).eax);
        return false;
    }
    struct cpuid_regs f = cpuid(KVM_CPUID_FEATURES, 0);
    if (!(f.eax & (1u << KVM_FEATURE_POLL_CONTROL))) {
        printf("KVM_FEATURE_POLL_CONTROL not offered (features 0x%x)\n", f.eax);
        return false;
    }
    return true;
}

/* Turn host polling off for this vCPU and check the MSR's rules. */
static void opt_out(uint32_t me)
{
    uint64_t reset = rdmsr(MSR_KVM_POLL_CONTROL);
    wrmsr(MSR_KVM_POLL_CONTROL, 0);
    uint64_t off = rdmsr(MSR_KVM_POLL_CONTROL);
    wrmsr(MSR_KVM_POLL_CONTROL, 2); /* bit 1 is reserved */
    uint64_t after = rdmsr(MSR_KVM_POLL_CONTROL);
    if (reset != 1 || off != 0 || gp_count[me] != 1 || after != 0) {
        spin_lock(&console_lock);
        printf("vcpu %u: poll control reset %llu, after 0 reads %llu, bit 1 faulted %u times, "
               "then reads %llu\n",
               me, reset, off, gp_count[me], after);
        spin_unlock(&console_lock);
        __atomic_add_fetch(&broken, 1, __ATOMIC_RELEASE);
    }
    __atomic_add_fetch(&opted_out, 1, __ATOMIC_RELEASE);
}

static void responder(uint32_t me)
{
    /* smp_start installs the default exception handlers: wait for ours. */
    while (!__atomic_load_n(&gp_ready, __ATOMIC_ACQUIRE))
        cpu_relax();
    opt_out(me);
    if (me == 1)
        responder_caught = ping_respond(1, poll_cycles, &stop);
    __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    const char *args = cmdline_args(info);
    uint32_t iters = ITERS_DEFAULT, poll_us = POLL_US_DEFAULT;
    parse_uint(args, &iters);
    parse_uint(skip_word(args), &poll_us);
    iters = iters < 1 ? 1 : iters > ITERS_MAX ? ITERS_MAX : iters;

    if (!feature_offered())
        return EXIT_BROKEN;
    ping_init();
    uint32_t n = smp_start(false, responder);
    if (n < 2) {
        printf("haltpoll needs at least 2 vCPUs, has %u\n", n);
        return 1;
    }
    poll_cycles = us_to_tsc(poll_us);
    set_interrupt_handler(VECTOR_GP, gp_handler);
    __atomic_store_n(&gp_ready, 1, __ATOMIC_RELEASE);
    opt_out(0);
    while (__atomic_load_n(&opted_out, __ATOMIC_ACQUIRE) < n)
        cpu_relax();
    if (broken)
        return EXIT_BROKEN;
    printf("poll control off on %u vCPUs, bit 1 faults\n", n);

    uint32_t caught = 0;
    uint64_t cycles = ping_round_trips(1, iters, poll_cycles, &caught);
    stop = 1;
    ping_send(1);
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < n - 1)
        cpu_relax();
    printf("@bench {\"guest\":\"haltpoll\",\"op\":\"ipi_roundtrip\",\"cycles\":%llu,\"iters\":%u,"
           "\"guest_polls\":%u,\"guest_polls_caught\":%u}\n",
           cycles, iters, 2 * iters + 1, caught + responder_caught);
    return 0;
}

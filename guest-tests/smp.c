/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Brings up every vCPU with INIT-SIPI-SIPI, then passes a token around
 * them as fixed IPIs: vCPU i sends vector 0x40 to vCPU i + 1 (the last to
 * vCPU 0) and halts until the token comes back. Arguments: "K [x2apic]
 * [fault]", K full rounds (default 10); with x2apic, every vCPU switches to
 * x2APIC mode first if the CPU offers it. Exits 0 after K rounds, 1 if a
 * vCPU did not come online or a vCPU passed the token too often. With
 * fault, after the rounds vCPU 1 prints filler lines under the console
 * lock while every other vCPU executes UD2 at once: the runtime's exception
 * lines must come out whole, between whole filler lines (exit 3, the
 * runtime's). NMIs to vCPU 1, halted in its `sti; hlt` loop, after the
 * rounds (issue 27's NMI storm): with nmi[=N], vCPU 0 sends N (default
 * NMI_STORM) by ICR, each once the one before was taken; with nmiburst[=N],
 * N ICR writes back to back, which the target's latch folds into fewer
 * (one in service, one pending), then once the count stopped moving one
 * more NMI and a token round, which it must still take. nmi_ms=D gives each
 * a deadline of D ms of TSC time. Exit 4 if an NMI is not taken, the burst
 * gets none, or a deadline passes. With resend[=N] (issue 37, kvm-unit-tests'
 * on_cpu), vCPU 0 sends vCPU 1 N fixed IPIs of one vector, each as soon as
 * the handler of the one before said it ran, and that handler holds its EOI
 * until the next is sent: every IPI comes while its vector is in service,
 * and is taken after the EOI, as on hardware. Exit 5 if one is lost
 * (nmi_ms's deadline, or a second without it).
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define TOKEN_VECTOR   0x40
#define ROUNDS_DEFAULT 10u
#define NMI_STORM      30000u
#define NMI_WAIT_SPINS 200000000u /* seconds of emulated time: one NMI is long lost by then */

static uint32_t token[MAX_CPUS];    /* set by the token IPI on the vCPU it reaches */
static uint32_t passes[MAX_CPUS];   /* tokens each vCPU has sent on */
static uint32_t rounds;             /* full rounds, counted by vCPU 0 */
static volatile uint32_t fault_now; /* fault: set by vCPU 0, every vCPU then faults */

static volatile uint32_t fillers; /* fault: filler lines vCPU 1 has printed */
#define FILLER_LINES 20

static _Noreturn void fault_together(uint32_t me)
{
    if (me == 1) {
        for (uint32_t i = 0; i < FILLER_LINES; i++) {
            spin_lock(&console_lock);
            printf("filler %u: the console lock is held for the whole of this line\n", i);
            spin_unlock(&console_lock);
            fillers++;
        }
        for (;;)
            __asm__ volatile("cli; hlt");
    }
    while (fillers < 3)
        cpu_relax();
    __asm__ volatile("ud2");
    __builtin_unreachable();
}

__attribute__((interrupt)) static void token_ipi(struct interrupt_frame *f)
{
    (void)f;
    __atomic_store_n(&token[this_cpu_index()], 1, __ATOMIC_RELEASE);
    lapic_eoi();
}

/* Halt, not spin: a hypervisor sees the ring as HLT exits and IPI wake-ups. */
static void wait_token(uint32_t me)
{
    while (!__atomic_load_n(&token[me], __ATOMIC_ACQUIRE))
        wait_for_interrupt();
    token[me] = 0;
}

static void pass_token(uint32_t me)
{
    __atomic_store_n(&passes[me], passes[me] + 1, __ATOMIC_RELEASE);
    send_ipi(cpu_apic_id((me + 1) % smp_cpus()), TOKEN_VECTOR);
}

static void ring_member(uint32_t me)
{
    for (;;) {
        wait_token(me);
        if (fault_now)
            fault_together(me);
        pass_token(me);
    }
}

#define RESEND_VECTOR  0x41
#define RESEND_DEFAULT 2000u

/* resend: IPIs to send, sent, and handlers run. */
static volatile uint32_t resend_count, resend_sent, resend_taken;

/* The next IPI comes before this EOI; the last one's handler has none to wait for. */
__attribute__((interrupt)) static void resend_ipi(struct interrupt_frame *f)
{
    (void)f;
    uint32_t n = __atomic_add_fetch(&resend_taken, 1, __ATOMIC_SEQ_CST);
    while (n < resend_count && __atomic_load_n(&resend_sent, __ATOMIC_SEQ_CST) <= n)
        ; /* no PAUSE: nothing here may exit */
    lapic_eoi();
}

static bool resend(uint32_t count, uint32_t ms)
{
    uint64_t start = rdtsc(), wait = us_to_tsc((uint64_t)(ms ? ms : 1000) * 1000);
    resend_count = count;
    for (uint32_t i = 1; i <= count; i++) {
        send_ipi(cpu_apic_id(1), RESEND_VECTOR);
        __atomic_store_n(&resend_sent, i, __ATOMIC_SEQ_CST);
        uint64_t sent = rdtsc();
        while (__atomic_load_n(&resend_taken, __ATOMIC_SEQ_CST) != i)
            if (rdtsc() - sent > wait) {
                printf("resend: IPI %u of %u was not taken (%u handled)\n", i, count, resend_taken);
                return false;
            }
    }
    printf("resend: %u IPIs taken in %u ms\n", count,
           (uint32_t)div64(tsc_to_us(rdtsc() - start), 1000));
    return true;
}

static volatile uint32_t nmis_taken; /* nmi, nmiburst: by vCPU 1 */

__attribute__((interrupt)) static void nmi_taken(struct interrupt_frame *f)
{
    (void)f;
    nmis_taken++;
}

struct nmi_run {
    uint32_t storm, burst; /* NMIs to send each way; 0: not asked */
    uint32_t ms;           /* nmi_ms: each one's deadline, 0 for none */
    uint64_t start, deadline;
};

static void nmi_run_start(struct nmi_run *r)
{
    r->start = rdtsc();
    r->deadline = r->ms ? r->start + us_to_tsc((uint64_t)r->ms * 1000) : 0;
}

static uint32_t nmi_run_ms(const struct nmi_run *r)
{
    return (uint32_t)div64(tsc_to_us(rdtsc() - r->start), 1000);
}

/*
 * Spins without an exit (no PAUSE), as the kernel does, until the
 * count leaves before: false at the deadline, or after NMI_WAIT_SPINS
 * without one.
 */
static bool nmi_wait_taken(const struct nmi_run *r, uint32_t before)
{
    for (uint32_t spins = 0; nmis_taken == before; spins++)
        if (spins == NMI_WAIT_SPINS || (r->deadline && rdtsc() > r->deadline))
            return false;
    return true;
}

/* Each NMI once the one before was taken: a lost one stops the count. */
static bool nmi_storm(struct nmi_run *r)
{
    nmi_run_start(r);
    uint32_t first = nmis_taken;
    for (uint32_t i = 0; i < r->storm; i++) {
        uint32_t before = nmis_taken;
        send_nmi(cpu_apic_id(1));
        if (!nmi_wait_taken(r, before)) {
            printf("nmi storm: NMI %u of %u was not taken (%u ms)\n", i + 1, r->storm,
                   nmi_run_ms(r));
            return false;
        }
    }
    printf("nmi storm: %u NMIs taken in %u ms\n", nmis_taken - first, nmi_run_ms(r));
    return true;
}

#define NMI_SETTLE_US 100000u /* the burst's count is final once it stood still this long */

/*
 * Every ICR write at once: NMIs beyond the one in service and the one
 * latched behind it are lost, so fewer are taken, but the target must go on
 * taking them and come back to its loop with IF=1 (the token round).
 */
static bool nmi_burst(struct nmi_run *r)
{
    nmi_run_start(r);
    uint32_t first = nmis_taken;
    for (uint32_t i = 0; i < r->burst; i++)
        send_nmi(cpu_apic_id(1));
    uint32_t seen = nmis_taken;
    uint64_t still = rdtsc(), settle = us_to_tsc(NMI_SETTLE_US);
    while (rdtsc() - still < settle) {
        if (nmis_taken != seen) {
            seen = nmis_taken;
            still = rdtsc();
        }
        if (r->deadline && rdtsc() > r->deadline) {
            printf("nmi burst: still taking NMIs after %u ms (%u of %u)\n", nmi_run_ms(r),
                   seen - first, r->burst);
            return false;
        }
    }
    uint32_t taken = seen - first;
    if (taken == 0 || taken > r->burst) {
        printf("nmi burst: %u of %u NMIs taken\n", taken, r->burst);
        return false;
    }
    uint32_t before = nmis_taken;
    send_nmi(cpu_apic_id(1));
    if (!nmi_wait_taken(r, before)) {
        printf("nmi burst: the NMI after it was not taken (%u ms)\n", nmi_run_ms(r));
        return false;
    }
    pass_token(0);
    wait_token(0);
    printf("nmi burst: %u NMIs sent, %u taken, then one more and a token round in %u ms\n",
           r->burst, taken, nmi_run_ms(r));
    return true;
}

/* The next space-separated word of *s, copied to word (truncated to size); false at the end. */
static bool next_word(const char **s, char *word, uint32_t size)
{
    while (**s == ' ')
        (*s)++;
    if (**s == '\0')
        return false;
    uint32_t n = 0;
    for (; **s != '\0' && **s != ' '; (*s)++)
        if (n + 1 < size)
            word[n++] = **s;
    word[n] = '\0';
    return true;
}

static bool same(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b)
        a++, b++;
    return *a == *b;
}

/* word is name, or name=N (then *value is N): false for anything else. */
static bool option(const char *word, const char *name, uint32_t *value)
{
    while (*name != '\0' && *word == *name)
        word++, name++;
    if (*name != '\0')
        return false;
    return *word == '\0' || (*word == '=' && parse_uint(word + 1, value));
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t k = ROUNDS_DEFAULT;
    bool x2apic = false, fault = false;
    struct nmi_run nmi = {0};
    uint32_t resends = 0;
    const char *args = cmdline_args(info);
    char word[16];
    while (next_word(&args, word, sizeof(word))) {
        uint32_t count = NMI_STORM, resend_n = RESEND_DEFAULT;
        if (same(word, "x2apic"))
            x2apic = true;
        else if (same(word, "fault"))
            fault = true;
        else if (option(word, "nmi", &count))
            nmi.storm = count;
        else if (option(word, "nmiburst", &count))
            nmi.burst = count;
        else if (option(word, "nmi_ms", &nmi.ms))
            continue;
        else if (option(word, "resend", &resend_n))
            resends = resend_n;
        else if (!parse_uint(word, &k)) {
            printf("unknown argument %s (expected: K [x2apic] [fault] [nmi[=N]] [nmiburst[=N]] "
                   "[nmi_ms=D] [resend[=N]])\n",
                   word);
            return 1;
        }
    }
    if (k == 0)
        k = 1;

    set_interrupt_handler(TOKEN_VECTOR, token_ipi);
    set_interrupt_handler(RESEND_VECTOR, resend_ipi);
    uint32_t n = smp_start(x2apic, ring_member);
    if (n == 0)
        return 1;
    /* After smp_start, whose cpu_init installs the runtime's exception handlers. */
    set_interrupt_handler(VECTOR_NMI, nmi_taken);

    pass_token(0);
    for (;;) {
        wait_token(0);
        __atomic_store_n(&rounds, rounds + 1, __ATOMIC_RELEASE);
        if (rounds == k)
            break;
        pass_token(0);
    }
    /* Every vCPU sent the token on once per round: a doubled IPI shows here (a lost one would
     * have stopped the ring, for the caller's timeout to catch). */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = __atomic_load_n(&passes[i], __ATOMIC_ACQUIRE);
        if (p != k) {
            printf("vcpu %u passed the token %u times in %u rounds\n", i, p, k);
            return 1;
        }
    }
    printf("token made %u rounds\n", rounds);
    if ((nmi.storm || nmi.burst) && n < 2)
        return 4;
    if (nmi.storm && !nmi_storm(&nmi))
        return 4;
    if (nmi.burst && !nmi_burst(&nmi))
        return 4;
    if (resends && (n < 2 || !resend(resends, nmi.ms)))
        return 5;
    if (fault) {
        fault_now = 1;
        for (uint32_t i = 1; i < n; i++)
            send_ipi(cpu_apic_id(i), TOKEN_VECTOR);
        fault_together(0);
    }
    return 0;
}

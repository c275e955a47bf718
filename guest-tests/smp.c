/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Brings up every vCPU with INIT-SIPI-SIPI, then passes a token around
 * them as fixed IPIs: vCPU i sends vector 0x40 to vCPU i + 1 (the last to
 * vCPU 0) and halts until the token comes back. Arguments: "K [x2apic]",
 * K full rounds (default 10); with x2apic, every vCPU switches to x2APIC
 * mode first if the CPU offers it. Exits 0 after K rounds, 1 if a vCPU
 * did not come online or a vCPU passed the token too often.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"

#define TOKEN_VECTOR   0x40
#define ROUNDS_DEFAULT 10u

static uint32_t token[MAX_CPUS];  /* set by the token IPI on the vCPU it reaches */
static uint32_t passes[MAX_CPUS]; /* tokens each vCPU has sent on */
static uint32_t rounds;           /* full rounds, counted by vCPU 0 */

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
        pass_token(me);
    }
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

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t k = ROUNDS_DEFAULT;
    bool x2apic = false;
    const char *args = cmdline_args(info);
    char word[16];
    while (next_word(&args, word, sizeof(word))) {
        if (same(word, "x2apic"))
            x2apic = true;
        else if (!parse_uint(word, &k)) {
            printf("unknown argument %s (expected: K [x2apic])\n", word);
            return 1;
        }
    }
    if (k == 0)
        k = 1;

    set_interrupt_handler(TOKEN_VECTOR, token_ipi);
    uint32_t n = smp_start(x2apic, ring_member);
    if (n == 0)
        return 1;

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
    return 0;
}

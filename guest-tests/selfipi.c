/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interrupts pending at STI; HLT: N times (argument, default 1000) it sends
 * itself a fixed IPI with interrupts off, then runs STI; HLT, and counts
 * the interrupts its handler takes. Under AMD's Idle HLT intercept the HLT
 * does not exit, the pending interrupt wakes it at once; under the plain HLT
 * intercept every HLT exits. The vCPU's HLT exits, read by hypercall before
 * and after the loop, are reported as hlt_exits. A second loop of
 * STI; NOP; CLI takes the interrupt with no HLT, where pollux offered it to
 * the CPU (SVM V_IRQ) rather than injecting it at entry. Exits 0 iff every
 * IPI was handled exactly once, and never before its STI.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"
#include "abi/hypercall.h"

#define ITERS_DEFAULT 1000u
#define ITERS_MAX     1000000u
#define IPI_VECTOR    0x50
#define ICR_SELF      (1u << 18) /* destination shorthand: self */

static volatile uint32_t handled;

__attribute__((interrupt)) static void ipi_interrupt(struct interrupt_frame *f)
{
    (void)f;
    handled++;
    lapic_eoi();
}

static void send_self_ipi(void)
{
    lapic_write(LAPIC_ICR_LO, ICR_SELF | IPI_VECTOR);
}

/* One IPI per iteration, taken after STI by `after_sti` (HLT, or NOP then CLI); mismatches. */
static uint32_t run(uint32_t iters, bool halt)
{
    uint32_t bad = 0;
    for (uint32_t i = 0; i < iters; i++) {
        uint32_t before = handled;
        send_self_ipi();
        bool early = handled != before; /* taken with interrupts off */
        if (halt)
            __asm__ volatile("sti; hlt; cli" ::: "memory");
        else
            __asm__ volatile("sti; nop; cli" ::: "memory");
        if (early || handled != before + 1) {
            if (bad++ < 5)
                printf("iteration %u (%s): %u interrupts, %s\n", i, halt ? "sti_hlt" : "sti",
                       handled - before, early ? "one before STI" : "expected 1");
        }
    }
    return bad;
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t iters = arg_uint(info, ITERS_DEFAULT, 1, ITERS_MAX);
    cpu_init();
    lapic_enable();
    set_interrupt_handler(IPI_VECTOR, ipi_interrupt);

    uint32_t hlt_before = hypercall(HC_HLT_EXITS, 0, 0, 0);
    uint64_t start = rdtsc();
    uint32_t bad = run(iters, true);
    uint64_t cycles = rdtsc() - start;
    uint32_t hlt_exits = hypercall(HC_HLT_EXITS, 0, 0, 0) - hlt_before;
    printf("@bench {\"guest\":\"selfipi\",\"op\":\"sti_hlt\",\"cycles\":%llu,\"iters\":%u,"
           "\"hlt_exits\":%u}\n",
           div64(cycles, iters), iters, hlt_exits);

    start = rdtsc();
    bad += run(iters, false);
    cycles = rdtsc() - start;
    printf("@bench {\"guest\":\"selfipi\",\"op\":\"sti\",\"cycles\":%llu,\"iters\":%u}\n",
           div64(cycles, iters), iters);
    if (bad)
        printf("%u of %u IPIs not handled exactly once after STI\n", bad, 2 * iters);
    return bad ? 1 : 0;
}

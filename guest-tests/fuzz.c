/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Random abuse of the virtual platform from one vCPU: port I/O on random
 * ports, RDMSR/WRMSR of likely and random MSRs with random values, local
 * APIC register reads and writes (random offsets and values, ICR included,
 * on the page IA32_APIC_BASE writes move it to),
 * random CPUID leaves and hypercalls. A #GP (an MSR pollux refuses) is
 * caught and the instruction skipped. Interrupts stay disabled, so whatever
 * the APIC is made to send stays pending. The hypervisor must survive all of
 * it and stop no other VM; this VM ends with "fuzz done" and code 0.
 * Arguments: "OPS SEED" (defaults 2000 and 1).
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "abi/hypercall.h"

struct frame {
    uint32_t eip, cs, eflags;
};

static volatile unsigned gps, nmis;
static uint32_t rng;

static uint32_t next(void)
{
    rng = rng * 1664525u + 1013904223u; /* Numerical Recipes LCG: deterministic per seed */
    return rng >> 16 | rng << 16;       /* its low bits repeat quickly: use the high ones */
}

/* RDMSR and WRMSR are two bytes long: a refused one is skipped. */
__attribute__((interrupt)) static void gp_handler(struct frame *f, unsigned long error)
{
    (void)error;
    gps++;
    f->eip += 2;
}

__attribute__((interrupt)) static void nmi_handler(struct frame *f)
{
    (void)f;
    nmis++;
}

static void install_idt(void)
{
    cpu_init();
    set_interrupt_handler(VECTOR_NMI, nmi_handler);
    set_interrupt_handler(VECTOR_GP, gp_handler);
}

/* Ports that would end the run or garble the console are left alone. */
static bool port_allowed(uint16_t p)
{
    return !(p >= 0xf4 && p <= 0xf7) && p != 0x8900 && !(p >= 0x3f8 && p <= 0x3ff);
}

/* Where msr_op may move the xAPIC page besides its default: the pages of the top GiB. */
#define APIC_PAGES_FROM 0xc0000000u
#define APIC_PAGES      0x40000u

static uint32_t apic_page = XAPIC_BASE; /* where IA32_APIC_BASE has the xAPIC page now */
static unsigned apic_moves;             /* writes that moved it */

static const uint32_t likely_msrs[] = {
    0x10,       0x1b,       0x3a,       0x8b,       0xfe,       0x174,      0x175,      0x176,
    0x1a0,      0x277,      0x2ff,      0x6e0,      0x802,      0x808,      0x80b,      0x80f,
    0x828,      0x830,      0x832,      0x838,      0x83e,      0x83f,      0xc0000080, 0xc0000081,
    0xc0000082, 0xc0000084, 0xc0000100, 0xc0000102, 0xc0010000, 0xc0010004, 0xc0010114,
};

static void msr_op(void)
{
    uint32_t n = sizeof(likely_msrs) / sizeof(likely_msrs[0]);
    uint32_t msr = (next() & 3) ? likely_msrs[next() % n] : next();
    if (next() % 8 == 0)
        msr = MSR_APIC_BASE; /* often enough that a short run moves the xAPIC page */
    /* Writes that would turn paging or long mode on make no sense in this flat guest. */
    if (msr == 0xc0000080)
        return;
    uint32_t lo = next(), hi = (next() & 1) ? next() : 0;
    /*
     * IA32_APIC_BASE moves the xAPIC page (pollux, as KVM, emulates it
     * wherever it is, hiding from this vCPU what is there): to the default
     * page or any from 3 GiB up, above this VM's RAM, which apic_op must not
     * scribble on.
     */
    if (msr == MSR_APIC_BASE) {
        uint32_t page = next() & 1 ? XAPIC_BASE : APIC_PAGES_FROM + (next() % APIC_PAGES) * 0x1000;
        /* Mostly only the BSP, x2APIC and enable bits (8, 10, 11); else reserved ones too. */
        lo = (lo & (next() % 4 ? 0xd00 : 0xfff)) | page;
        hi = 0;
    }
    if (next() & 1) {
        unsigned refused = gps;
        __asm__ volatile("wrmsr" ::"c"(msr), "a"(lo), "d"(hi) : "memory");
        if (msr == MSR_APIC_BASE && gps == refused) {
            apic_moves += (lo & ~0xfffu) != apic_page;
            apic_page = lo & ~0xfffu;
        }
    } else
        __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr) : "memory");
}

static void apic_op(void)
{
    volatile uint32_t *reg = (volatile uint32_t *)(apic_page + (next() % 0x40) * 0x10);
    if (next() & 1)
        *reg = next();
    else
        (void)*reg;
}

static void port_op(void)
{
    uint16_t port = (uint16_t)next();
    if (!port_allowed(port))
        return;
    switch (next() % 4) {
    case 0:
        (void)inb(port);
        break;
    case 1:
        outb(port, (uint8_t)next());
        break;
    case 2: {
        uint32_t v;
        __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
        break;
    }
    default:
        outl(port, next());
        break;
    }
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    const char *args = cmdline_args(info);
    uint32_t ops = 2000, seed = 1;
    parse_uint(args, &ops);
    parse_uint(skip_word(args), &seed);
    rng = seed;
    install_idt();
    for (uint32_t i = 0; i < ops; i++) {
        switch (next() % 5) {
        case 0:
            port_op();
            break;
        case 1:
            msr_op();
            break;
        case 2:
            apic_op();
            break;
        case 3:
            (void)cpuid(next() & 1 ? next() % 0x20 : 0x40000000 + next() % 0x20, next() % 4);
            break;
        default:
            /* Any pollux call but HC_EXIT (HC_PUTS with a short random buffer), or KVM's. */
            hypercall(next() & 1 ? HC_EXIT + 1 + next() % 4 : next() % 16, next(), next() % 16,
                      next());
            break;
        }
    }
    /* HC_PUTS may have left a partial line of random bytes: start a fresh one. */
    printf("\nfuzz done: %u ops, seed %u, %u #GP, %u NMIs, %u xAPIC page moves\n", ops, seed, gps,
           nmis, apic_moves);
    return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tries to reach memory that is not its own. It first fills all of its RAM
 * with a pattern that depends on each word's address, turns on its own PAE
 * paging (so it can name any guest-physical address below MAXPHYADDR
 * through a one-page window), probes, and at the end checks the pattern:
 * @bench {"guest":"escape","op":"pattern","ok":1} if nothing changed it.
 * Arguments, one mode:
 *   probe ADDR  read, write and read again the guest-physical address ADDR
 *               (hex, or `high`: 2^(MAXPHYADDR-1)). Under unbacked=stop the
 *               VM must stop at the first read; under ignore both reads must
 *               give all ones (exit 0, else 1).
 *   sweep       for unbacked=ignore: the same at just above its RAM, every
 *               MiB from there to 4 GiB (with mem=1M: the hypervisor's load
 *               address, and the host-physical RAM of every sibling VM below
 *               4 GiB), the I/O APIC and HPET registers, powers of two up to
 *               MAXPHYADDR and the top of the address space. Then a page
 *               table entry with a bit at MAXPHYADDR: a #PF of its own with
 *               the reserved-bit error, not an exit. Then the local APIC page
 *               (backed under any policy) with 8- and 16-bit and misaligned
 *               accesses: none may change a register or send an IPI.
 *               @bench lines: sweep (probes, reads, writes, bad),
 *               reserved_bit_pf and apic_odd.
 * Exit code 0 when all holds; 1 a probe failed, 2 the pattern changed.
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/runtime.h"

#define VECTOR_PF  14
#define MIB        0x100000u
#define GIB        0x40000000u
#define FOUR_GIB   0x100000000ull
#define WINDOW     0x40000000u /* linear address of the probe window, remapped per probe */
#define XAPIC_PAGE 0xfee00000u
#define IOAPIC     0xfec00000u
#define HPET       0xfed00000u
#define OPEN_BUS   0xffffffffu
#define WRITTEN    0x5a5a5a5au

#define PF_RSVD (1u << 3)

#define MB_INFO_MEM (1u << 0)

struct frame {
    uint32_t eip, cs, eflags;
};

extern char __image_start[], __bss_end[];

/* Linear 0-1 GiB is identity mapped with 2 MiB pages; 1-2 GiB holds the window. */
static uint64_t pdpt[4] __attribute__((aligned(32)));
static uint64_t pd_identity[512] __attribute__((aligned(4096)));
static uint64_t pd_window[512] __attribute__((aligned(4096)));
static uint64_t pt_window[512] __attribute__((aligned(4096)));

/* The #PF handler skips the faulting instruction when pf_skip is its length. */
static volatile uint32_t pf_skip, pf_count, pf_error, pf_addr;

__attribute__((interrupt)) static void page_fault(struct frame *f, unsigned long error)
{
    uint32_t cr2;
    __asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
    if (!pf_skip) {
        printf("unexpected #PF (error 0x%lx) at 0x%x, eip 0x%x\n", error, cr2, f->eip);
        guest_exit(3);
    }
    pf_count++;
    pf_error = (uint32_t)error;
    pf_addr = cr2;
    f->eip += pf_skip;
}

/*
 * Plain MOVs with fixed encodings: pollux decodes the instruction behind an
 * emulated access, and the #PF handler knows read32's length (8B 00).
 */
static uint32_t read32(uint32_t la)
{
    uint32_t v = la;
    __asm__ volatile("movl (%0), %0" : "+a"(v) : : "memory");
    return v;
}

static uint32_t read16(uint32_t la)
{
    uint32_t v = la;
    __asm__ volatile("movw (%0), %w0" : "+a"(v) : : "memory");
    return v & 0xffff;
}

static uint32_t read8(uint32_t la)
{
    uint32_t v = la;
    __asm__ volatile("movb (%0), %b0" : "+a"(v) : : "memory");
    return v & 0xff;
}

static void write32(uint32_t la, uint32_t v)
{
    __asm__ volatile("movl %1, (%0)" : : "a"(la), "d"(v) : "memory");
}

static void write16(uint32_t la, uint32_t v)
{
    __asm__ volatile("movw %w1, (%0)" : : "a"(la), "d"(v) : "memory");
}

static void write8(uint32_t la, uint32_t v)
{
    __asm__ volatile("movb %b1, (%0)" : : "a"(la), "d"(v) : "memory");
}

static uint32_t max_phys_bits(void)
{
    if (cpuid(0x80000000u, 0).eax < 0x80000008u)
        return 36;
    return cpuid(0x80000008u, 0).eax & 0xff;
}

static void paging_on(void)
{
    for (uint32_t i = 0; i < 512; i++)
        pd_identity[i] = (uint64_t)i * 2 * MIB | PTE_P | PTE_RW | PTE_PS;
    pd_window[0] = (uint32_t)pt_window | PTE_P | PTE_RW;
    pdpt[0] = (uint32_t)pd_identity | PTE_P;
    pdpt[1] = (uint32_t)pd_window | PTE_P;
    uint32_t cr0, cr4;
    __asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
    __asm__ volatile("mov %0, %%cr4" : : "r"(cr4 | CR4_PAE));
    __asm__ volatile("mov %0, %%cr3" : : "r"(pdpt) : "memory");
    __asm__ volatile("mov %%cr0, %0" : "=r"(cr0));
    __asm__ volatile("mov %0, %%cr0" : : "r"(cr0 | CR0_PG) : "memory");
}

/* Point the window at the page holding gpa (uncached, as device memory is); its linear address. */
static uint32_t map(uint64_t gpa)
{
    pt_window[0] = (gpa & ~0xfffull) | PTE_P | PTE_RW | PTE_PWT | PTE_PCD;
    __asm__ volatile("invlpg (%0)" : : "r"(WINDOW) : "memory");
    return WINDOW + (uint32_t)(gpa & 0xfff);
}

/* ---------------------------------------------------------------- own RAM */

static uint32_t pattern(uint32_t addr)
{
    return addr * 0x9e3779b1u ^ 0x5a17c0deu;
}

/* Fill (or, with check, compare) [start, end) word by word; returns the words that differ. */
static uint32_t pattern_range(uint32_t start, uint32_t end, bool check)
{
    /* Hide the address from the compiler: a range at 0 must not look like a null dereference. */
    __asm__("" : "+r"(start));
    uint32_t wrong = 0;
    for (uint32_t a = start; a < end; a += 4) {
        volatile uint32_t *p = (volatile uint32_t *)a;
        if (!check)
            *p = pattern(a);
        else if (*p != pattern(a) && wrong++ < 4)
            printf("word at 0x%x is 0x%x, wrote 0x%x\n", a, *p, pattern(a));
    }
    return wrong;
}

/* All RAM but the image itself (its stack and page tables included). */
static uint32_t pattern_all(uint32_t mem, bool check)
{
    uint32_t image_end = ((uint32_t)__bss_end + 0xfff) & ~0xfffu;
    return pattern_range(0, (uint32_t)__image_start, check) + pattern_range(image_end, mem, check);
}

/* ---------------------------------------------------------------- probes */

struct sweep {
    uint32_t probes, reads, writes, bad;
};

/* Read, write, read: true if both reads were open bus. */
static bool probe(struct sweep *s, uint64_t gpa)
{
    uint32_t la = map(gpa);
    uint32_t first = read32(la);
    write32(la, WRITTEN);
    uint32_t second = read32(la);
    s->probes++;
    s->reads += 2;
    s->writes++;
    bool ok = first == OPEN_BUS && second == OPEN_BUS;
    if (!ok && s->bad++ < 4)
        printf("guest-physical 0x%llx read 0x%x, then 0x%x after a write\n", gpa, first, second);
    return ok;
}

static int sweep(uint32_t mem, uint32_t phys_bits)
{
    struct sweep s = {0};
    probe(&s, mem);
    probe(&s, mem + 0xffc);
    for (uint64_t a = ((uint64_t)mem + MIB) & ~(uint64_t)(MIB - 1); a < FOUR_GIB; a += MIB)
        if (a != XAPIC_PAGE) /* backed by the local APIC */
            probe(&s, a);
    probe(&s, IOAPIC + 0x10); /* its data window; the MiB steps hit the index register */
    probe(&s, HPET + 0xf0);   /* the main counter */
    for (uint32_t bit = 32; bit < phys_bits; bit++) {
        probe(&s, 1ull << bit);
        probe(&s, (1ull << bit) + mem);
    }
    probe(&s, (1ull << phys_bits) - 4);
    printf("@bench {\"guest\":\"escape\",\"op\":\"sweep\",\"probes\":%u,\"reads\":%u,\"writes\":%u,"
           "\"bad\":%u}\n",
           s.probes, s.reads, s.writes, s.bad);
    return s.bad ? 1 : 0;
}

/* A page table entry naming an address at MAXPHYADDR: the guest's own #PF, reserved bit set. */
static int reserved_bit(uint32_t phys_bits)
{
    if (phys_bits >= 52) {
        printf("MAXPHYADDR is 52: no reserved address bits to try\n");
        return 1;
    }
    pt_window[0] = (1ull << phys_bits) | PTE_P | PTE_RW;
    __asm__ volatile("invlpg (%0)" : : "r"(WINDOW) : "memory");
    pf_skip = 2;
    read32(WINDOW);
    pf_skip = 0;
    /* The SDM sets P with RSVD; QEMU 7.2 leaves P clear. RSVD is the point. */
    bool ok = pf_count == 1 && (pf_error & PF_RSVD) && pf_addr == WINDOW;
    printf("@bench {\"guest\":\"escape\",\"op\":\"reserved_bit_pf\",\"ok\":%u,\"faults\":%u,"
           "\"error\":%u,\"maxphyaddr\":%u}\n",
           ok, pf_count, pf_error, phys_bits);
    return ok ? 0 : 1;
}

/* Odd widths and offsets in the local APIC page change nothing; aligned 32-bit accesses work. */
static int apic_odd(void)
{
    uint32_t base = map(XAPIC_PAGE);
    write32(base + 0xf0, 0x1ff); /* SVR: software-enable */
    uint32_t id = read32(base + 0x20), tpr = read32(base + 0x80);
    write32(base + 0x80, 0x20);
    bool aligned_works = read32(base + 0x80) == 0x20;
    write32(base + 0x80, tpr);

    uint32_t odd = read8(base + 0x20) ^ read16(base + 0x22) ^ read32(base + 0x21) ^
                   read32(base + 0x84) ^ read32(base + 0xffc) ^ read16(base + 0xffe) ^
                   read8(base + 0xfff);
    write8(base + 0x80, 0xff);
    write16(base + 0x80, 0xffff);
    write32(base + 0x81, 0xffffffff);
    write32(base + 0x84, 0xff);
    write8(base + 0x20, 0x7);
    write16(base + 0x300, 0x40ff); /* ICR low, 16 bits: would send vector 0xff to itself */
    bool unchanged = read32(base + 0x80) == tpr && read32(base + 0x20) == id;
    bool no_ipi = !(read32(base + 0x270) & (1u << 31)); /* IRR bit of vector 0xff */
    bool ok = aligned_works && unchanged && no_ipi;
    if (!ok)
        printf("local APIC: aligned write %s, registers %s, IPI %s (odd reads 0x%x)\n",
               aligned_works ? "works" : "lost", unchanged ? "unchanged" : "changed",
               no_ipi ? "none" : "sent", odd);
    printf("@bench {\"guest\":\"escape\",\"op\":\"apic_odd\",\"ok\":%u}\n", ok);
    return ok ? 0 : 1;
}

/* ---------------------------------------------------------------- arguments */

static bool parse_hex(const char *s, uint64_t *out)
{
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return false;
    uint64_t v = 0;
    int digits = 0;
    for (s += 2; *s && *s != ' '; s++, digits++) {
        char c = *s;
        uint32_t d = c >= '0' && c <= '9'   ? (uint32_t)(c - '0')
                     : c >= 'a' && c <= 'f' ? (uint32_t)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (uint32_t)(c - 'A' + 10)
                                            : 16;
        if (d == 16 || digits == 16)
            return false;
        v = v << 4 | d;
    }
    *out = v;
    return digits > 0;
}

static const char *second_word(const char *s)
{
    while (*s && *s != ' ')
        s++;
    while (*s == ' ')
        s++;
    return s;
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    /* The boot information lies in RAM the pattern overwrites: keep what is needed. */
    char args[64];
    const char *a = cmdline_args(info);
    uint32_t n = 0;
    for (; a[n] && n + 1 < sizeof(args); n++)
        args[n] = a[n];
    args[n] = '\0';
    if (!info || !(info->flags & MB_INFO_MEM)) {
        printf("no memory size in the boot information\n");
        return 1;
    }
    uint32_t mem = MIB + info->mem_upper * 1024;
    uint32_t phys_bits = max_phys_bits();
    printf("escape: %s, mem 0x%x, maxphyaddr %u\n", args, mem, phys_bits);
    if (mem > GIB) {
        printf("at most 1 GiB of RAM: only that much is identity mapped\n");
        return 1;
    }

    cpu_init();
    set_interrupt_handler(VECTOR_PF, page_fault);
    paging_on();
    pattern_all(mem, false);

    int rc;
    if (word_is(args, "probe")) {
        const char *what = second_word(args);
        uint64_t gpa;
        if (word_is(what, "high")) {
            gpa = 1ull << (phys_bits - 1);
        } else if (!parse_hex(what, &gpa) || gpa >> phys_bits) {
            printf("probe: '%s' is not a hex address below 2^%u\n", what, phys_bits);
            return 1;
        }
        printf("probing guest-physical 0x%llx\n", gpa);
        struct sweep s = {0};
        rc = probe(&s, gpa) ? 0 : 1;
    } else if (word_is(args, "sweep")) {
        rc = sweep(mem, phys_bits) | reserved_bit(phys_bits) | apic_odd();
    } else {
        printf("unknown mode '%s' (probe ADDR|high, sweep)\n", args);
        return 1;
    }
    uint32_t wrong = pattern_all(mem, true);
    printf("@bench {\"guest\":\"escape\",\"op\":\"pattern\",\"ok\":%u}\n", wrong == 0);
    return wrong ? 2 : rc;
}

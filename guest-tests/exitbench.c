/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Measures the round trip of the instructions that exit to the hypervisor:
 * for each op, the median TSC cycles of N single executions, reported as one
 * @bench line per op. Arguments: "N [long] [smp]", N iterations (default
 * 1000);
 * - long: the ops run in 64-bit code under identity-mapped 4-level paging,
 *   as a kernel runs (4 KiB pages where the code is, so the hypervisor's
 *   instruction fetch walks all four levels); without it, 32-bit protected
 *   mode with paging off;
 * - smp: every vCPU comes online first, the others then halt for good with
 *   interrupts enabled, and vCPU 0 measures once they have;
 * - counts (pollux's counting build, arch/x86/exit_counts.h): instead of
 *   times, per op, how many VMREADs, VMWRITEs, VMCB accesses, MSR accesses,
 *   VMLOADs and VMSAVEs one round trip makes (32-bit protected mode).
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"
#include "abi/hypercall.h"

#include <stddef.h>

#define ITERS_DEFAULT 1000u
#define ITERS_MAX     1000000u
#define WARMUP        10u
/* Deltas kept per op. Past this many iterations the median is that of the
 * last SAMPLES (the warmest), so memory stays small whatever N is. */
#define SAMPLES 65536u

#define MSR_IA32_PAT 0x277

/* The 64-bit timing loops, one per instruction (long_time below). */
extern const char time_cpuid64[], time_vmmcall64[], time_vmcall64[], time_in64[], time_rdmsr64[];

static void op_cpuid(void)
{
    cpuid(0, 0);
}

static void op_hypercall(void)
{
    hypercall(HC_NOP, 0, 0, 0);
}

static void op_pio_read(void)
{
    inb(COM1_LSR);
}

static void op_rdmsr(void)
{
    rdmsr(MSR_IA32_PAT);
}

/* Each op in both modes: a 32-bit function, or a 64-bit loop and the EAX, ECX, EDX it takes. */
static const struct {
    const char *name;
    void (*run)(void);
    const char *loop64; /* time_vmmcall64 stands for the hypercall: VMCALL on Intel */
    uint32_t eax, ecx, edx;
} ops[] = {
    {"cpuid", op_cpuid, time_cpuid64, 0, 0, 0},
    {"hypercall", op_hypercall, time_vmmcall64, HC_NOP, 0, 0},
    {"pio_read", op_pio_read, time_in64, 0, 0, COM1_LSR},
    {"rdmsr", op_rdmsr, time_rdmsr64, 0, MSR_IA32_PAT, 0},
};

static uint32_t deltas[SAMPLES];

static void swap(uint32_t *a, uint32_t i, uint32_t j)
{
    uint32_t t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/*
 * The k-th smallest of a[0..n), reordering a. Quickselect with a three-way
 * partition, because the deltas are mostly equal values and a two-way one
 * degrades to quadratic time on those.
 */
static uint32_t select_kth(uint32_t *a, uint32_t n, uint32_t k)
{
    uint32_t lo = 0, hi = n;
    for (;;) {
        uint32_t pivot = a[lo + (hi - lo) / 2];
        /* [lo, lt) < pivot, [lt, i) == pivot, [gt, hi) > pivot */
        uint32_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (a[i] < pivot)
                swap(a, lt++, i++);
            else if (a[i] > pivot)
                swap(a, i, --gt);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
}

/*
 * rdtsc; op; rdtsc, with no fences: the call overhead and TSC reads add a
 * few cycles, small next to an exit, and the median removes interrupts.
 */
static uint32_t measure(void (*run)(void), uint32_t iters)
{
    for (uint32_t i = 0; i < WARMUP; i++)
        run();
    for (uint32_t i = 0; i < iters; i++) {
        uint64_t t0 = rdtsc();
        run();
        uint64_t t1 = rdtsc();
        deltas[i % SAMPLES] = (uint32_t)(t1 - t0);
    }
    uint32_t n = iters < SAMPLES ? iters : SAMPLES;
    return select_kth(deltas, n, n / 2);
}

/* ------------------------------------------------------------ long mode */

#define FOUR_K  0x1000u
#define TWO_MIB 0x200000u

/* Identity map of the first GiB: 4 KiB pages below 2 MiB (the image's code), 2 MiB pages above. */
static uint64_t pml4[512] __attribute__((aligned(4096)));
static uint64_t pdpt[512] __attribute__((aligned(4096)));
static uint64_t pd[512] __attribute__((aligned(4096)));
static uint64_t pt[512] __attribute__((aligned(4096)));

/* Shared with the assembly below: keep the offsets in step. */
struct long_run {
    uint32_t loop;          /* 0: far pointer to the timing loop: its address, */
    uint16_t selector;      /* 4: and GDT_CODE64 */
    uint16_t unused;        /* 6 */
    uint32_t count;         /* 8: executions to time, at least 1 */
    uint32_t deltas;        /* 12: where their TSC deltas go */
    uint32_t eax, ecx, edx; /* 16, 20, 24: the instruction's inputs (EBX is 0) */
    uint32_t done;          /* 28: executions timed, counted in a 64-bit register */
};
_Static_assert(offsetof(struct long_run, selector) == 4 && offsetof(struct long_run, count) == 8 &&
                   offsetof(struct long_run, deltas) == 12 &&
                   offsetof(struct long_run, eax) == 16 && offsetof(struct long_run, edx) == 24 &&
                   offsetof(struct long_run, done) == 28,
               "struct long_run layout");

/*
 * void long_time(struct long_run *r): cdecl, from compatibility mode. A far
 * call into one 64-bit loop, which times r->count executions of its
 * instruction (each with its inputs loaded after the first RDTSC, the same
 * in the floor build) and goes back by a far return. The upper halves of RSP
 * and RSI are undefined after compatibility mode, hence the 32-bit moves
 * that clear them first.
 */
void long_time(struct long_run *r);
__asm__(".text\n"
        ".code32\n"
        ".globl long_time\n"
        "long_time:\n\t"
        "push %ebx\n\t"
        "push %esi\n\t"
        "mov 12(%esp), %esi\n\t"
        "lcall *(%esi)\n\t"
        "pop %esi\n\t"
        "pop %ebx\n\t"
        "ret\n"
        ".code64\n"
        ".macro timed name, insn:vararg\n"
        ".globl \\name\n"
        "\\name:\n\t"
        "mov %esp, %esp\n\t"
        "mov %esi, %esi\n\t"
        "mov 12(%rsi), %r8d\n\t"
        "mov 8(%rsi), %r9d\n\t"
        "xor %r10d, %r10d\n"
        "1:\n\t"
        "rdtsc\n\t"
        "mov %eax, %r11d\n\t"
        "mov 16(%rsi), %eax\n\t"
        "xor %ebx, %ebx\n\t"
        "mov 20(%rsi), %ecx\n\t"
        "mov 24(%rsi), %edx\n\t"
        "\\insn\n\t"
        "rdtsc\n\t"
        "sub %r11d, %eax\n\t"
        "mov %eax, (%r8,%r10,4)\n\t"
        "inc %r10d\n\t"
        "cmp %r9d, %r10d\n\t"
        "jb 1b\n\t"
        "mov %r10d, 28(%rsi)\n\t"
        "lretl\n"
        ".endm\n"
        "timed time_cpuid64, cpuid\n"
        "timed time_vmmcall64, vmmcall\n"
        "timed time_vmcall64, vmcall\n"
        "timed time_in64, in (%dx), %al\n"
        "timed time_rdmsr64, rdmsr\n"
        ".purgem timed\n"
        ".code32\n");

/*
 * Paging on with PAE and EFER.LME: the CPU is then in long mode, in
 * compatibility mode while CS stays the 32-bit GDT_CODE, where the C code
 * goes on running. Interrupts stay off: the IDT holds 32-bit gates.
 */
static bool enter_long_mode(void)
{
    extern const uint8_t __data_start[];
    if ((uint32_t)__data_start > TWO_MIB) {
        printf("the code ends at 0x%x, past the 4 KiB pages below 2 MiB\n", (uint32_t)__data_start);
        return false;
    }
    for (uint32_t i = 0; i < 512; i++) {
        pt[i] = i * FOUR_K | PTE_RW | PTE_P;
        pd[i] = i == 0 ? (uint32_t)pt | PTE_RW | PTE_P : i * TWO_MIB | PTE_PS | PTE_RW | PTE_P;
    }
    pdpt[0] = (uint32_t)pd | PTE_RW | PTE_P;
    pml4[0] = (uint32_t)pdpt | PTE_RW | PTE_P;

    cpu_init(); /* the runtime's GDT, which has the 64-bit code segment */
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_LME);
    __asm__ volatile("mov %%cr4, %%eax\n\t"
                     "or %0, %%eax\n\t"
                     "mov %%eax, %%cr4\n\t"
                     "mov %1, %%cr3\n\t"
                     "mov %%cr0, %%eax\n\t"
                     "or %2, %%eax\n\t"
                     "mov %%eax, %%cr0"
                     :
                     : "i"(CR4_PAE), "r"(pml4), "i"(CR0_PG)
                     : "eax", "memory");
    if (!(rdmsr(MSR_EFER) & EFER_LMA)) {
        printf("EFER.LMA is clear after turning paging on with EFER.LME\n");
        return false;
    }
    return true;
}

/* measure() in 64-bit code; 0 if the loop did not run as asked. */
static uint32_t measure_long(uint32_t op, uint32_t iters)
{
    bool vmcall = ops[op].loop64 == time_vmmcall64 && !hypercall_uses_vmmcall();
    struct long_run r = {
        .loop = (uint32_t)(vmcall ? time_vmcall64 : ops[op].loop64),
        .selector = GDT_CODE64,
        .count = WARMUP,
        .deltas = (uint32_t)deltas,
        .eax = ops[op].eax,
        .ecx = ops[op].ecx,
        .edx = ops[op].edx,
    };
    long_time(&r);
    /* In runs of at most SAMPLES: deltas then holds the last SAMPLES, as in measure(). */
    for (uint32_t left = iters; left > 0; left -= r.count) {
        r.count = left < SAMPLES ? left : SAMPLES;
        r.done = 0;
        long_time(&r);
        if (r.done != r.count) {
            printf("the 64-bit loop timed %u of %u\n", r.done, r.count);
            return 0;
        }
    }
    uint32_t n = iters < SAMPLES ? iters : SAMPLES;
    return select_kth(deltas, n, n / 2);
}

/* ------------------------------------------------------------ smp */

/* Longer than the halt polling of all the halted vCPUs put together (64 of them, each polling
 * at most pollux's default 200 us): after it, all are blocked in the hypervisor. */
#define SETTLE_US 20000u

static uint32_t halting; /* APs past their last instruction before HLT */

static void halt_forever(uint32_t index)
{
    (void)index;
    __atomic_add_fetch(&halting, 1, __ATOMIC_RELEASE);
    for (;;)
        __asm__ volatile("sti; hlt");
}

/* Every vCPU online, the APs halted; the number of vCPUs, 0 if they did not come up. */
static uint32_t start_and_halt_aps(void)
{
    uint32_t n = smp_start(false, halt_forever);
    if (n == 0)
        return 0;
    while (__atomic_load_n(&halting, __ATOMIC_ACQUIRE) < n - 1)
        cpu_relax();
    delay_us(SETTLE_US);
    return n;
}

#define COUNT_TRIES 20 /* windows tried per size */
#define COUNT_CLEAN 3  /* clean windows wanted per size */

static const char *const count_names[EXIT_COUNT_KINDS] = {
    [EXIT_COUNT_VMREAD] = "vmread",       [EXIT_COUNT_VMWRITE] = "vmwrite",
    [EXIT_COUNT_VMCB_READ] = "vmcb_read", [EXIT_COUNT_VMCB_WRITE] = "vmcb_write",
    [EXIT_COUNT_RDMSR] = "rdmsr",         [EXIT_COUNT_WRMSR] = "wrmsr",
    [EXIT_COUNT_XSETBV] = "xsetbv",       [EXIT_COUNT_VMLOAD] = "vmload",
    [EXIT_COUNT_VMSAVE] = "vmsave",
};

static uint32_t snapshot[2][HC_EXIT_COUNTS_WORDS];

static bool read_counts(uint32_t *words)
{
    return hypercall(HC_EXIT_COUNTS, (uint32_t)(uintptr_t)words, 0, 0) == HC_OK;
}

/*
 * The counts of a window of n ops between two HC_EXIT_COUNTS calls: each
 * the least over the clean windows, those in which the vCPU stayed on one
 * CPU and exited only for the n ops and the closing call. A host interrupt
 * taken in root mode can still add to a clean window; nothing can take
 * away. False if the counts cannot be read or no window was clean.
 */
static bool window_counts(void (*run)(void), uint32_t n, uint32_t out[EXIT_COUNT_KINDS])
{
    uint32_t clean = 0;
    for (uint32_t t = 0; t < COUNT_TRIES && clean < COUNT_CLEAN; t++) {
        if (!read_counts(snapshot[0]))
            return false;
        for (uint32_t i = 0; i < n; i++)
            run();
        if (!read_counts(snapshot[1]))
            return false;
        if (snapshot[1][0] != snapshot[0][0] || snapshot[1][1] - snapshot[0][1] != n + 1)
            continue;
        for (uint32_t k = 0; k < EXIT_COUNT_KINDS; k++) {
            uint32_t d = snapshot[1][2 + k] - snapshot[0][2 + k];
            out[k] = clean && out[k] < d ? out[k] : d;
        }
        clean++;
    }
    return clean > 0;
}

/*
 * Per round trip: the difference between windows of 2n and n ops, divided
 * by n, which leaves out the two calls' own share. Exact when it divides
 * and a window of 3n ops adds as much again.
 */
static bool count_op(const char *name, void (*run)(void), uint32_t n)
{
    uint32_t w[3][EXIT_COUNT_KINDS];
    for (uint32_t m = 0; m < 3; m++)
        if (!window_counts(run, (m + 1) * n, w[m])) {
            printf("exitbench: %s: no HC_EXIT_COUNTS (not the counting build?) or no clean "
                   "window\n",
                   name);
            return false;
        }
    bool exact = true;
    printf("@bench {\"guest\":\"exitbench\",\"op\":\"%s\",\"iters\":%u", name, n);
    for (uint32_t k = 0; k < EXIT_COUNT_KINDS; k++) {
        uint32_t step = w[1][k] - w[0][k];
        exact = exact && step % n == 0 && w[2][k] - w[1][k] == step;
        printf(",\"%s\":%u", count_names[k], step / n);
    }
    printf(",\"exact\":%s}\n", exact ? "true" : "false");
    return true;
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t iters = ITERS_DEFAULT;
    bool long_mode = false, smp = false, counts = false;
    for (const char *w = cmdline_args(info); *w != '\0'; w = skip_word(w)) {
        if (word_is(w, "long"))
            long_mode = true;
        else if (word_is(w, "smp"))
            smp = true;
        else if (word_is(w, "counts"))
            counts = true;
        else if (!parse_uint(w, &iters)) {
            printf("unknown argument %s (expected: N [long] [smp] [counts])\n", w);
            return 1;
        }
    }
    iters = iters < 1 ? 1 : iters > ITERS_MAX ? ITERS_MAX : iters;
    if (counts) {
        for (uint32_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
            if (!count_op(ops[i].name, ops[i].run, iters))
                return 1;
        return 0;
    }

    uint32_t vcpus = smp ? start_and_halt_aps() : 1;
    if (vcpus == 0 || (long_mode && !enter_long_mode()))
        return 1;
    for (uint32_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        uint32_t cycles = long_mode ? measure_long(i, iters) : measure(ops[i].run, iters);
        if (cycles == 0)
            return 1;
        printf("@bench {\"guest\":\"exitbench\",\"op\":\"%s\",\"cycles\":%u,\"iters\":%u,"
               "\"mode\":\"%s\",\"vcpus\":%u}\n",
               ops[i].name, cycles, iters, long_mode ? "long" : "protected", vcpus);
    }
    return 0;
}

/*
 * Measures the round trip of the instructions that exit to the hypervisor:
 * for each op, the median TSC cycles of N single executions (N = the first
 * argument, default 1000), reported as one @bench line per op.
 *
 * With a second argument "counts" (pollux's counting build,
 * arch/x86/exit_counts.h) it reports instead, per op, how many VMREADs,
 * VMWRITEs, VMCB accesses, MSR accesses, VMLOADs and VMSAVEs one round
 * trip makes.
 */
#include "arch/x86/exit_counts.h"
#include "guest-tests/runtime/runtime.h"
#include "vmm/hypercall.h"

#define ITERS_DEFAULT 1000u
#define ITERS_MAX     1000000u
#define WARMUP        10u
/* Deltas kept per op. Past this many iterations the median is that of the
 * last SAMPLES (the warmest), so memory stays small whatever N is. */
#define SAMPLES 65536u

#define MSR_IA32_PAT 0x277

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
    inb(0x3fd); /* COM1 LSR */
}

static void op_rdmsr(void)
{
    rdmsr(MSR_IA32_PAT);
}

static const struct {
    const char *name;
    void (*run)(void);
} ops[] = {
    {"cpuid", op_cpuid},
    {"hypercall", op_hypercall},
    {"pio_read", op_pio_read},
    {"rdmsr", op_rdmsr},
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
    uint32_t iters = arg_uint(info, ITERS_DEFAULT, 1, ITERS_MAX);
    if (word_is(skip_word(cmdline_args(info)), "counts")) {
        for (uint32_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
            if (!count_op(ops[i].name, ops[i].run, iters))
                return 1;
        return 0;
    }

    for (uint32_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        uint32_t cycles = measure(ops[i].run, iters);
        printf("@bench {\"guest\":\"exitbench\",\"op\":\"%s\",\"cycles\":%u,\"iters\":%u}\n",
               ops[i].name, cycles, iters);
    }
    return 0;
}

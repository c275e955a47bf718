/*
 * Measures the round trip of the instructions that exit to the hypervisor:
 * for each op, the median TSC cycles of N single executions (N = the first
 * argument, default 1000), reported as one @bench line per op.
 */
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

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    uint32_t iters = arg_uint(info, ITERS_DEFAULT, 1, ITERS_MAX);

    for (uint32_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        uint32_t cycles = measure(ops[i].run, iters);
        printf("@bench {\"guest\":\"exitbench\",\"op\":\"%s\",\"cycles\":%u,\"iters\":%u}\n",
               ops[i].name, cycles, iters);
    }
    return 0;
}

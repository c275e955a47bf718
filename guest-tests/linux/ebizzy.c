// SPDX-License-Identifier: GPL-2.0-only
// An ebizzy-shaped workload for the Linux guest (docs/seeds.md, seed 003): ebizzy is not
// packaged in Debian. Each thread repeatedly maps a chunk, copies one of the shared source
// chunks into it, searches the copy for a record and unmaps it; a search is one record, and
// the result is records per second of all threads together. As in ebizzy, the records are
// sorted and the search is a bsearch, so a record's cost is the mapping, the copy's page
// faults and the unmapping. The chunks are mmap'ed and
// munmap'ed each time (ebizzy -m): every record then takes page faults and, with the other
// threads on other CPUs, a TLB shootdown under the mm's lock, the kernel paths whose
// lock-holder preemption the seed's directed-yield pivot is about.
//
// ebizzy [seconds [threads]]: threads default to the online CPUs. Prints one @bench line.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SOURCE_CHUNKS 16
#define CHUNK_BYTES   (256 * 1024)
#define RECORDS       (CHUNK_BYTES / sizeof(uint64_t))

static uint64_t *sources[SOURCE_CHUNKS];
static double deadline;

struct worker {
    pthread_t thread;
    uint64_t seed;
    uint64_t records;
    int failed;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// xorshift64: each thread its own sequence, no shared state to contend on but the mm's.
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int compare(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    while (now() < deadline) {
        const uint64_t *src = sources[next(&w->seed) % SOURCE_CHUNKS];
        uint64_t *copy =
            mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (copy == MAP_FAILED) {
            w->failed = 1;
            return NULL;
        }
        memcpy(copy, src, CHUNK_BYTES);
        uint64_t key = src[next(&w->seed) % RECORDS];
        const void *found = bsearch(&key, copy, RECORDS, sizeof(key), compare);
        munmap(copy, CHUNK_BYTES);
        if (!found) {
            w->failed = 1;
            return NULL;
        }
        w->records++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    long threads = argc > 2 ? atol(argv[2]) : sysconf(_SC_NPROCESSORS_ONLN);
    if (seconds <= 0 || threads < 1 || threads > 1024) {
        fprintf(stderr, "usage: ebizzy [seconds [threads]]\n");
        return 2;
    }
    uint64_t fill = 0x9e3779b97f4a7c15ULL;
    for (int c = 0; c < SOURCE_CHUNKS; c++) {
        sources[c] = malloc(CHUNK_BYTES);
        if (!sources[c]) {
            fprintf(stderr, "ebizzy: out of memory\n");
            return 1;
        }
        for (size_t i = 0; i < RECORDS; i++)
            sources[c][i] = next(&fill);
        qsort(sources[c], RECORDS, sizeof(uint64_t), compare);
    }
    struct worker *workers = calloc((size_t)threads, sizeof(*workers));
    if (!workers)
        return 1;
    double start = now();
    deadline = start + seconds;
    for (long t = 0; t < threads; t++) {
        workers[t].seed = 0x2545f4914f6cdd1dULL * (uint64_t)(t + 1);
        if (pthread_create(&workers[t].thread, NULL, work, &workers[t]) != 0) {
            fprintf(stderr, "ebizzy: pthread_create failed\n");
            return 1;
        }
    }
    uint64_t records = 0;
    int failed = 0;
    for (long t = 0; t < threads; t++) {
        pthread_join(workers[t].thread, NULL);
        records += workers[t].records;
        failed |= workers[t].failed;
    }
    double elapsed = now() - start;
    if (failed) {
        fprintf(stderr, "ebizzy: a thread failed (mmap, or a key not found)\n");
        return 1;
    }
    printf("@bench {\"guest\":\"linux\",\"op\":\"ebizzy\",\"seconds\":%.3f,\"threads\":%ld,"
           "\"records\":%llu,\"records_per_s\":%.1f}\n",
           elapsed, threads, (unsigned long long)records, (double)records / elapsed);
    return 0;
}

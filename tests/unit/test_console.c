/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The console's ring and its drainers, against a UART the test opens and
 * closes: output order, whole calls, a full ring, and the synchronous mode
 * of shutdown and panics, where no CPU may spin on the ring's lock while the
 * UART is slow (a whole ring is seconds of serial line, and a CPU spinning
 * on the lock has interrupts off: the lockup watchdog fired on one).
 * The console's state is static: the synchronous tests come last.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "drivers/console.h"
#include "drivers/uart.h"

/* ---- the UART: bytes go out only while the line is open ---------------- */

#define OUT_MAX (256 * 1024)

static bool line_open = true;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static char out[OUT_MAX];
static size_t out_len;

static void wait_for_line(void)
{
    while (!__atomic_load_n(&line_open, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void emit(char c)
{
    pthread_mutex_lock(&out_lock);
    assert_true(out_len < OUT_MAX);
    out[out_len++] = c;
    pthread_mutex_unlock(&out_lock);
}

void uart_init(void) {}

void uart_putc(char c)
{
    wait_for_line();
    emit(c);
}

bool uart_tx_ready(void)
{
    return __atomic_load_n(&line_open, __ATOMIC_ACQUIRE);
}

bool uart_tx_done(void)
{
    return uart_tx_ready(); /* this UART sends a burst whole, or nothing */
}

void uart_tx_burst(const char *s, unsigned n)
{
    assert_true(n <= UART_FIFO_BYTES);
    wait_for_line();
    for (unsigned i = 0; i < n; i++)
        emit(s[i]);
}

int uart_getc(void)
{
    return -1;
}

static void set_line(bool open)
{
    __atomic_store_n(&line_open, open, __ATOMIC_RELEASE);
}

/* What reached the UART since the last call, as a string. */
static char *take_output(void)
{
    pthread_mutex_lock(&out_lock);
    char *s = malloc(out_len + 1);
    memcpy(s, out, out_len);
    s[out_len] = 0;
    out_len = 0;
    pthread_mutex_unlock(&out_lock);
    return s;
}

/* ---- the CPUs' side: a kicker that wakes nobody, heartbeats per thread -- */

enum { MAIN, FLUSHER, PRINTER, DRAINER, THREAD_SLOTS };
static _Thread_local unsigned slot; /* MAIN unless the thread says otherwise */
static unsigned long beats[THREAD_SLOTS];

static void count_beat(void)
{
    __atomic_fetch_add(&beats[slot], 1, __ATOMIC_RELAXED);
}

static unsigned long beats_of(unsigned who)
{
    return __atomic_load_n(&beats[who], __ATOMIC_RELAXED);
}

static bool kicked_nobody(void)
{
    return true;
}

static bool always(void *ctx)
{
    (void)ctx;
    return true;
}

static void drain_everything(void)
{
    while (console_pending())
        console_drain();
}

static int setup(void **state)
{
    (void)state;
    console_init();
    console_set_heartbeat(count_beat);
    return 0;
}

/* Wait up to 5 s of host time for cond(), which another thread makes true. */
static bool wait_until(bool (*cond)(void))
{
    for (int i = 0; i < 5000; i++) {
        if (cond())
            return true;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, 0);
    }
    return false;
}

/* ---- buffered mode ------------------------------------------------------ */

static void test_boot_writer_drains_itself(void **state)
{
    (void)state;
    /* No idle kicker yet (before the scheduler runs): the writer sends its own line. */
    kprintf("pollux: %s %d\n", "boot", 42);
    char *s = take_output();
    assert_string_equal(s, "pollux: boot 42\r\n");
    free(s);
    assert_false(console_pending());
}

static void test_lines_wait_for_a_drainer_in_order(void **state)
{
    (void)state;
    console_set_idle_kicker(kicked_nobody);
    kprintf("one\n");
    kprintf("two\n");
    char *s = take_output();
    assert_string_equal(s, ""); /* the kicked CPU has not come */
    free(s);
    assert_true(console_pending());
    console_drain_while(always, 0);
    drain_everything();
    s = take_output();
    assert_string_equal(s, "one\r\ntwo\r\n");
    free(s);
}

static void test_drain_while_stops_when_the_line_is_busy(void **state)
{
    (void)state;
    kprintf("waiting\n");
    set_line(false);
    console_drain_while(always, 0); /* returns: it waits for no FIFO */
    assert_true(console_pending());
    assert_false(console_draining());
    set_line(true);
    drain_everything();
    char *s = take_output();
    assert_string_equal(s, "waiting\r\n");
    free(s);
}

struct printer {
    unsigned id, lines;
};

static void *print_lines(void *arg)
{
    const struct printer *p = arg;
    for (unsigned i = 0; i < p->lines; i++) {
        kprintf("cpu %u line %u ......................................\n", p->id, i);
        console_drain_while(always, 0);
    }
    return 0;
}

static void test_calls_never_interleave(void **state)
{
    (void)state;
    enum { THREADS = 4, LINES = 500 };
    pthread_t t[THREADS];
    struct printer p[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        p[i] = (struct printer){i, LINES};
        assert_int_equal(pthread_create(&t[i], 0, print_lines, &p[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], 0);
    drain_everything();
    char *s = take_output();
    unsigned next[THREADS] = {0};
    unsigned total = 0;
    for (char *line = strtok(s, "\n"); line; line = strtok(0, "\n")) {
        unsigned id, n;
        assert_int_equal(sscanf(line, "cpu %u line %u", &id, &n), 2);
        assert_true(id < THREADS);
        assert_int_equal(n, next[id]); /* each CPU's lines whole and in its order */
        next[id]++;
        total++;
        assert_string_equal(line + strlen(line) - 7, "......\r");
    }
    assert_int_equal(total, THREADS * LINES);
    free(s);
}

static void test_full_ring_writer_drains_until_it_fits(void **state)
{
    (void)state;
    uint64_t bytes0, waits0, bytes1, waits1;
    console_counts(&bytes0, &waits0);
    /* 64 KiB of ring; nobody drains (the kicker wakes nobody): the writers must. */
    static char line[1001];
    memset(line, 'x', 1000);
    for (int i = 0; i < 100; i++)
        kprintf("%s\n", line);
    console_counts(&bytes1, &waits1);
    assert_int_equal(bytes1 - bytes0, 100 * 1002);
    assert_true(waits1 > waits0);
    drain_everything();
    char *s = take_output();
    assert_int_equal(strlen(s), 100 * 1002);
    free(s);
}

/* ---- synchronous mode (shutdown, panics) --------------------------------- */

static bool flushed, printed, drained;

static void *flush(void *arg)
{
    (void)arg;
    slot = FLUSHER;
    console_sync();
    __atomic_store_n(&flushed, true, __ATOMIC_RELEASE);
    return 0;
}

static void *print_one(void *arg)
{
    slot = PRINTER;
    kprintf("%s\n", (const char *)arg);
    __atomic_store_n(&printed, true, __ATOMIC_RELEASE);
    return 0;
}

static void *drain_once(void *arg)
{
    (void)arg;
    slot = DRAINER;
    console_drain_while(always, 0);
    __atomic_store_n(&drained, true, __ATOMIC_RELEASE);
    return 0;
}

static bool uart_owned(void)
{
    return console_draining();
}

static bool flush_done(void)
{
    return __atomic_load_n(&flushed, __ATOMIC_ACQUIRE);
}

static bool print_done(void)
{
    return __atomic_load_n(&printed, __ATOMIC_ACQUIRE);
}

static bool drain_done(void)
{
    return __atomic_load_n(&drained, __ATOMIC_ACQUIRE);
}

static bool printer_beat_a_while(void)
{
    return beats_of(PRINTER) >= 1000;
}

static void test_shutdown_flush_holds_nobody_on_the_ring(void **state)
{
    (void)state;
    /* A backlog the shutdown flush must send, and a stalled line. */
    kprintf("backlog 1\n");
    kprintf("backlog 2\n");
    set_line(false);
    pthread_t flusher, drainer, printer;
    assert_int_equal(pthread_create(&flusher, 0, flush, 0), 0);
    assert_true(wait_until(uart_owned)); /* the flusher waits on the line, as the drainer */
    /* Another CPU between time slices: the UART has its owner, so it goes on at once. */
    assert_int_equal(pthread_create(&drainer, 0, drain_once, 0), 0);
    assert_true(wait_until(drain_done));
    pthread_join(drainer, 0);
    /*
     * Another CPU prints: it waits for its line to reach the UART, and that
     * wait is a heartbeat. Spinning on the ring's lock behind the flusher,
     * as it did, it would beat never (and on a CPU, with interrupts off).
     */
    assert_int_equal(pthread_create(&printer, 0, print_one, "after the backlog"), 0);
    assert_true(wait_until(printer_beat_a_while));
    assert_false(print_done()); /* its line is not out yet: the line is stalled */
    set_line(true);
    assert_true(wait_until(flush_done));
    assert_true(wait_until(print_done));
    pthread_join(flusher, 0);
    pthread_join(printer, 0);
    char *s = take_output();
    assert_string_equal(s, "backlog 1\r\nbacklog 2\r\nafter the backlog\r\n");
    free(s);
    assert_false(console_pending());
}

static void test_synchronous_writer_returns_after_its_line(void **state)
{
    (void)state;
    kprintf("now synchronous\n");
    char *s = take_output();
    assert_string_equal(s, "now synchronous\r\n");
    free(s);
}

static void test_call_larger_than_the_ring_goes_out_after_the_buffered(void **state)
{
    (void)state;
    enum { BIG = 70 * 1024 };
    char *big = malloc(BIG + 1);
    memset(big, 'y', BIG);
    big[BIG] = 0;
    kprintf("%s\n", big);
    char *s = take_output();
    assert_int_equal(strlen(s), BIG + 2);
    assert_memory_equal(s, big, BIG);
    assert_string_equal(s + BIG, "\r\n");
    free(s);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boot_writer_drains_itself),
        cmocka_unit_test(test_lines_wait_for_a_drainer_in_order),
        cmocka_unit_test(test_drain_while_stops_when_the_line_is_busy),
        cmocka_unit_test(test_calls_never_interleave),
        cmocka_unit_test(test_full_ring_writer_drains_until_it_fits),
        cmocka_unit_test(test_shutdown_flush_holds_nobody_on_the_ring),
        cmocka_unit_test(test_synchronous_writer_returns_after_its_line),
        cmocka_unit_test(test_call_larger_than_the_ring_goes_out_after_the_buffered),
    };
    return cmocka_run_group_tests(tests, setup, 0);
}

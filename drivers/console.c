/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Output goes through a ring: a writer formats its whole call into the ring
 * under a short lock (so calls never interleave), then the bytes go to the
 * UART outside that lock, by one CPU at a time: an idle CPU if there is one
 * (console_set_idle_kicker), else the next CPU between two time slices
 * (sched_run). A serial line costs milliseconds under emulation; this way
 * a CPU printing in its exit path does not wait for the UART (nor for
 * another CPU's lines), unless the ring is full, and then it drains until
 * its own call fits rather than lose anything.
 * After a panic, during an NMI state dump and at shutdown the console
 * writes synchronously, after what was buffered: the writer becomes the
 * drainer and returns once its call is on the line. The ring's lock is only
 * ever held to copy bytes, never while the UART is slow.
 */
#include "drivers/console.h"

#include "arch/x86/cpu.h"
#include "arch/x86/spinlock.h"
#include "drivers/uart.h"
#include "lib/format.h"

#define RING_SIZE CONSOLE_BUFFER_BYTES

static struct spinlock ring_lock = SPINLOCK_INIT;
static char ring[RING_SIZE];
static uint64_t ring_head, ring_tail; /* bytes ever written to the ring, and taken out of it */
static bool draining;                 /* a CPU is writing taken bytes to the UART */
static bool synchronous;              /* panic, state dump, shutdown: no more buffering */
static bool (*kick_idle)(void);
static void (*heartbeat)(void); /* the lockup watchdog's: waiting for the UART is progress */
static uint64_t bytes_written, full_waits;

void console_init(void)
{
    uart_init();
}

void console_set_idle_kicker(bool (*kick)(void))
{
    __atomic_store_n(&kick_idle, kick, __ATOMIC_RELEASE);
}

void console_set_heartbeat(void (*beat)(void))
{
    __atomic_store_n(&heartbeat, beat, __ATOMIC_RELEASE);
}

static void beat(void)
{
    void (*fn)(void) = __atomic_load_n(&heartbeat, __ATOMIC_ACQUIRE);
    if (fn)
        fn();
}

static void count_sink(char c, void *ctx)
{
    *(uint64_t *)ctx += c == '\n' ? 2 : 1;
}

static void ring_sink(char c, void *ctx)
{
    (void)ctx;
    if (c == '\n')
        ring[ring_head++ % RING_SIZE] = '\r';
    ring[ring_head++ % RING_SIZE] = c;
}

static void uart_sink(char c, void *ctx)
{
    (void)ctx;
    if (c == '\n')
        uart_putc('\r');
    uart_putc(c);
}

/*
 * The drainer's step, the UART ready for a burst: take up to a FIFO's worth
 * from the ring under the lock and send it outside the lock. 0: the ring
 * was empty. The lock is never held while the UART is slow: a CPU spinning
 * on it has interrupts off, and a whole ring is seconds of serial line.
 */
static unsigned send_burst(void)
{
    char chunk[UART_FIFO_BYTES];
    unsigned n = 0;
    uint64_t flags = spin_lock_irqsave(&ring_lock);
    while (n < UART_FIFO_BYTES && ring_tail != ring_head)
        chunk[n++] = ring[ring_tail++ % RING_SIZE];
    spin_unlock_irqrestore(&ring_lock, flags);
    if (n)
        uart_tx_burst(chunk, n);
    return n;
}

/* Become the drainer, waiting for the one there is: its bursts are progress, not a lockup. */
static void claim_uart(void)
{
    while (__atomic_exchange_n(&draining, true, __ATOMIC_ACQUIRE)) {
        beat();
        cpu_relax();
    }
}

static void wait_uart(bool (*ready)(void))
{
    while (!ready()) {
        beat();
        cpu_relax();
    }
}

/* The UART claimed: burst by burst until every byte written to the ring before end is taken. */
static void send_through(uint64_t end)
{
    while (__atomic_load_n(&ring_tail, __ATOMIC_ACQUIRE) < end) {
        wait_uart(uart_tx_ready);
        send_burst();
    }
}

/* The ring's head now: what a synchronous writer sends through. */
static uint64_t ring_end(void)
{
    uint64_t flags = spin_lock_irqsave(&ring_lock);
    uint64_t end = ring_head;
    spin_unlock_irqrestore(&ring_lock, flags);
    return end;
}

/*
 * Synchronous: every byte written to the ring before end is on the line
 * when this returns (a power-off may follow: a FIFO's worth would be lost).
 */
static void drain_through(uint64_t end)
{
    claim_uart();
    send_through(end);
    wait_uart(uart_tx_done);
    __atomic_store_n(&draining, false, __ATOMIC_SEQ_CST);
}

void console_drain(void)
{
    console_drain_while(0, 0);
}

void console_drain_while(bool (*more)(void *ctx), void *ctx)
{
    do {
        if (__atomic_exchange_n(&draining, true, __ATOMIC_ACQUIRE))
            return; /* its owner re-checks the ring after letting go */
        for (;;) {
            /*
             * The UART takes a burst whenever its FIFO is empty: the bytes
             * then go out on the line while this CPU does something else. A
             * caller with a test waits for no FIFO, and stops when it fails.
             */
            if (!uart_tx_ready()) {
                if (more)
                    break;
                beat();
                cpu_relax();
                continue;
            }
            if (!send_burst())
                break;
            if (more && !more(ctx))
                break;
        }
        __atomic_store_n(&draining, false, __ATOMIC_SEQ_CST);
        /* A writer that appended while we were leaving saw us draining and left it to us. */
        if (more && console_pending() && !more(ctx)) {
            /* This CPU has other work now: an idle one takes the rest (idle CPUs halt). */
            bool (*kick)(void) = __atomic_load_n(&kick_idle, __ATOMIC_ACQUIRE);
            if (kick)
                kick();
        }
    } while (!more && !__atomic_load_n(&synchronous, __ATOMIC_SEQ_CST) &&
             __atomic_load_n(&ring_head, __ATOMIC_SEQ_CST) !=
                 __atomic_load_n(&ring_tail, __ATOMIC_SEQ_CST));
}

bool console_draining(void)
{
    return __atomic_load_n(&draining, __ATOMIC_ACQUIRE);
}

bool console_pending(void)
{
    return __atomic_load_n(&ring_head, __ATOMIC_ACQUIRE) !=
           __atomic_load_n(&ring_tail, __ATOMIC_ACQUIRE);
}

uint64_t console_room(void)
{
    return RING_SIZE - (__atomic_load_n(&ring_head, __ATOMIC_ACQUIRE) -
                        __atomic_load_n(&ring_tail, __ATOMIC_ACQUIRE));
}

static bool no_room(void *ctx)
{
    return console_room() < *(const uint64_t *)ctx;
}

/*
 * Only a bug prints more than the ring holds: it goes straight to the UART,
 * after everything buffered, and from then on the console is synchronous.
 */
static void write_unbuffered(const char *fmt, va_list ap, uint64_t len)
{
    __atomic_store_n(&synchronous, true, __ATOMIC_SEQ_CST);
    claim_uart();
    send_through(ring_end());
    vformat(uart_sink, 0, fmt, ap);
    wait_uart(uart_tx_done);
    uint64_t flags = spin_lock_irqsave(&ring_lock);
    bytes_written += len;
    spin_unlock_irqrestore(&ring_lock, flags);
    __atomic_store_n(&draining, false, __ATOMIC_SEQ_CST);
}

/* Bytes a call writes, line ends as CR LF. */
static uint64_t formatted_length(const char *fmt, va_list ap)
{
    uint64_t len = 0;
    va_list count;
    va_copy(count, ap);
    vformat(count_sink, &len, fmt, count);
    va_end(count);
    return len;
}

/* The call into the ring (its lock held, room made) and on towards the UART. */
static void ring_write(const char *fmt, va_list ap, uint64_t len, uint64_t flags)
{
    vformat(ring_sink, 0, fmt, ap);
    bytes_written += len;
    uint64_t end = ring_head;
    bool sync = __atomic_load_n(&synchronous, __ATOMIC_SEQ_CST);
    spin_unlock_irqrestore(&ring_lock, flags);
    if (sync) {
        drain_through(end);
        return;
    }
    /*
     * Before the scheduler runs (boot), the writer drains; after, an idle
     * CPU, or the next CPU between time slices.
     */
    bool (*kick)(void) = __atomic_load_n(&kick_idle, __ATOMIC_ACQUIRE);
    if (!kick)
        console_drain();
    else
        kick();
}

void kvprintf(const char *fmt, va_list ap)
{
    uint64_t len = formatted_length(fmt, ap);
    if (len > RING_SIZE) {
        write_unbuffered(fmt, ap, len);
        return;
    }
    uint64_t flags;
    for (;;) {
        flags = spin_lock_irqsave(&ring_lock);
        if (ring_head - ring_tail + len <= RING_SIZE)
            break;
        full_waits++;
        spin_unlock_irqrestore(&ring_lock, flags);
        /* Only until this call fits: a long drain would stall this CPU for seconds. */
        console_drain_while(no_room, &len);
        beat();
        cpu_relax();
    }
    ring_write(fmt, ap, len, flags);
}

bool ktryprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    uint64_t len = formatted_length(fmt, ap);
    bool sync = __atomic_load_n(&synchronous, __ATOMIC_SEQ_CST);
    uint64_t flags = spin_lock_irqsave(&ring_lock);
    bool fits = ring_head - ring_tail + len <= RING_SIZE;
    if (fits && !sync) {
        ring_write(fmt, ap, len, flags); /* unlocks */
    } else {
        spin_unlock_irqrestore(&ring_lock, flags);
        /* Synchronous (a panic, shutdown): every writer waits for the UART, this one too. */
        if (sync)
            kvprintf(fmt, ap);
    }
    va_end(ap);
    return fits || sync;
}

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvprintf(fmt, ap);
    va_end(ap);
}

void console_event(const char *name, struct json *j)
{
    const char *text = json_end(j);
    kprintf("@%s %s\n", name, text);
}

void console_counts(uint64_t *bytes, uint64_t *waits)
{
    *bytes = __atomic_load_n(&bytes_written, __ATOMIC_RELAXED);
    *waits = __atomic_load_n(&full_waits, __ATOMIC_RELAXED);
}

void console_sync(void)
{
    __atomic_store_n(&synchronous, true, __ATOMIC_SEQ_CST);
    drain_through(ring_end());
}

/* Wait a while for the interrupted holder to finish; true if it did. */
static bool lock_freed(void)
{
    uint32_t held = __atomic_load_n(&ring_lock.next, __ATOMIC_ACQUIRE);
    for (unsigned spins = 0; spins < 10000000; spins++) {
        if (__atomic_load_n(&ring_lock.owner, __ATOMIC_ACQUIRE) - held < 0x80000000u)
            return true; /* every ticket taken before the NMI has been served */
        cpu_relax();
    }
    return false;
}

void console_nmi_takeover(void)
{
    __atomic_store_n(&synchronous, true, __ATOMIC_RELEASE);
    if (!lock_freed())
        console_panic_takeover();
    /* The drainer may be the CPU this NMI interrupted: its chunk is lost. */
    for (unsigned spins = 0; spins < 10000000 && __atomic_load_n(&draining, __ATOMIC_ACQUIRE);
         spins++)
        cpu_relax();
    __atomic_store_n(&draining, false, __ATOMIC_RELEASE);
}

void console_panic_takeover(void)
{
    /* The other CPUs are stopped: whatever they held stays held unless we drop it. */
    __atomic_store_n(&ring_lock.owner, ring_lock.next, __ATOMIC_RELEASE);
    __atomic_store_n(&draining, false, __ATOMIC_RELEASE);
    __atomic_store_n(&synchronous, true, __ATOMIC_RELEASE);
}

#include "drivers/console.h"

#include "arch/x86/spinlock.h"
#include "drivers/uart.h"
#include "lib/format.h"

static struct spinlock console_lock = SPINLOCK_INIT;

static void sink(char c, void *ctx)
{
    (void)ctx;
    if (c == '\n')
        uart_putc('\r');
    uart_putc(c);
}

void console_init(void)
{
    uart_init();
}

void kvprintf(const char *fmt, va_list ap)
{
    uint64_t flags = spin_lock_irqsave(&console_lock);
    vformat(sink, 0, fmt, ap);
    spin_unlock_irqrestore(&console_lock, flags);
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

void console_nmi_takeover(void)
{
    uint32_t held = __atomic_load_n(&console_lock.next, __ATOMIC_ACQUIRE);
    for (unsigned spins = 0; spins < 10000000; spins++) {
        if (__atomic_load_n(&console_lock.owner, __ATOMIC_ACQUIRE) - held < 0x80000000u)
            return; /* every ticket taken before the NMI has been served */
        cpu_relax();
    }
    console_panic_takeover();
}

void console_panic_takeover(void)
{
    __atomic_store_n(&console_lock.owner, console_lock.next, __ATOMIC_RELEASE);
}

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

void console_panic_takeover(void)
{
    __atomic_store_n(&console_lock.owner, console_lock.next, __ATOMIC_RELEASE);
}

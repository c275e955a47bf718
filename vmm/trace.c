#include "vmm/trace.h"

#include <stdarg.h>

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "vmm/vm.h"

const char *const trace_names[TRACE_KIND_COUNT + 1] = {
    [TRACE_HALT_POLL] = "halt_poll",
};
unsigned trace_mask;

void trace_line(const struct vm *vm, const char *event, const char *fmt, ...)
{
    char details[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(details, sizeof(details), fmt, ap);
    va_end(ap);
    kprintf("%llu: %s: %s: %s\n", (unsigned long long)tsc_to_ns(rdtsc()), vm->cfg.name, event,
            details);
}

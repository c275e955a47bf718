/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest runtime: startup, COM1 console, printf, command line, hypercalls
 * and exit. Freestanding: no libc and no libgcc.
 */
#include "guest-tests/runtime/runtime.h"

#include <stdarg.h>
#include <stddef.h>

#define COM1_THR  0x3f8
#define LSR_THRE  (1u << 5) /* transmit holding register empty */
#define EXIT_PORT 0xf4      /* isa-debug-exit */

/* "AuthenticAMD" as CPUID leaf 0 returns it in EBX, EDX, ECX. */
#define AMD_EBX 0x68747541u
#define AMD_EDX 0x69746e65u
#define AMD_ECX 0x444d4163u

/* AMD CPUs raise #UD on VMCALL and Intel CPUs on VMMCALL. */
static bool use_vmmcall;

uint16_t pic_masks_found;

/* Called from entry.S with the multiboot registers. */
_Noreturn void runtime_start(uint32_t magic, const struct mb_info *info)
{
    /*
     * First, as an OS does: the firmware left the PIT's IRQ 0 unmasked at
     * vector 8, the double fault's in protected mode (vmm/dev/vpic.c).
     */
    pic_masks_found = (uint16_t)(inb(PIC1_DATA) | inb(PIC2_DATA) << 8);
    outb(PIC1_DATA, 0xff);
    outb(PIC2_DATA, 0xff);
    struct cpuid_regs v = cpuid(0, 0);
    use_vmmcall = v.ebx == AMD_EBX && v.edx == AMD_EDX && v.ecx == AMD_ECX;
    guest_exit((uint32_t)guest_main(magic, magic == MB_BOOT_MAGIC ? info : NULL));
}

_Noreturn void guest_exit(uint32_t code)
{
    outl(EXIT_PORT, code);
    /* Without an exit device the write does nothing: stop here instead. */
    for (;;)
        __asm__ volatile("cli; hlt");
}

uint32_t hypercall(uint32_t nr, uint32_t a, uint32_t b, uint32_t c)
{
    /* "memory": calls such as HC_PUTS read guest memory. */
    if (use_vmmcall)
        __asm__ volatile("vmmcall" : "+a"(nr) : "b"(a), "c"(b), "d"(c) : "memory");
    else
        __asm__ volatile("vmcall" : "+a"(nr) : "b"(a), "c"(b), "d"(c) : "memory");
    return nr;
}

uint32_t hypercall4(uint32_t nr, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3)
{
    if (use_vmmcall)
        __asm__ volatile("vmmcall" : "+a"(nr) : "b"(a0), "c"(a1), "d"(a2), "S"(a3) : "memory");
    else
        __asm__ volatile("vmcall" : "+a"(nr) : "b"(a0), "c"(a1), "d"(a2), "S"(a3) : "memory");
    return nr;
}

bool hypercall_uses_vmmcall(void)
{
    return use_vmmcall;
}

void serial_putc(char c)
{
    while (!(inb(COM1_LSR) & LSR_THRE))
        ;
    outb(COM1_THR, (uint8_t)c);
}

void serial_puts(const char *s)
{
    while (*s != '\0')
        serial_putc(*s++);
}

/*
 * Divide *n by d in place and return the remainder. 32-bit code would call
 * libgcc's __udivdi3 for a 64-bit division; two DIVs do it instead, the high
 * word first, so each quotient fits in 32 bits (the remainder r < d).
 */
static uint32_t divmod64(uint64_t *n, uint32_t d)
{
    uint32_t hi = (uint32_t)(*n >> 32), lo = (uint32_t)*n;
    uint32_t qhi = hi / d, r = hi % d, qlo;
    __asm__("divl %4" : "=a"(qlo), "=d"(r) : "a"(lo), "d"(r), "rm"(d));
    *n = ((uint64_t)qhi << 32) | qlo;
    return r;
}

static void put_number(uint64_t v, bool negative, uint32_t base, int width, char pad)
{
    char digits[20]; /* 2^64 - 1 has 20 decimal digits */
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[divmod64(&v, base)];
    } while (v != 0);

    int len = n + negative;
    /* The sign goes before zero padding and after space padding: -007, "  -7". */
    if (negative && pad == '0')
        serial_putc('-');
    for (; width > len; width--)
        serial_putc(pad);
    if (negative && pad == ' ')
        serial_putc('-');
    while (n > 0)
        serial_putc(digits[--n]);
}

void printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p != '%') {
            serial_putc(*p);
            continue;
        }
        p++;
        char pad = ' ';
        if (*p == '0') {
            pad = '0';
            p++;
        }
        int width = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            width = width * 10 + (*p - '0');
        int longs = 0;
        for (; *p == 'l'; p++)
            longs++;
        if (*p == '\0')
            break;

        switch (*p) {
        case 'd': {
            int64_t v = longs >= 2   ? va_arg(ap, long long)
                        : longs == 1 ? va_arg(ap, long)
                                     : va_arg(ap, int);
            put_number(v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0, 10, width, pad);
            break;
        }
        case 'u':
        case 'x': {
            uint64_t v = longs >= 2   ? va_arg(ap, unsigned long long)
                         : longs == 1 ? va_arg(ap, unsigned long)
                                      : va_arg(ap, unsigned int);
            put_number(v, false, *p == 'x' ? 16 : 10, width, pad);
            break;
        }
        case 's': {
            const char *s = va_arg(ap, const char *);
            int len = 0;
            while (s[len] != '\0')
                len++;
            for (; width > len; width--)
                serial_putc(' ');
            serial_puts(s);
            break;
        }
        case 'c':
            serial_putc((char)va_arg(ap, int));
            break;
        case '%':
            serial_putc('%');
            break;
        default:
            /* Print an unknown conversion as is, so the mistake shows. */
            serial_putc('%');
            serial_putc(*p);
            break;
        }
    }
    va_end(ap);
}

const char *cmdline(const struct mb_info *info)
{
    if (info == NULL || !(info->flags & MB_INFO_CMDLINE) || info->cmdline == 0)
        return "";
    return (const char *)(uintptr_t)info->cmdline;
}

const char *skip_word(const char *s)
{
    while (*s != '\0' && *s != ' ')
        s++;
    while (*s == ' ')
        s++;
    return s;
}

bool word_is(const char *s, const char *w)
{
    while (*w != '\0' && *s == *w)
        s++, w++;
    return *w == '\0' && (*s == ' ' || *s == '\0');
}

const char *cmdline_args(const struct mb_info *info)
{
    return skip_word(cmdline(info));
}

bool parse_uint(const char *s, uint32_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    uint32_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        uint32_t d = (uint32_t)(*s - '0');
        v = v > (UINT32_MAX - d) / 10 ? UINT32_MAX : v * 10 + d;
    }
    *out = v;
    return true;
}

bool parse_uint64(const char *s, uint64_t *out)
{
    const uint64_t limit = UINT64_MAX / 10; /* a constant: no 64-bit division at run time */
    if (*s < '0' || *s > '9')
        return false;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        uint32_t d = (uint32_t)(*s - '0');
        v = v > limit || v * 10 > UINT64_MAX - d ? UINT64_MAX : v * 10 + d;
    }
    *out = v;
    return true;
}

uint32_t arg_uint(const struct mb_info *info, uint32_t def, uint32_t min, uint32_t max)
{
    uint32_t v = def;
    parse_uint(cmdline_args(info), &v);
    return v < min ? min : v > max ? max : v;
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/vuart.h"

#include "drivers/console.h"
#include "drivers/ns16550.h"
#include "lib/string.h"

void vuart_init(struct vuart *u, const char *owner)
{
    memset(u, 0, sizeof(*u));
    u->owner = owner;
    u->lcr = 0x03;
    u->dll = 1;
}

void vuart_flush(struct vuart *u)
{
    if (!u->len)
        return;
    kprintf("[%s] %.*s\n", u->owner, (int)u->len, u->line);
    u->len = 0;
}

/* The line so far as one console line, if the console has room for it now. */
static bool print_line(struct vuart *u)
{
    if (!ktryprintf("[%s] %.*s\n", u->owner, (int)u->len, u->line))
        return false;
    u->len = 0;
    return true;
}

/*
 * Kept escaped as it comes: printable ASCII and tabs as they are, anything
 * else (and the backslash) as \xNN, so a guest can neither forge an event
 * nor move the cursor of the terminal reading the console. A full line
 * goes out first, if it can.
 */
static bool append(struct vuart *u, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    bool plain = (c >= 0x20 && c < 0x7f && c != '\\') || c == '\t';
    if (u->len + (plain ? 1 : 4) > VUART_LINE_MAX && !print_line(u))
        return false;
    if (plain) {
        u->line[u->len++] = (char)c;
        return true;
    }
    u->line[u->len++] = '\\';
    u->line[u->len++] = 'x';
    u->line[u->len++] = hex[c >> 4];
    u->line[u->len++] = hex[c & 15];
    return true;
}

/*
 * While a person types at the VM (vuart_set_interactive): each byte goes
 * out as it comes, raw, so that a prompt shows before its line ends and the
 * shell's escape sequences reach the terminal; the prefix still starts
 * every line, so no line of the VM's can pass for pollux's.
 */
static bool put_interactive(struct vuart *u, char c, bool line_end)
{
    const char *prefix = u->mid_line ? "" : "[";
    const char *owner = u->mid_line ? "" : u->owner;
    const char *close = u->mid_line ? "" : "] ";
    bool printed = line_end ? ktryprintf("%s%s%s\n", prefix, owner, close)
                            : ktryprintf("%s%s%s%c", prefix, owner, close, c);
    if (printed)
        u->mid_line = !line_end;
    return printed;
}

/* One byte out; false, and u as it was, when the console has no room for what it prints. */
static bool put(struct vuart *u, char c)
{
    bool line_end = c == '\n' || c == '\r';
    bool taken;
    if (c == '\n' && u->last_cr)
        taken = true; /* CR LF ended one line */
    else if (u->interactive)
        taken = put_interactive(u, c, line_end);
    else if (line_end)
        taken = u->len ? print_line(u) : ktryprintf("[%s] \n", u->owner);
    else
        taken = append(u, (unsigned char)c);
    if (taken)
        u->last_cr = c == '\r';
    return taken;
}

void vuart_set_interactive(struct vuart *u, bool on)
{
    if (on == u->interactive)
        return;
    if (on) {
        vuart_flush(u); /* the line so far, escaped as it was written */
    } else if (u->mid_line) {
        kprintf("\n"); /* end the raw line: what follows is escaped and whole again */
        u->mid_line = false;
    }
    u->interactive = on;
}

uint64_t vuart_puts(struct vuart *u, const char *s, uint64_t len)
{
    uint64_t i = 0;
    while (i < len && put(u, s[i]))
        i++;
    if (i < len)
        u->full_waits++;
    return i;
}

static void receive(struct vuart *u, uint8_t c)
{
    if (u->rx_count == VUART_RX_MAX) {
        u->lsr_errors |= LSR_OVERRUN;
        return;
    }
    u->rx[(u->rx_head + u->rx_count++) % VUART_RX_MAX] = c;
}

void vuart_input(struct vuart *u, char c)
{
    /* In loopback the receiver hears only the transmitter. */
    if (!(u->mcr & MCR_LOOPBACK))
        receive(u, (uint8_t)c);
}

/* The modem status lines: in loopback they are MCR's outputs, else a ready terminal. */
static uint8_t modem_lines(const struct vuart *u)
{
    if (!(u->mcr & MCR_LOOPBACK))
        return UART_MSR_CTS_DSR_DCD;
    uint8_t m = u->mcr;
    return (uint8_t)((m & MCR_RTS ? 0x10 : 0) | (m & MCR_DTR ? 0x20 : 0) |
                     (m & MCR_OUT1 ? 0x40 : 0) | (m & MCR_OUT2 ? 0x80 : 0));
}

/* The highest-priority pending interrupt's IIR identification, or IIR_NONE. */
static uint8_t interrupt_id(const struct vuart *u)
{
    if ((u->ier & IER_RLS) && u->lsr_errors)
        return IIR_RLS;
    if ((u->ier & IER_RDA) && u->rx_count)
        return IIR_RDA;
    if ((u->ier & IER_THRE) && u->thre_pending)
        return IIR_THRE;
    if ((u->ier & IER_MS) && u->msr_delta)
        return IIR_MS;
    return IIR_NONE;
}

bool vuart_irq(const struct vuart *u)
{
    return interrupt_id(u) != IIR_NONE && (u->mcr & MCR_OUT2);
}

struct vuart_read vuart_read(struct vuart *u, uint16_t offset)
{
    bool dlab = u->lcr & LCR_DLAB;
    switch (offset) {
    case UART_THR: {
        if (dlab)
            return (struct vuart_read){u->dll, false};
        if (!u->rx_count)
            return (struct vuart_read){0, false};
        uint8_t c = u->rx[u->rx_head];
        u->rx_head = (u->rx_head + 1) % VUART_RX_MAX;
        u->rx_count--;
        return (struct vuart_read){c, true};
    }
    case UART_IER:
        return (struct vuart_read){dlab ? u->dlm : u->ier, false};
    case UART_IIR: {
        uint8_t id = interrupt_id(u);
        /* Reading IIR acknowledges a THR-empty interrupt it reports. */
        bool ack = id == IIR_THRE;
        if (ack)
            u->thre_pending = false;
        return (struct vuart_read){id | (u->fcr & FCR_ENABLE ? IIR_FIFOS : 0), ack};
    }
    case UART_LCR:
        return (struct vuart_read){u->lcr, false};
    case UART_MCR:
        return (struct vuart_read){u->mcr, false};
    case UART_LSR: {
        uint8_t errors = u->lsr_errors;
        u->lsr_errors = 0;
        return (struct vuart_read){LSR_THRE | LSR_TEMT | errors | (u->rx_count ? LSR_DR : 0),
                                   errors != 0};
    }
    case UART_MSR: {
        uint8_t delta = u->msr_delta;
        u->msr_delta = 0;
        return (struct vuart_read){modem_lines(u) | delta, delta != 0};
    }
    default:
        return (struct vuart_read){u->scr, false};
    }
}

static void set_mcr(struct vuart *u, uint8_t value)
{
    uint8_t before = modem_lines(u);
    u->mcr = value & 0x1f;
    uint8_t after = modem_lines(u), changed = before ^ after;
    /* Delta CTS, delta DSR, trailing edge of RI, delta DCD. */
    u->msr_delta |= (uint8_t)((changed & 0x10 ? 0x01 : 0) | (changed & 0x20 ? 0x02 : 0) |
                              (before & ~after & 0x40 ? 0x04 : 0) | (changed & 0x80 ? 0x08 : 0));
}

bool vuart_write(struct vuart *u, uint16_t offset, uint8_t value)
{
    bool dlab = u->lcr & LCR_DLAB;
    switch (offset) {
    case UART_THR:
        if (dlab) {
            u->dll = value;
            break;
        }
        if (u->mcr & MCR_LOOPBACK) {
            receive(u, value);
        } else if (!put(u, (char)value)) {
            u->full_waits++;
            return false;
        }
        /* Sent at once: THR is empty again. */
        u->thre_pending = true;
        break;
    case UART_IER:
        if (dlab) {
            u->dlm = value;
            break;
        }
        /* Enabling the THR-empty interrupt with THR empty raises it. */
        if ((value & IER_THRE) && !(u->ier & IER_THRE))
            u->thre_pending = true;
        u->ier = value & 0x0f;
        break;
    case UART_IIR:
        u->fcr = value;
        if (value & FCR_CLEAR_RX || !(value & FCR_ENABLE))
            u->rx_count = 0;
        break;
    case UART_LCR:
        u->lcr = value;
        break;
    case UART_MCR:
        set_mcr(u, value);
        break;
    case UART_SCR:
        u->scr = value;
        break;
    default: /* LSR, MSR: read-only */
        break;
    }
    return true;
}

/* No key until a write has waited. */
static bool waited(const void *base)
{
    return ((const struct vuart *)base)->full_waits != 0;
}

static const struct stats_desc rows[] = {
    STATS_ROW(full_waits, COUNTER, NONE, S_DEVICES, struct vuart, full_waits,
              "`com1`: guest writes (OUT, `HC_PUTS`) that found the console's buffer full: not "
              "retired, the vCPU off its CPU until it drains",
              .present = waited),
};
const struct stats_table vuart_stats_table = STATS_TABLE(rows, 0);

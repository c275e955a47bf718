#include "vmm/vuart.h"

#include "drivers/console.h"
#include "lib/string.h"

#define REG_DATA 0 /* THR/RBR, or DLL with DLAB */
#define REG_IER  1 /* or DLM with DLAB */
#define REG_IIR  2 /* FCR on write */
#define REG_LCR  3
#define REG_MCR  4
#define REG_LSR  5
#define REG_MSR  6
#define REG_SCR  7

#define LCR_DLAB        0x80
#define LSR_DR          0x01
#define LSR_THRE        0x20
#define LSR_TEMT        0x40
#define IIR_NONE        0x01
#define MSR_CTS_DSR_DCD 0xb0

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
    /* Escaping can quadruple the length. */
    char out[VUART_LINE_MAX * 4 + 1];
    unsigned n = 0;
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = 0; i < u->len; i++) {
        unsigned char c = (unsigned char)u->line[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[n++] = (char)c;
        } else {
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = 0;
    kprintf("[%s] %s\n", u->owner, out);
    u->len = 0;
}

static void put(struct vuart *u, char c)
{
    if (c == '\n') {
        if (u->len)
            vuart_flush(u);
        else
            kprintf("[%s] \n", u->owner);
        return;
    }
    if (c == '\r')
        return;
    u->line[u->len++] = c;
    if (u->len == VUART_LINE_MAX)
        vuart_flush(u);
}

void vuart_puts(struct vuart *u, const char *s, uint64_t len)
{
    for (uint64_t i = 0; i < len; i++)
        put(u, s[i]);
}

void vuart_input(struct vuart *u, char c)
{
    uint32_t tail = u->rx_tail;
    if (tail - __atomic_load_n(&u->rx_head, __ATOMIC_ACQUIRE) == VUART_RX_MAX)
        return;
    u->rx[tail % VUART_RX_MAX] = (uint8_t)c;
    __atomic_store_n(&u->rx_tail, tail + 1, __ATOMIC_RELEASE);
}

static uint8_t receive(struct vuart *u)
{
    uint32_t head = u->rx_head;
    if (head == __atomic_load_n(&u->rx_tail, __ATOMIC_ACQUIRE))
        return 0;
    uint8_t c = u->rx[head % VUART_RX_MAX];
    __atomic_store_n(&u->rx_head, head + 1, __ATOMIC_RELEASE);
    return c;
}

uint32_t vuart_read(struct vuart *u, uint16_t offset)
{
    bool dlab = u->lcr & LCR_DLAB;
    switch (offset) {
    case REG_DATA:
        return dlab ? u->dll : receive(u);
    case REG_IER:
        return dlab ? u->dlm : u->ier;
    case REG_IIR:
        return IIR_NONE;
    case REG_LCR:
        return u->lcr;
    case REG_MCR:
        return u->mcr;
    case REG_LSR:
        return LSR_THRE | LSR_TEMT |
               (__atomic_load_n(&u->rx_tail, __ATOMIC_ACQUIRE) != u->rx_head ? LSR_DR : 0);
    case REG_MSR:
        return MSR_CTS_DSR_DCD;
    default:
        return u->scr;
    }
}

void vuart_write(struct vuart *u, uint16_t offset, uint8_t value)
{
    bool dlab = u->lcr & LCR_DLAB;
    switch (offset) {
    case REG_DATA:
        if (dlab)
            u->dll = value;
        else
            put(u, (char)value);
        break;
    case REG_IER:
        if (dlab)
            u->dlm = value;
        else
            u->ier = value & 0x0f;
        break;
    case REG_LCR:
        u->lcr = value;
        break;
    case REG_MCR:
        u->mcr = value & 0x1f;
        break;
    case REG_SCR:
        u->scr = value;
        break;
    default: /* FCR, LSR, MSR: accepted, nothing to do */
        break;
    }
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/vioapic.h"

#include "lib/string.h"

#define REG_ID      0x00
#define REG_VERSION 0x01
#define REG_ARB     0x02
#define REG_REDIR   0x10
#define ID_MASK     (0xfu << 24)
#define DEST_SHIFT  56
/* Bits a guest may write in an entry: all but delivery status and remote IRR. */
#define WRITABLE (~(uint64_t)(IOAPIC_PENDING | IOAPIC_REMOTE_IRR))

void ioapic_reset(struct ioapic *io)
{
    memset(io, 0, sizeof(*io));
    for (unsigned i = 0; i < IOAPIC_PINS; i++)
        io->redir[i] = IOAPIC_MASKED;
}

uint32_t ioapic_read(struct ioapic *io, uint32_t offset)
{
    if (offset == IOAPIC_REGSEL)
        return io->regsel;
    if (offset != IOAPIC_WINDOW)
        return 0;
    uint32_t r = io->regsel;
    if (r == REG_ID)
        return io->id;
    if (r == REG_VERSION)
        return (uint32_t)(IOAPIC_PINS - 1) << 16 | IOAPIC_VERSION;
    if (r == REG_ARB)
        return io->id;
    if (r >= REG_REDIR && r < REG_REDIR + 2 * IOAPIC_PINS) {
        uint64_t e = io->redir[(r - REG_REDIR) / 2];
        return r & 1 ? (uint32_t)(e >> 32) : (uint32_t)e;
    }
    return 0;
}

static struct ioapic_msg message(uint64_t e)
{
    return (struct ioapic_msg){.vector = (uint8_t)(e & IOAPIC_VECTOR),
                               .mode = (uint8_t)((e & IOAPIC_DELIVERY) >> 8),
                               .logical = e & IOAPIC_LOGICAL,
                               .level = e & IOAPIC_LEVEL,
                               .dest = (uint8_t)(e >> DEST_SHIFT)};
}

/* A level pin whose line is high and that may send: send, and wait for its EOI. */
static bool level_send(struct ioapic *io, unsigned pin, struct ioapic_msg *msg)
{
    uint64_t *e = &io->redir[pin];
    if (!(*e & IOAPIC_LEVEL) || (*e & (IOAPIC_MASKED | IOAPIC_REMOTE_IRR)) ||
        !(io->lines >> pin & 1))
        return false;
    *e |= IOAPIC_REMOTE_IRR;
    *msg = message(*e);
    return true;
}

bool ioapic_write(struct ioapic *io, uint32_t offset, uint32_t value, struct ioapic_msg *msg)
{
    if (offset == IOAPIC_REGSEL) {
        io->regsel = value & 0xff;
        return false;
    }
    if (offset != IOAPIC_WINDOW)
        return false;
    uint32_t r = io->regsel;
    if (r == REG_ID) {
        io->id = value & ID_MASK;
        return false;
    }
    if (r < REG_REDIR || r >= REG_REDIR + 2 * IOAPIC_PINS)
        return false;
    unsigned pin = (r - REG_REDIR) / 2;
    uint64_t *e = &io->redir[pin], v = *e;
    if (r & 1)
        v = (v & 0xffffffffu) | (uint64_t)value << 32;
    else
        v = (v & ~(uint64_t)0xffffffffu) | value;
    *e = (*e & ~WRITABLE) | (v & WRITABLE);
    /* An edge pin has no remote IRR; a pin turned edge-triggered drops it. */
    if (!(*e & IOAPIC_LEVEL))
        *e &= ~(uint64_t)IOAPIC_REMOTE_IRR;
    return level_send(io, pin, msg);
}

bool ioapic_set_line(struct ioapic *io, unsigned pin, bool asserted, struct ioapic_msg *msg)
{
    if (pin >= IOAPIC_PINS)
        return false;
    bool was = io->lines >> pin & 1;
    /*
     * Devices report their line after every access; an unchanged line sends
     * nothing. A level pin's message goes out when its line rises, when it is
     * unmasked or made level-triggered (ioapic_write) and at its EOI
     * (ioapic_eoi), whichever comes last.
     */
    if (was == asserted)
        return false;
    if (asserted)
        io->lines |= 1u << pin;
    else
        io->lines &= ~(1u << pin);
    uint64_t e = io->redir[pin];
    if (e & IOAPIC_LEVEL)
        return level_send(io, pin, msg);
    if (!asserted || was || (e & IOAPIC_MASKED))
        return false;
    *msg = message(e);
    return true;
}

unsigned ioapic_eoi(struct ioapic *io, uint8_t vector, struct ioapic_msg msgs[IOAPIC_PINS])
{
    unsigned n = 0;
    /* Every pin with the vector leaves remote IRR before any sends again (KVM's
     * __kvm_ioapic_update_eoi walks them all). */
    for (unsigned pin = 0; pin < IOAPIC_PINS; pin++) {
        uint64_t *e = &io->redir[pin];
        if ((*e & IOAPIC_REMOTE_IRR) && (*e & IOAPIC_VECTOR) == vector)
            *e &= ~(uint64_t)IOAPIC_REMOTE_IRR;
        else
            continue;
        if (level_send(io, pin, &msgs[n]))
            n++;
    }
    return n;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The PC's legacy timer and interrupt controllers as a guest without a
 * local APIC driver of its own would use them (legacy_pic=on, the default
 * for bundled guests), on vCPU 0:
 *   - vCPU 0's LINT0 starts in ExtINT mode (virtual wire: the 8259 reaches it)
 *   - both 8259s initialized as a BIOS would (ICW1-ICW4, vectors 0x20 and
 *     0x28), the PIT's channel 0 in mode 2 at 1 kHz: ticks through the IDT
 *     in STI; HLT, no sooner than the PIT's period allows
 *   - the ISR and the IRR read through OCW3 in the handler, non-specific
 *     and specific EOI, auto-EOI (ICW4 bit 1), a masked IRQ 0 that waits in
 *     the IRR and comes once unmasked
 *   - a level-triggered line (the ELCR's IRQ 4, which COM1's THR-empty
 *     interrupt drives, as on a PC): it asks again after each EOI while the
 *     line is high, the edge-triggered one once
 *   - channel 0 in mode 0 read through the counter latch, counting down,
 *     its one interrupt, the read-back status; channel 2 gated by port 0x61
 *     bit 0, its OUT2 (bit 5) rising a count after the gate opened
 *   - then real mode (a 16-bit copy below 1 MiB, through a 16-bit protected
 *     mode segment), the master's vector base moved to 0x08 as a BIOS has
 *     it, the IVT's entry 8, ticks in STI; HLT, and back to protected mode
 * First, the 8259s and the 8254 as the runtime found them at entry: as
 * SeaBIOS leaves them (issue 37). Both ways, the I/O APIC every VM has (issue 37): its version
 * register and a redirection entry written and read back. With the argument "off" (a legacy_pic=off
 * VM) it checks the masks-only PIC of before and that no 8254 answers. Each check prints "check
 * <name>: ok" or "check <name>: FAIL ..."; the exit code is the number of failures. Interrupts
 * taken inside their own handler (QEMU 7.2 delivers an injected one twice now and then,
 * docs/virtual_interrupts.md) are counted apart and printed, never as ticks.
 */
#include <stddef.h>

#include "guest-tests/runtime/check.h"
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"

#define PIC1_CMD 0x20
#define PIC2_CMD 0xa0
#define ELCR1    0x4d0
#define OCW3_IRR 0x0a
#define OCW3_ISR 0x0b
#define EOI      0x20
#define EOI_SPEC 0x60

#define PIT_CH0     0x40
#define PIT_CH2     0x42
#define PIT_MODE    0x43
#define PORT_B      0x61
#define PORT_B_GATE 0x01
#define PORT_B_SPKR 0x02
#define PORT_B_OUT2 0x20
#define PIT_KHZ     1193 /* counts per ms */
#define MODE0_SHORT (5 * PIT_KHZ)

#define COM1_IER   0x3f9
#define COM1_IIR   0x3fa
#define COM1_MCR   0x3fc
#define MCR_OUT2   0x08
#define IER_THRE   0x02
#define LAPIC_LVT0 0x350

#define VECTOR_BASE  0x20 /* the master's in protected mode; the slave's is 0x28 */
#define VECTOR_IRQ0  VECTOR_BASE
#define VECTOR_IRQ4  (VECTOR_BASE + 4)
#define VECTOR_ALARM 0x41 /* the local APIC timer: a HLT wakes when a wait is over */
#define TICKS        10
#define WAIT_MS      2000

/* The real-mode copy: below 1 MiB, above the IVT and the BDA, not where the image is. */
#define RM_BASE    0x7000
#define RM_STACK   0x6ff0
#define GDT_CODE16 0x18
#define GDT_DATA16 0x20

enum eoi_kind { EOI_NONSPECIFIC, EOI_SPECIFIC, EOI_AUTO };

static volatile uint32_t ticks, nested, irq4;
static volatile bool in_irq0;
static volatile enum eoi_kind eoi_kind;
static volatile uint8_t isr_in_handler, irr_in_handler, isr_after_eoi;
static volatile bool level_mode;

static uint8_t read_ocw3(uint16_t cmd, uint8_t which)
{
    outb(cmd, which);
    return inb(cmd);
}

__attribute__((interrupt)) static void irq0_handler(struct interrupt_frame *f)
{
    (void)f;
    if (in_irq0) {
        nested++;
        return;
    }
    in_irq0 = true;
    ticks++;
    isr_in_handler = read_ocw3(PIC1_CMD, OCW3_ISR);
    irr_in_handler = read_ocw3(PIC1_CMD, OCW3_IRR);
    if (eoi_kind == EOI_NONSPECIFIC)
        outb(PIC1_CMD, EOI);
    else if (eoi_kind == EOI_SPECIFIC)
        outb(PIC1_CMD, EOI_SPEC | 0);
    isr_after_eoi = read_ocw3(PIC1_CMD, OCW3_ISR);
    in_irq0 = false;
}

/*
 * COM1's THR-empty interrupt on IRQ 4. Its line stays high until IIR is read:
 * level-triggered the PIC asks again after each EOI, so the third read of
 * IIR ends it; edge-triggered one rise is one request, whatever follows.
 */
__attribute__((interrupt)) static void irq4_handler(struct interrupt_frame *f)
{
    (void)f;
    if (++irq4 >= 3 && level_mode)
        (void)inb(COM1_IIR);
    outb(PIC1_CMD, EOI);
}

__attribute__((interrupt)) static void alarm_handler(struct interrupt_frame *f)
{
    (void)f;
    lapic_eoi();
}

/*
 * STI; HLT until *counter reaches want (NULL: none does) or the TSC us from
 * now, the local APIC timer waking the last HLT: every wait halts, so an
 * emulator spends nothing on it while its other CPU idles.
 */
static bool wait_count_us(volatile uint32_t *counter, uint32_t want, uint64_t us)
{
    uint64_t end = rdtsc() + us_to_tsc(us);
    for (;;) {
        uint64_t now = rdtsc();
        if ((counter && *counter >= want) || now >= end)
            break;
        uint64_t ticks = div64((end - now) * apic_timer_khz(), tsc_khz()) + 1;
        lapic_write(LAPIC_TMICT, ticks > 0xffffffffu ? 0xffffffffu : (uint32_t)ticks);
        wait_for_interrupt();
    }
    lapic_write(LAPIC_TMICT, 0);
    return counter && *counter >= want;
}

static bool wait_count(volatile uint32_t *counter, uint32_t want, uint32_t ms)
{
    return wait_count_us(counter, want, ms * 1000ull);
}

/* Interrupts taken for us microseconds, halted between them. */
static void open_for(uint32_t us)
{
    wait_count_us(NULL, 0, us);
}

/* ICW1-ICW4 for both, as a BIOS does: master at master_base, slave at 0x28, all masked. */
static void init_pics(uint8_t master_base, uint8_t icw4)
{
    outb(PIC1_CMD, 0x11);
    outb(PIC1_DATA, master_base);
    outb(PIC1_DATA, 0x04);
    outb(PIC1_DATA, icw4);
    outb(PIC2_CMD, 0x11);
    outb(PIC2_DATA, VECTOR_BASE + 8);
    outb(PIC2_DATA, 0x02);
    outb(PIC2_DATA, 0x01);
    outb(PIC1_DATA, 0xff);
    outb(PIC2_DATA, 0xff);
}

static void pit_program(unsigned channel, uint8_t mode, uint16_t count)
{
    outb(PIT_MODE, (uint8_t)(channel << 6 | 0x30 | mode << 1));
    outb((uint16_t)(PIT_CH0 + channel), (uint8_t)count);
    outb((uint16_t)(PIT_CH0 + channel), (uint8_t)(count >> 8));
}

static uint16_t pit_latched(unsigned channel)
{
    outb(PIT_MODE, (uint8_t)(channel << 6));
    uint16_t lo = inb((uint16_t)(PIT_CH0 + channel));
    return (uint16_t)(lo | inb((uint16_t)(PIT_CH0 + channel)) << 8);
}

/* vCPU 0's LINT0 at power-on: ExtINT, unmasked (KVM's vCPU reset, a PC's firmware). */
static void check_lint0(void)
{
    uint32_t lvt0 = lapic_read(LAPIC_LVT0);
    if (lvt0 != 0x700)
        printf("legacy: LVT0 0x%x\n", lvt0);
    vcheck(lvt0 == 0x700, "lint0-extint", "vCPU 0's LINT0 is not ExtINT");
}

#define IOAPIC_BASE 0xfec00000u

static uint32_t ioapic_read(uint32_t reg)
{
    *(volatile uint32_t *)IOAPIC_BASE = reg;
    return *(volatile uint32_t *)(IOAPIC_BASE + 0x10);
}

static void ioapic_write(uint32_t reg, uint32_t value)
{
    *(volatile uint32_t *)IOAPIC_BASE = reg;
    *(volatile uint32_t *)(IOAPIC_BASE + 0x10) = value;
}

/* Version 0x20 with 24 pins, as KVM's; pin 9's entry (nothing drives it) masked, kept as written.
 */
static void check_ioapic(void)
{
    uint32_t version = ioapic_read(1);
    uint32_t entry = ioapic_read(0x10 + 2 * 9);
    ioapic_write(0x10 + 2 * 9, LVT_MASKED | 0x59);
    uint32_t written = ioapic_read(0x10 + 2 * 9);
    ioapic_write(0x10 + 2 * 9, entry);
    if (version != 0x170020 || written != (LVT_MASKED | 0x59))
        printf("legacy: I/O APIC version 0x%x, an entry written 0x%x reads 0x%x\n", version,
               LVT_MASKED | 0x59, written);
    vcheck(version == 0x170020 && written == (LVT_MASKED | 0x59) && (entry & LVT_MASKED), "ioapic",
           "no I/O APIC as KVM's at 0xfec00000");
}

/*
 * Issue 37: the 8259s and the 8254 as SeaBIOS leaves them to a boot loader,
 * which the runtime found at entry: every IRQ masked but IRQ 0 and the
 * cascade; channel 0 in mode 2 (binary, low then high byte) with a count
 * loaded, counting down from 65536.
 */
static void check_bios_state(void)
{
    outb(PIT_MODE, 0xe2); /* read-back: status of channel 0 */
    uint8_t status = inb(PIT_CH0);
    outb(PIT_MODE, 0x00); /* latch channel 0's count */
    uint16_t count = (uint16_t)(inb(PIT_CH0) | inb(PIT_CH0) << 8);
    bool ok = pic_masks_found == 0xfffa && (status & 0x7f) == 0x34 && count != 0;
    if (!ok)
        printf("legacy: at entry IMRs 0x%x, channel 0 status 0x%x, count %u\n", pic_masks_found,
               status, count);
    vcheck(ok, "bios-state", "the 8259s and the 8254 are not as SeaBIOS leaves them");
}

/* The data port is ICW2, ICW3, ICW4 in turn after ICW1, then the IMR again. */
static void check_init(void)
{
    outb(PIC1_DATA, 0x5a);
    bool kept = inb(PIC1_DATA) == 0x5a;
    outb(PIC1_CMD, 0x11);
    bool cleared = inb(PIC1_DATA) == 0; /* ICW1 clears the IMR */
    outb(PIC1_DATA, VECTOR_BASE);
    outb(PIC1_DATA, 0x04);
    outb(PIC1_DATA, 0x01);
    bool still = inb(PIC1_DATA) == 0; /* ICW2-4 went elsewhere */
    init_pics(VECTOR_BASE, 0x01);
    bool masked = inb(PIC1_DATA) == 0xff && inb(PIC2_DATA) == 0xff;
    vcheck(kept && cleared && still && masked, "pic-init",
           "the data port is not the IMR, ICW2, ICW3, ICW4 as the sequence has it");
}

/* TICKS ticks of channel 0 in mode 2 at 1 kHz, each in STI; HLT; no sooner than the PIT allows. */
static void check_ticks(void)
{
    eoi_kind = EOI_NONSPECIFIC;
    ticks = 0;
    pit_program(0, 2, PIT_KHZ);
    outb(PIC1_DATA, 0xfe);
    bool first = wait_count(&ticks, 1, WAIT_MS);
    uint64_t t0 = rdtsc();
    bool all = first && wait_count(&ticks, TICKS + 1, WAIT_MS);
    uint64_t us = tsc_to_us(rdtsc() - t0);
    outb(PIC1_DATA, 0xff);
    /* Ten periods: at least nine of them after the first tick's handler (its latency). */
    bool ok = all && us >= (TICKS - 1) * 1000;
    if (!ok)
        printf("legacy: %u ticks in %u us (1 kHz)\n", ticks - 1, (uint32_t)us);
    vcheck(ok, "pit-mode2-ticks", "IRQ 0 did not come at the PIT's rate");
    vcheck(isr_in_handler == 0x01 && !(irr_in_handler & 1) && isr_after_eoi == 0, "pic-isr-irr",
           "OCW3: IRQ 0 not in the ISR (or still in the IRR) in its handler, or after its EOI");
}

/* A masked IRQ 0 does not come and waits in the IRR; unmasked, it comes at once. */
static void check_mask(void)
{
    eoi_kind = EOI_NONSPECIFIC;
    uint32_t before = ticks;
    open_for(3000); /* three periods, masked */
    uint32_t masked = ticks - before;
    bool waiting = read_ocw3(PIC1_CMD, OCW3_IRR) & 1;
    outb(PIC1_DATA, 0xfe);
    open_for(100);
    uint32_t unmasked = ticks - before - masked;
    outb(PIC1_DATA, 0xff);
    bool ok = !masked && waiting && unmasked;
    if (!ok)
        printf("legacy: masked %u, in IRR %u, unmasked %u\n", masked, waiting, unmasked);
    vcheck(ok, "pic-mask-irr",
           "a masked IRQ 0 came, or did not wait in the IRR, or did not come once unmasked");
}

/* With the handler ending IRQ 0 this way: do three more ticks come? */
static bool ticks_go_on(enum eoi_kind kind)
{
    eoi_kind = kind;
    uint32_t before = ticks;
    outb(PIC1_DATA, 0xfe);
    bool ok = wait_count(&ticks, before + 3, WAIT_MS);
    outb(PIC1_DATA, 0xff);
    eoi_kind = EOI_NONSPECIFIC;
    return ok;
}

/* The specific EOI ends IRQ 0's service too: the ticks go on. */
static void check_specific_eoi(void)
{
    bool ok = ticks_go_on(EOI_SPECIFIC);
    vcheck(ok && isr_after_eoi == 0, "pic-specific-eoi", "a specific EOI left IRQ 0 in service");
}

/* Auto-EOI (ICW4 bit 1): no EOI at all, IRQ 0 never in service, and the ticks go on. */
static void check_auto_eoi(void)
{
    init_pics(VECTOR_BASE, 0x03);
    bool ok = ticks_go_on(EOI_AUTO);
    bool never = isr_in_handler == 0;
    init_pics(VECTOR_BASE, 0x01);
    vcheck(ok && never, "pic-auto-eoi", "auto-EOI: IRQ 0 was in service or stopped coming");
}

/*
 * IRQ 4 from COM1's THR-empty interrupt, which stays high until IIR is
 * read: level-triggered (ELCR bit 4) three requests, the handler's third
 * read of IIR ending them; edge-triggered one. Nothing may be printed
 * meanwhile: each byte out raises THR empty again.
 */
static void check_level(void)
{
    uint8_t mcr = inb(COM1_MCR);
    outb(ELCR1, 0x10);
    bool elcr = inb(ELCR1) == 0x10;
    level_mode = true;
    irq4 = 0;
    outb(PIC1_DATA, 0xef);
    outb(COM1_MCR, mcr | MCR_OUT2);
    outb(COM1_IER, IER_THRE);
    wait_count(&irq4, 3, WAIT_MS);
    open_for(1000);
    uint32_t level = irq4;
    outb(COM1_IER, 0);
    outb(ELCR1, 0);
    level_mode = false;
    irq4 = 0;
    outb(COM1_IER, IER_THRE); /* the line rises again */
    wait_count(&irq4, 1, WAIT_MS);
    open_for(1000);
    uint32_t edge = irq4;
    outb(COM1_IER, 0);
    (void)inb(COM1_IIR);
    outb(COM1_MCR, mcr);
    outb(PIC1_DATA, 0xff);
    bool ok = elcr && level == 3 && edge == 1;
    if (!ok)
        printf("legacy: IRQ 4 level %u, edge %u\n", level, edge);
    vcheck(ok, "pic-level",
           "a level-triggered IRQ did not ask while high, or an edge-triggered one more than once");
}

/*
 * Channel 0 in mode 0: the latch command holds a count while time goes on,
 * the count goes down with the TSC (a count of 54.9 ms, a margin for a
 * descheduled vCPU); then a short count, one interrupt at its terminal
 * count and none in a while longer than it; read-back says OUT is high.
 */
static void check_mode0(void)
{
    eoi_kind = EOI_NONSPECIFIC;
    pit_program(0, 0, 0xffff); /* and the rate generator stops */
    uint16_t a = pit_latched(0);
    outb(PIT_MODE, 0x00); /* latch, then read it late */
    open_for(1000);
    uint16_t held = (uint16_t)(inb(PIT_CH0) | inb(PIT_CH0) << 8);
    uint16_t now = pit_latched(0);
    open_for(2000);
    uint16_t b = pit_latched(0);
    /* Stopped by its control word, an edge of before waiting in the IRR dropped by ICW1. */
    outb(PIT_MODE, 0x30);
    init_pics(VECTOR_BASE, 0x01);
    uint32_t before = ticks;
    outb(PIT_CH0, (uint8_t)MODE0_SHORT);
    outb(PIT_CH0, MODE0_SHORT >> 8);
    outb(PIC1_DATA, 0xfe);
    bool one = wait_count(&ticks, before + 1, WAIT_MS);
    open_for(2 * MODE0_SHORT / PIT_KHZ * 1000); /* twice the count: a one-shot stays quiet */
    outb(PIC1_DATA, 0xff);
    outb(PIT_MODE, 0xe2); /* read-back: status of channel 0 */
    uint8_t status = inb(PIT_CH0);
    bool latch = a > b && a - b >= 2 * PIT_KHZ && held - now >= PIT_KHZ - 2 && held <= a;
    bool irq = one && ticks == before + 1 && status == 0xb0;
    if (!latch || !irq)
        printf("legacy: mode 0 latched %u then %u (held %u, live %u), %u ticks, status 0x%x\n", a,
               b, held, now, ticks - before, status);
    vcheck(latch, "pit-mode0-latch", "mode 0 did not count down with time through the latch");
    vcheck(irq, "pit-mode0-irq", "mode 0 did not interrupt once at its terminal count");
}

/* Channel 2: port 0x61 bit 0 gates it; in mode 0 OUT2 (bit 5) rises a count after the gate. */
static void check_channel2(void)
{
    uint8_t b = inb(PORT_B) & ~(PORT_B_GATE | PORT_B_SPKR);
    outb(PORT_B, b);
    pit_program(2, 0, PIT_KHZ);
    bool low = !(inb(PORT_B) & PORT_B_OUT2);
    open_for(2000);
    bool held = !(inb(PORT_B) & PORT_B_OUT2) && pit_latched(2) == PIT_KHZ;
    uint64_t t0 = rdtsc(), end = t0 + us_to_tsc(WAIT_MS * 1000ull);
    outb(PORT_B, b | PORT_B_GATE);
    bool gate = inb(PORT_B) & PORT_B_GATE;
    while (!(inb(PORT_B) & PORT_B_OUT2) && rdtsc() < end)
        ;
    uint64_t us = tsc_to_us(rdtsc() - t0);
    bool rose = inb(PORT_B) & PORT_B_OUT2;
    outb(PORT_B, b);
    bool ok = low && held && gate && rose && us >= 999;
    if (!ok)
        printf("legacy: OUT2 low %u, held %u, gate %u, rose %u after %u us\n", low, held, gate,
               rose, (uint32_t)us);
    vcheck(ok, "pit-channel2-gate", "channel 2's OUT2 did not rise a count after its gate opened");
}

/* --------------------------------------------------------------- real mode */

/*
 * The 16-bit part, copied to RM_BASE: from a 16-bit protected mode segment
 * (selector GDT_CODE16, base 0) it clears CR0.PE and runs in real mode at
 * CS = RM_BASE >> 4, its data addressed from there. It moves the master's
 * vectors to 0x08, installs IVT entry 8, starts channel 0 in mode 2 at 1 kHz
 * and waits in STI; HLT for rm_want ticks, then stops the PIT, masks IRQ 0
 * and goes back through rm_back32. The handler counts a tick delivered
 * inside itself apart (rm_nested).
 */
__asm__(".pushsection .text\n"
        ".code16\n"
        ".globl rm_blob, rm_blob_end, rm_ticks, rm_nested, rm_want, rm_gdtr\n"
        "rm_blob:\n"
        "rm_entry16:\n"
        "    mov $0x20, %ax\n" /* GDT_DATA16 */
        "    mov %ax, %ds\n"
        "    mov %ax, %es\n"
        "    mov %ax, %ss\n"
        "    mov %ax, %fs\n"
        "    mov %ax, %gs\n"
        "    mov %cr0, %eax\n"
        "    and $0xfffffffe, %eax\n"
        "    mov %eax, %cr0\n"
        "    ljmp $0x700, $(rm_real - rm_blob)\n" /* RM_BASE >> 4 */
        "rm_real:\n"
        "    mov %cs, %ax\n"
        "    mov %ax, %ds\n"
        "    xor %ax, %ax\n"
        "    mov %ax, %es\n"
        "    mov %ax, %ss\n"
        "    mov $0x6ff0, %sp\n" /* RM_STACK */
        "    lidt (rm_ivt - rm_blob)\n"
        "    movw $(rm_irq0 - rm_blob), %es:(8 * 4)\n"
        "    movw $0x700, %es:(8 * 4 + 2)\n"
        /* The master as a BIOS leaves it: vectors 0x08-0x0f, the slave on IRQ 2. */
        "    mov $0x11, %al\n"
        "    out %al, $0x20\n"
        "    mov $0x08, %al\n"
        "    out %al, $0x21\n"
        "    mov $0x04, %al\n"
        "    out %al, $0x21\n"
        "    mov $0x01, %al\n"
        "    out %al, $0x21\n"
        "    mov $0xfe, %al\n"
        "    out %al, $0x21\n"
        /* Channel 0, low then high byte, mode 2, 1193 counts. */
        "    mov $0x34, %al\n"
        "    out %al, $0x43\n"
        "    mov $0xa9, %al\n"
        "    out %al, $0x40\n"
        "    mov $0x04, %al\n"
        "    out %al, $0x40\n"
        "1:  sti\n"
        "    hlt\n"
        "    cli\n"
        "    mov (rm_ticks - rm_blob), %ax\n"
        "    cmp (rm_want - rm_blob), %ax\n"
        "    jb 1b\n"
        "    mov $0xff, %al\n"
        "    out %al, $0x21\n"
        "    mov $0x34, %al\n" /* a control word stops the counter */
        "    out %al, $0x43\n"
        "    lgdtl (rm_gdtr - rm_blob)\n"
        "    mov %cr0, %eax\n"
        "    or $1, %eax\n"
        "    mov %eax, %cr0\n"
        "    ljmpl $0x08, $rm_back32\n" /* GDT_CODE */
        "rm_irq0:\n"
        "    cmpb $0, %cs:(rm_in_irq - rm_blob)\n"
        "    jne 2f\n"
        "    movb $1, %cs:(rm_in_irq - rm_blob)\n"
        "    push %ax\n"
        "    incw %cs:(rm_ticks - rm_blob)\n"
        "    mov $0x20, %al\n"
        "    out %al, $0x20\n"
        "    pop %ax\n"
        "    movb $0, %cs:(rm_in_irq - rm_blob)\n"
        "    iret\n"
        "2:  incw %cs:(rm_nested - rm_blob)\n"
        "    iret\n"
        "    .balign 4\n"
        "rm_ivt:\n"
        "    .word 0x3ff\n"
        "    .long 0\n"
        "    .balign 4\n"
        "rm_gdtr:\n"
        "    .word 0\n"
        "    .long 0\n"
        "rm_ticks: .word 0\n"
        "rm_nested: .word 0\n"
        "rm_want: .word 0\n"
        "rm_in_irq: .byte 0\n"
        "rm_blob_end:\n"
        ".code32\n"
        /* From here on 32-bit code in place, with the flat segments of the GDT. */
        ".globl rm_run\n"
        "rm_run:\n"
        "    pushal\n"
        "    mov %esp, rm_saved_esp\n"
        "    sidt rm_saved_idtr\n"
        "    cli\n"
        "    ljmp $0x18, $(0x7000 + rm_entry16 - rm_blob)\n" /* GDT_CODE16, RM_BASE */
        "rm_back32:\n"
        "    mov $0x10, %ax\n" /* GDT_DATA */
        "    mov %ax, %ds\n"
        "    mov %ax, %es\n"
        "    mov %ax, %fs\n"
        "    mov %ax, %gs\n"
        "    mov %ax, %ss\n"
        "    mov rm_saved_esp, %esp\n"
        "    lidt rm_saved_idtr\n"
        "    popal\n"
        "    ret\n"
        ".popsection\n");

extern const uint8_t rm_blob[], rm_blob_end[], rm_ticks[], rm_nested[], rm_want[], rm_gdtr[];
void rm_run(void);
uint32_t rm_saved_esp;
uint8_t rm_saved_idtr[6];

struct pseudo_descriptor {
    uint16_t limit;
    uint32_t base;
} __attribute__((packed));

/* The runtime's flat code and data, and 16-bit code and data at base 0 for the way down. */
static uint64_t gdt[] = {0, 0x00cf9b000000ffffull, 0x00cf93000000ffffull, 0x00009b000000ffffull,
                         0x000093000000ffffull};

_Static_assert(GDT_CODE16 == 3 * 8 && GDT_DATA16 == 4 * 8, "the blob's selectors");
_Static_assert(RM_BASE == 0x7000 && RM_STACK == 0x6ff0, "the blob's constants");

/* The copy's own variable, at its offset in the copy. */
static volatile uint16_t *rm_var(const uint8_t *sym)
{
    return (volatile uint16_t *)(RM_BASE + (uint32_t)(sym - rm_blob));
}

static void check_real_mode(void)
{
    uint8_t *dst = (uint8_t *)RM_BASE;
    for (const uint8_t *p = rm_blob; p < rm_blob_end; p++)
        *dst++ = *p;
    struct pseudo_descriptor gdtr = {sizeof(gdt) - 1, (uint32_t)gdt};
    *(volatile struct pseudo_descriptor *)rm_var(rm_gdtr) = gdtr;
    *rm_var(rm_want) = TICKS;
    /* The selectors in use are the same in this table: no reload needed. */
    __asm__ volatile("lgdt %0" : : "m"(gdtr));
    uint64_t t0 = rdtsc();
    rm_run();
    uint64_t us = tsc_to_us(rdtsc() - t0);
    uint16_t got = *rm_var(rm_ticks), dup = *rm_var(rm_nested);
    init_pics(VECTOR_BASE, 0x01);
    nested += dup;
    /*
     * One more tick than wanted is a CPU's right: a tick that came while the
     * handler ran is taken at its IRET, before the loop's CLI (seen under a
     * loaded host). No tick may come sooner than the PIT's period.
     */
    bool ok = got >= TICKS && us >= (uint64_t)(got - 1) * 1000;
    if (!ok)
        printf("legacy: real mode %u ticks in %u us\n", got, (uint32_t)us);
    vcheck(ok, "real-mode-ticks",
           "IRQ 0 through the IVT at vector 8 did not come at the PIT's rate");
}

/* --------------------------------------------------------------- legacy_pic=off */

/*
 * legacy_pic=off: LINT0 masked, the PIC's data ports are masks whatever
 * the command ports are told, no 8254 and no ELCR; a programmed PIT
 * interrupts nobody.
 */
static void check_off(void)
{
    uint32_t lvt0 = lapic_read(LAPIC_LVT0);
    vcheck(lvt0 == LVT_MASKED, "off-lint0-masked", "LINT0 is not masked");
    outb(PIC1_CMD, 0x11);
    outb(PIC1_DATA, 0x08);
    bool masks = inb(PIC1_DATA) == 0x08 && inb(PIC1_CMD) == 0;
    outb(PIC1_DATA, 0);
    vcheck(masks, "off-pic-masks", "the PIC's data port is not the mask it was");
    bool none = inb(PIT_CH0) == 0xff && inb(PORT_B) == 0xff && inb(ELCR1) == 0xff;
    vcheck(none, "off-no-pit", "a PIT or an ELCR answers");
    ticks = 0;
    pit_program(0, 2, PIT_KHZ);
    open_for(5000);
    vcheck(ticks == 0, "off-no-tick", "an interrupt came from nowhere");
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    cpu_init();
    lapic_enable();
    timing_init();
    set_interrupt_handler(VECTOR_IRQ0, irq0_handler);
    set_interrupt_handler(VECTOR_IRQ4, irq4_handler);
    set_interrupt_handler(VECTOR_ALARM, alarm_handler);
    lapic_write(LAPIC_TDCR, 0xb);
    lapic_write(LAPIC_LVT_TIMER, LAPIC_TIMER_ONESHOT | VECTOR_ALARM);
    check_ioapic();
    if (word_is(cmdline_args(info), "off")) {
        check_off();
        return check_summary("legacy");
    }
    check_bios_state();
    check_lint0();
    check_init();
    check_ticks();
    check_mask();
    check_specific_eoi();
    check_auto_eoi();
    check_level();
    check_mode0();
    check_channel2();
    check_real_mode();
    if (nested)
        printf("legacy: %u interrupts delivered again inside their handler\n", nested);
    return check_summary("legacy");
}

/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/trap.h"

#include "arch/x86/cpu.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/lapic.h"
#include "arch/x86/panic.h"
#include "arch/x86/percpu.h"
#include "drivers/console.h"

struct idt_entry {
    uint16_t offset_lo;
    uint16_t selector;
    uint8_t ist;
    uint8_t type_attr;
    uint16_t offset_mid;
    uint32_t offset_hi;
    uint32_t reserved;
} __attribute__((packed));

extern const char isr_stubs[];
#define ISR_STUB_SIZE 16

static struct idt_entry idt[256] __attribute__((aligned(16)));
static irq_handler irq_handlers[256];

static const char *const exception_names[32] = {"divide error",
                                                "debug",
                                                "NMI",
                                                "breakpoint",
                                                "overflow",
                                                "bound range",
                                                "invalid opcode",
                                                "device not available",
                                                "double fault",
                                                "coprocessor overrun",
                                                "invalid TSS",
                                                "segment not present",
                                                "stack fault",
                                                "general protection",
                                                "page fault",
                                                "reserved",
                                                "x87 FPU error",
                                                "alignment check",
                                                "machine check",
                                                "SIMD FP error",
                                                "virtualization",
                                                "control protection",
                                                "reserved",
                                                "reserved",
                                                "reserved",
                                                "reserved",
                                                "reserved",
                                                "reserved",
                                                "hypervisor injection",
                                                "VMM communication",
                                                "security",
                                                "reserved"};

static void idt_set(unsigned vector, unsigned ist)
{
    uint64_t addr = (uint64_t)isr_stubs + vector * ISR_STUB_SIZE;
    idt[vector] = (struct idt_entry){
        .offset_lo = addr & 0xffff,
        .selector = GDT_KERNEL_CODE,
        .ist = ist,
        .type_attr = 0x8e, /* present, DPL 0, 64-bit interrupt gate */
        .offset_mid = (addr >> 16) & 0xffff,
        .offset_hi = addr >> 32,
    };
}

void idt_init(void)
{
    for (unsigned v = 0; v < 256; v++)
        idt_set(v, 0);
    idt_set(2, IST_NMI);
    idt_set(8, IST_DOUBLE_FAULT);
    idt_set(18, IST_MACHINE_CHECK);
}

void idt_load(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) idtr = {sizeof(idt) - 1, (uint64_t)idt};
    __asm__ volatile("lidt %0" ::"m"(idtr));
}

void irq_register(uint8_t vector, irq_handler h)
{
    irq_handlers[vector] = h;
}

const char *exception_name(unsigned vector)
{
    return vector < 32 ? exception_names[vector] : "interrupt";
}

/*
 * The host never sets TF, so a single-step #DB here is not its own: Bochs
 * 2.7's SVM keeps a guest's pending single-step trap armed across #VMEXIT
 * (a guest with TF set whose next instruction is intercepted) and delivers
 * it to the host after VMRUN. The guest's #DB comes from pollux when it
 * emulates the instruction (virt->end_emulated_instruction); this one is
 * dropped.
 */
static bool leaked_single_step(void)
{
    uint64_t dr6 = dr6_read();
    if (!(dr6 & DR6_BS))
        return false;
    dr6_write(dr6 & ~DR6_BS);
    return true;
}

void trap_dispatch(struct trap_frame *f)
{
    if (f->vector == 1 && leaked_single_step())
        return;
    if (f->vector == 2) {
        /* NMIs are how a panicking CPU stops the others. */
        if (panic_in_progress())
            cpu_halt_forever();
        if (panic_lockup_nmi(f))
            return;
        if (irq_handlers[2]) {
            irq_handlers[2](f);
            return;
        }
        kprintf("cpu %u: unexpected NMI at rip 0x%lx, ignored\n", this_cpu()->cpu, f->rip);
        return;
    }
    if (f->vector < 32)
        panic_trap(f);
    if (f->vector == VECTOR_SPURIOUS)
        return; /* spurious interrupts take no EOI */
    irq_handler h = irq_handlers[f->vector];
    if (h) {
        h(f);
        return;
    }
    kprintf("cpu %u: unhandled interrupt vector %lu, ignored\n", this_cpu()->cpu, f->vector);
    lapic_eoi();
}

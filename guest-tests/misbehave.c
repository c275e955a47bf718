/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A guest that does one thing a hypervisor must survive, chosen by the first
 * word of its arguments, so the boot tests can check that pollux stops (or
 * corrects) only this VM, with the right reason:
 *   exit N      isa-debug-exit with code N
 *   hcexit N    the HC_EXIT hypercall with code N
 *   shutdown    "Shutdown" on port 0x8900 (code 0)
 *   puts        HC_PUTS, then KVM's calls 0 and 1 (KVM's meaning, no exit), exit 0
 *   spin        loop forever with interrupts off (needs timeout_ms)
 *   spinsti     loop forever with interrupts on (needs timeout_ms)
 *   halt        cli; hlt (needs timeout_ms)
 *   triple      a fault with no usable IDT: triple fault
 *   badmem      read guest-physical memory the VM does not have
 *   badmsr      RDMSR of an MSR pollux does not offer: expects #GP, exits 0
 *   vmrun       VMRUN (AMD) or VMXON (Intel): expects #UD, exits 0
 *   ioports     unknown ports read as all ones, exits 0 if so
 *   dr V        keeps V in DR0 over a few million loop turns: other vCPUs on its
 *               host CPU must not change it, exits 0 if they did not
 *   nmi         a self-NMI through the local APIC whose handler sends a second
 *               one: it must wait for the first handler's IRET (no nesting)
 *               and then arrive, exits 0
 */
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/runtime.h"
#include "abi/hypercall.h"

#define XAPIC_ICR_LO    0xfee00300u
#define XAPIC_SVR       0xfee000f0u
#define ICR_NMI_TO_SELF ((4u << 8) | (1u << 14) | (1u << 18)) /* NMI, assert, shorthand self */

static volatile unsigned nmis, nested_nmis;
static volatile bool in_nmi;

__attribute__((interrupt)) static void nmi_handler(struct interrupt_frame *f)
{
    (void)f;
    if (in_nmi)
        nested_nmis++;
    in_nmi = true;
    if (++nmis == 1)
        *(volatile uint32_t *)XAPIC_ICR_LO = ICR_NMI_TO_SELF; /* blocked until our IRET */
    for (volatile int i = 0; i < 1000; i++)
        ;
    in_nmi = false;
}

__attribute__((interrupt)) static void ud_handler(struct interrupt_frame *f)
{
    (void)f;
    printf("caught #UD\n");
    guest_exit(0);
}

__attribute__((interrupt)) static void gp_handler(struct interrupt_frame *f, unsigned long error)
{
    (void)f;
    printf("caught #GP (error %lu)\n", error);
    guest_exit(0);
}

/* The loader's segments have no GDT behind them: an exception needs one (runtime/cpu.c). */
static void install_idt(void)
{
    cpu_init();
    set_interrupt_handler(VECTOR_NMI, nmi_handler);
    set_interrupt_handler(VECTOR_UD, ud_handler);
    set_interrupt_handler(VECTOR_GP, gp_handler);
}

static bool wait_nmis(unsigned n)
{
    for (uint64_t end = rdtsc() + 1000000000ull; rdtsc() < end;)
        if (nmis >= n)
            return true;
    return false;
}

static uint32_t number_after(const char *s)
{
    while (*s && *s != ' ')
        s++;
    while (*s == ' ')
        s++;
    uint32_t n = 0;
    parse_uint(s, &n);
    return n;
}

static bool is_amd(void)
{
    return cpuid(0, 0).ebx == 0x68747541; /* "Auth" */
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    const char *mode = cmdline_args(info);
    printf("misbehave: %s\n", mode);

    if (word_is(mode, "exit"))
        guest_exit(number_after(mode));
    if (word_is(mode, "hcexit")) {
        hypercall(HC_EXIT, number_after(mode), 0, 0);
        printf("still running after HC_EXIT\n");
        return 99;
    }
    if (word_is(mode, "shutdown")) {
        for (const char *s = "Shutdown"; *s; s++)
            outb(0x8900, (uint8_t)*s);
        printf("still running after the shutdown port\n");
        return 99;
    }
    if (word_is(mode, "puts")) {
        static const char msg[] = "written by HC_PUTS\n";
        uint32_t rc = hypercall(HC_PUTS, (uint32_t)msg, sizeof(msg) - 1, 0);
        uint32_t bad = hypercall(HC_PUTS, 0xfff00000u, 16, 0);
        printf("puts returned %u, bad address returned 0x%x\n", rc, bad);
        /* KVM's numbers: 0 is no call of KVM's (-KVM_ENOSYS), 1 is KVM_HC_VAPIC_POLL_IRQ. */
        int32_t kvm0 = (int32_t)hypercall(0, 0, 0, 0), kvm1 = (int32_t)hypercall(1, 0, 0, 0);
        printf("kvm call 0 returned %d, kvm call 1 returned %d\n", kvm0, kvm1);
        return rc == HC_OK && bad == (uint32_t)HC_EFAULT && kvm0 == -1000 && kvm1 == 0 ? 0 : 1;
    }
    if (word_is(mode, "spinsti")) {
        __asm__ volatile("sti");
        for (;;)
            __asm__ volatile("" ::: "memory");
    }
    if (word_is(mode, "spin")) {
        __asm__ volatile("cli");
        for (;;)
            __asm__ volatile("" ::: "memory");
    }
    if (word_is(mode, "halt")) {
        __asm__ volatile("cli; hlt");
        return 99;
    }
    if (word_is(mode, "triple")) {
        static const struct {
            uint16_t limit;
            uint32_t base;
        } __attribute__((packed)) empty = {0, 0};
        __asm__ volatile("lidt %0; int3" ::"m"(empty));
        return 99;
    }
    if (word_is(mode, "badmem")) {
        uint32_t v = *(volatile uint32_t *)0xf0000000u;
        printf("read 0x%x from outside guest memory\n", v);
        return 99;
    }
    if (word_is(mode, "badmsr")) {
        install_idt();
        rdmsr(0xc0ffee);
        printf("RDMSR of a bogus MSR did not fault\n");
        return 99;
    }
    if (word_is(mode, "vmrun")) {
        static uint64_t vmxon_region_pa; /* never used: VMXON must fault first */
        install_idt();
        if (is_amd())
            __asm__ volatile("vmrun" ::"a"(0) : "memory");
        else
            __asm__ volatile("vmxon %0" ::"m"(vmxon_region_pa) : "memory");
        printf("virtualization instruction did not fault\n");
        return 99;
    }
    if (word_is(mode, "ioports")) {
        uint8_t b = inb(0x80);
        uint32_t l;
        __asm__ volatile("inl %1, %0" : "=a"(l) : "Nd"((uint16_t)0x1234));
        printf("port 0x80 reads 0x%x, port 0x1234 reads 0x%x\n", b, l);
        return b == 0xff && l == 0xffffffffu ? 0 : 1;
    }
    if (word_is(mode, "dr")) {
        uint32_t want = number_after(mode), got = want;
        __asm__ volatile("mov %0, %%db0" ::"r"(want));
        for (uint32_t i = 0; i < 3000000 && got == want; i++)
            __asm__ volatile("mov %%db0, %0" : "=r"(got));
        printf("dr0 0x%x, wanted 0x%x\n", got, want);
        return got == want ? 0 : 1;
    }
    if (word_is(mode, "nmi")) {
        install_idt();
        *(volatile uint32_t *)XAPIC_SVR = 0x1ff; /* software-enable the local APIC */
        *(volatile uint32_t *)XAPIC_ICR_LO = ICR_NMI_TO_SELF;
        if (!wait_nmis(2)) {
            printf("only %u of 2 NMIs arrived\n", nmis);
            return 1;
        }
        printf("caught %u NMIs, %u nested\n", nmis, nested_nmis);
        return nmis == 2 && !nested_nmis ? 0 : 1;
    }
    printf("unknown mode\n");
    return 98;
}

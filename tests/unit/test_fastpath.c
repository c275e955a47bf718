/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exit fast path's summary-word protocol (vmm/exit/fastpath.h) with the real
 * vcpu_notify of vmm/vcpu/vcpu_events.c as the sender, and a model of one host CPU
 * running the vCPU: its guest keeps exiting with CPUID until the test lets it
 * run on without exits, after which an entry returns only if a kick (an IPI
 * held pending while the host had interrupts off) makes it exit. An event the
 * fast path misses is then lost for good, which the model reports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "vmm/exit/fastpath_exit.h"
#include "arch/x86/insn.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/dev/vlapic_dev.h"

uint64_t tsc_khz = 1000000;

/* Scheduler stand-ins: the kick is an IPI that stays pending on the target CPU. */
static unsigned current_cpu;
static bool kick_pending[2];

void sched_poll(struct sched_entity *pv, uint64_t deadline)
{
    (void)pv;
    (void)deadline;
}

void sched_wake(struct sched_entity *w)
{
    (void)w;
}

void sched_kick(unsigned cpu)
{
    kick_pending[cpu] = true;
}

unsigned sched_this_cpu(void)
{
    return current_cpu;
}

void sched_note_remote_work(unsigned cpu)
{
    (void)cpu;
}

uint64_t sched_idle_exit_within(uint64_t from, uint64_t to)
{
    (void)from;
    (void)to;
    return 0;
}

bool sched_others_waiting(void)
{
    return false;
}

void kprintf(const char *fmt, ...)
{
    (void)fmt;
}

void console_event(const char *name, struct json *j)
{
    (void)name, (void)j;
}

/* The exit handlers: what the fast path calls. */
static unsigned handled;

#define COUNTING_HANDLER(name)                                                                     \
    void name(struct vcpu *hv, const struct exit_record *e)                                        \
    {                                                                                              \
        (void)hv;                                                                                  \
        (void)e;                                                                                   \
        handled++;                                                                                 \
    }
COUNTING_HANDLER(handle_msr_write)
COUNTING_HANDLER(handle_cr8)
COUNTING_HANDLER(handle_npf)
COUNTING_HANDLER(vlapic_dev_mmio) /* the xAPIC page: the fast path goes straight to it */

/*
 * handle_cpuid and handle_hypercall are inline (vmm/exit/exits.h): the test's VM
 * has no CPUID table, so CPUID asks cpuid_for_vcpu.
 */
void cpuid_for_vcpu(struct vcpu *hv, const struct cpuid_answer *a, uint32_t leaf, uint32_t subleaf)
{
    (void)hv;
    (void)a;
    (void)leaf;
    (void)subleaf;
    handled++;
}

unsigned long vmm_hypercall(struct vcpu *hv, unsigned cpl, bool *again)
{
    (void)hv;
    (void)cpl;
    (void)again;
    handled++;
    return 0;
}

/* handle_msr_read and msr_read are inline too; these tests take no RDMSR exit. */
struct guest_features guest_features;

/* INIT's device hooks: the fast path never takes an INIT. */
void vm_devices_init_vcpu(struct vm *hvm, struct vcpu *hv)
{
    (void)hvm;
    (void)hv;
    fail();
}

enum dev_result vm_devices_msr(struct vcpu *hv, uint32_t i, bool write, uint64_t *val)
{
    (void)hv, (void)i, (void)write, (void)val;
    fail_msg("these tests take no RDMSR exit");
    return DEV_FAULT;
}

/* handle_io is inline too: the port's read or write is what it calls. */
uint32_t io_read_other(struct vcpu *hv, uint16_t port, unsigned size)
{
    (void)hv;
    (void)port;
    (void)size;
    handled++;
    return 0;
}

/* io_read and vm_uart_read are inline: COM1's register is what they call. */
struct vuart_read vuart_read(struct vuart *u, uint16_t offset)
{
    (void)u;
    (void)offset;
    handled++;
    return (struct vuart_read){0, false};
}

void vm_uart_changed(struct vm *hvm, uint64_t flags)
{
    (void)hvm;
    (void)flags;
    fail_msg("a register read without side effect changed the UART");
}

bool io_write(struct vcpu *hv, uint16_t port, unsigned size, uint32_t value)
{
    (void)hv;
    (void)port;
    (void)size;
    (void)value;
    handled++;
    return true;
}

/* The console buffer's room (io_may_wait's test). */
static uint64_t console_room_now = CONSOLE_BUFFER_BYTES;

uint64_t console_room(void)
{
    return console_room_now;
}

void vcpu_wait_console(struct vcpu *hv)
{
    (void)hv;
    fail_msg("the fast path made a vCPU wait");
}

void vm_fail(struct vcpu *hv, const char *reason, const char *fmt, ...)
{
    (void)hv;
    (void)reason;
    (void)fmt;
    fail_msg("string I/O reached its handler: the fast path must leave it to the full path");
}

int vcpu_skip_unreported(struct vcpu *hv, const struct exit_record *e)
{
    (void)hv;
    (void)e;
    return 0;
}

/* The vendor's end of an emulated instruction (vcpu_advance): counted. */
static unsigned instructions_ended;

static void end_emulated_instruction(struct virt_vcpu *hv)
{
    (void)hv;
    instructions_ended++;
}

static const struct virt_ops test_ops = {.end_emulated_instruction = end_emulated_instruction};
const struct virt_ops *virt = &test_ops;

static struct vm vm;
static struct vcpu v;

#define MOVED_XAPIC_PAGE 0xfed40000u

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof(vm));
    memset(&v, 0, sizeof(v));
    v.vm = &vm;
    v.se.state = SCHED_RUNNING;
    v.se.cpu = 0;
    v.poll_control = KVM_POLL_CONTROL_RESET;
    v.hw.regs.rflags = 0x202;
    vlapic_reset(&v.lapic, 0, true, 48);
    struct vlapic_ipi ipi;
    bool send;
    vlapic_mmio_write(&v.lapic, 0xf0, 0x1ff, 0, &ipi, &send); /* software-enable */
    memset(kick_pending, 0, sizeof(kick_pending));
    handled = 0;
    instructions_ended = 0;
    current_cpu = 0;
    return 0;
}

/* The model's host CPU 0 running v. */
enum guest_exit { GUEST_CPUID, GUEST_HOST_IRQ, GUEST_RAN_ON };
static unsigned exits_left; /* CPUID exits before the guest runs on without exits */

static enum guest_exit enter(void)
{
    if (kick_pending[0]) {
        kick_pending[0] = false;
        return GUEST_HOST_IRQ; /* the pending IPI: an external-interrupt exit */
    }
    if (exits_left) {
        exits_left--;
        return GUEST_CPUID;
    }
    return GUEST_RAN_ON; /* nothing will make it exit: whatever is pending waits forever */
}

/*
 * vcpu_run's inner loop: enter and take fast exits until one needs the full
 * path. between_check_and_entry runs after each re-entry decision, before the
 * entry. Returns what the full path would act on, or fails the test when the
 * guest ran on past an event.
 */
static uint32_t run_until_full_path(void (*between_check_and_entry)(void))
{
    struct exit_record e = {.reason = EXIT_CPUID, .insn_kind = -1};
    for (;;) {
        enum guest_exit x = enter();
        assert_int_not_equal(x, GUEST_RAN_ON);
        if (x == GUEST_HOST_IRQ)
            break; /* EXIT_EXTERNAL_INTERRUPT: not the fast path's */
        if (fastpath_exit(&v, &e) != FASTPATH_REENTER)
            break;
        if (between_check_and_entry)
            between_check_and_entry();
    }
    return vcpu_changes_take(&v.changed);
}

static void send_interrupt(void)
{
    uint64_t flags = spin_lock_irqsave(&v.se.lock);
    if (vlapic_accept(&v.lapic, 0x40))
        vcpu_notify(&v, TRACE_WAKE_IPI, NULL);
    spin_unlock_irqrestore(&v.se.lock, flags);
}

static unsigned sends_left;

/* Another CPU sends an interrupt in the fast path's window, after the guest's last exit. */
static void remote_send_after_last_exit(void)
{
    if (exits_left || !sends_left)
        return;
    sends_left--;
    current_cpu = 1;
    send_interrupt();
    current_cpu = 0;
}

static void test_event_between_check_and_entry_is_not_lost(void **state)
{
    (void)state;
    exits_left = 5;
    sends_left = 1;
    uint32_t seen = run_until_full_path(remote_send_after_last_exit);
    assert_true(seen & CHANGE_EVENT);
    assert_int_equal(handled, 5);
    assert_int_equal(vlapic_highest_pending(&v.lapic), 0x40); /* for prepare_entry to inject */
}

static void test_event_on_own_cpu_before_check_is_seen(void **state)
{
    (void)state;
    /* A sender on this CPU (a timer interrupt taken as the exit returned) kicks no one. */
    send_interrupt();
    assert_false(kick_pending[0]);
    exits_left = 3;
    uint32_t seen = run_until_full_path(NULL);
    assert_true(seen & CHANGE_EVENT);
    assert_int_equal(handled, 1); /* the first exit was handled, then the full path ran */
}

static void test_full_path_takes_the_word(void **state)
{
    (void)state;
    send_interrupt();
    assert_int_not_equal(vcpu_changes_take(&v.changed), 0);
    /* Seen once: the next fast exits re-enter again until the guest runs on. */
    exits_left = 4;
    struct exit_record e = {.reason = EXIT_CPUID, .insn_kind = -1};
    while (enter() == GUEST_CPUID)
        assert_int_equal(fastpath_exit(&v, &e), FASTPATH_REENTER);
    assert_int_equal(handled, 4);
}

static void test_host_kick_and_timer_take_the_full_path(void **state)
{
    (void)state;
    /* The scheduler's word for "look again": the host interrupts raise CHANGE_HOST. */
    vcpu_changes_raise(&v.changed, CHANGE_HOST);
    exits_left = 2;
    assert_true(run_until_full_path(NULL) & CHANGE_HOST);
    assert_int_equal(handled, 1);
}

static void test_reentry_counts_the_exit_time(void **state)
{
    (void)state;
    struct exit_record e = {.reason = EXIT_CPUID, .insn_kind = -1};
    assert_int_equal(fastpath_exit(&v, &e), FASTPATH_REENTER);
    assert_int_equal(v.stats.exits[EXIT_CPUID], 1);
    assert_int_equal(v.stats.exit_cycles[EXIT_CPUID], 0); /* not yet: the vendor may go full */
    uint64_t before = rdtsc();
    fastpath_reentry(&v, &e);
    uint64_t cycles = v.stats.exit_cycles[EXIT_CPUID];
    assert_true(cycles > 0 && cycles <= rdtsc() - v.exited_at);
    assert_true(v.exited_at <= before);
    assert_int_equal(v.stats.exit_max_cycles[EXIT_CPUID], cycles); /* the one exit: the longest */
    /* A shorter exit adds its time and leaves the longest; a longer one replaces it. */
    vcpu_exit_timed(&v, EXIT_CPUID, 1);
    assert_int_equal(v.stats.exit_cycles[EXIT_CPUID], cycles + 1);
    assert_int_equal(v.stats.exit_max_cycles[EXIT_CPUID], cycles);
    v.npf_slot = NPF_UNBACKED;
    vcpu_exit_timed(&v, EXIT_NESTED_PAGE_FAULT, 5);
    vcpu_exit_timed(&v, EXIT_NESTED_PAGE_FAULT, 3);
    assert_int_equal(v.stats.exit_max_cycles[EXIT_NESTED_PAGE_FAULT], 5);
    assert_int_equal(v.stats.npf_cycles[NPF_UNBACKED], 8);
    assert_int_equal(v.stats.npf_max_cycles[NPF_UNBACKED], 5);
}

static void test_reentry_rules(void **state)
{
    (void)state;
    uint32_t word = 0;
    assert_true(fastpath_may_reenter(&word, 0x202));
    assert_false(fastpath_may_reenter(&word, 0x302)); /* TF: a single-step #DB is owed */
    word = CHANGE_EVENT;
    assert_false(fastpath_may_reenter(&word, 0x202));
    assert_int_equal(word, CHANGE_EVENT); /* reading does not consume it */
}

static void test_uncommon_exits_are_not_handled(void **state)
{
    (void)state;
    struct exit_record hlt = {.reason = EXIT_HLT, .insn_kind = -1};
    assert_int_equal(fastpath_exit(&v, &hlt), FASTPATH_NOT_MINE);
    struct exit_record outs = {.reason = EXIT_IO, .insn_kind = -1, .io = {.string = true}};
    assert_int_equal(fastpath_exit(&v, &outs), FASTPATH_NOT_MINE);
    struct exit_record hc = {.reason = EXIT_HYPERCALL, .insn_kind = -1};
    v.hw.regs.rax = 1; /* not HC_NOP */
    assert_int_equal(fastpath_exit(&v, &hc), FASTPATH_NOT_MINE);
    struct exit_record ram = {.reason = EXIT_NESTED_PAGE_FAULT,
                              .insn_kind = -1,
                              .npf = {.gpa = VLAPIC_BASE_DEFAULT - 4, .write = true}};
    assert_int_equal(fastpath_exit(&v, &ram), FASTPATH_NOT_MINE);
    struct exit_record apic_fetch = {.reason = EXIT_NESTED_PAGE_FAULT,
                                     .insn_kind = -1,
                                     .npf = {.gpa = VLAPIC_BASE_DEFAULT + 0xb0, .fetch = true}};
    assert_int_equal(fastpath_exit(&v, &apic_fetch), FASTPATH_NOT_MINE);
    assert_int_equal(handled, 0);
}

/*
 * A COM1 byte out while the console lacks room for a whole line: the full
 * path's, which can make the vCPU wait; with room, or a byte in, the fast path's.
 */
static void test_com1_write_takes_the_full_path_when_the_console_is_short(void **state)
{
    (void)state;
    struct exit_record out = {
        .reason = EXIT_IO, .insn_kind = -1, .insn_len = 1, .io = {.port = 0x3f8, .size = 1}};
    console_room_now = VUART_PRINT_MAX - 1;
    assert_int_equal(fastpath_exit(&v, &out), FASTPATH_NOT_MINE);
    assert_int_equal(handled, 0);
    struct exit_record in = out;
    in.io.in = true;
    assert_int_equal(fastpath_exit(&v, &in), FASTPATH_REENTER);
    console_room_now = VUART_PRINT_MAX;
    assert_int_equal(fastpath_exit(&v, &out), FASTPATH_REENTER);
    assert_int_equal(handled, 2); /* the read and the write */
    console_room_now = CONSOLE_BUFFER_BYTES;
}

static void test_xapic_register_access_is_handled(void **state)
{
    (void)state;
    struct exit_record tpr = {.reason = EXIT_NESTED_PAGE_FAULT,
                              .insn_kind = -1,
                              .npf = {.gpa = VLAPIC_BASE_DEFAULT + 0x80, .write = true}};
    assert_int_equal(fastpath_exit(&v, &tpr), FASTPATH_REENTER);
    struct exit_record last = {.reason = EXIT_NESTED_PAGE_FAULT,
                               .insn_kind = -1,
                               .npf = {.gpa = VLAPIC_BASE_DEFAULT + 0xffc}};
    assert_int_equal(fastpath_exit(&v, &last), FASTPATH_REENTER);
    assert_int_equal(handled, 2);
}

/* The vCPU's own page, where its IA32_APIC_BASE put it; the old one is the full path's. */
static void test_moved_xapic_page_is_handled_there(void **state)
{
    (void)state;
    v.lapic.apic_base = MOVED_XAPIC_PAGE | APIC_BASE_ENABLE | APIC_BASE_BSP;
    struct exit_record moved = {
        .reason = EXIT_NESTED_PAGE_FAULT, .insn_kind = -1, .npf = {.gpa = MOVED_XAPIC_PAGE + 0x80}};
    assert_int_equal(fastpath_exit(&v, &moved), FASTPATH_REENTER);
    assert_int_equal(handled, 1);
    struct exit_record old = {.reason = EXIT_NESTED_PAGE_FAULT,
                              .insn_kind = -1,
                              .npf = {.gpa = VLAPIC_BASE_DEFAULT + 0x80}};
    assert_int_equal(fastpath_exit(&v, &old), FASTPATH_NOT_MINE);
    assert_int_equal(handled, 1);
}

static void test_eoi_uncovering_an_interrupt_takes_the_full_path(void **state)
{
    (void)state;
    /* 0x40 in service, 0x30 pending behind it: the EOI makes 0x30 deliverable, no sender. */
    vlapic_accept(&v.lapic, 0x40);
    vlapic_ack(&v.lapic, 0x40);
    vlapic_accept(&v.lapic, 0x30);
    assert_int_equal(vlapic_highest_pending(&v.lapic), -1);
    struct vlapic_ipi ipi;
    bool send;
    vlapic_mmio_write(&v.lapic, 0xb0, 0, 0, &ipi,
                      &send); /* EOI, as the MSR write's handler would */
    struct exit_record wrmsr = {.reason = EXIT_MSR_WRITE, .insn_kind = -1};
    assert_int_equal(fastpath_exit(&v, &wrmsr), FASTPATH_HANDLED);
    struct exit_record mmio = {.reason = EXIT_NESTED_PAGE_FAULT,
                               .insn_kind = -1,
                               .npf = {.gpa = VLAPIC_BASE_DEFAULT + 0xb0, .write = true}};
    assert_int_equal(fastpath_exit(&v, &mmio), FASTPATH_HANDLED);
}

/*
 * HLT in the fast path only when the event that ends it is pending already:
 * the HLT is over (RIP past it, no halt) and the full path's entry delivers
 * the event. Otherwise the full path halts, the instruction untouched.
 */
static enum fastpath_result hlt_exit(void)
{
    struct exit_record hlt = {.reason = EXIT_HLT, .insn_kind = INSN_HLT, .insn_len = 1};
    return fastpath_exit(&v, &hlt);
}

static void test_hlt_with_a_deliverable_interrupt_is_over_at_once(void **state)
{
    (void)state;
    v.hw.regs.rip = 0x1000;
    send_interrupt();
    assert_int_equal(hlt_exit(), FASTPATH_HANDLED);
    assert_int_equal(v.hw.regs.rip, 0x1001);
    assert_int_equal(instructions_ended, 1);
    assert_int_equal(v.stats.exits[EXIT_HLT], 1);
    assert_int_equal(v.stats.halts, 0); /* no halt began */
    assert_int_equal(v.se.state, SCHED_RUNNING);
    assert_int_equal(vlapic_highest_pending(&v.lapic), 0x40); /* for prepare_entry to inject */
}

static void test_hlt_without_a_wake_event_halts_in_the_full_path(void **state)
{
    (void)state;
    v.hw.regs.rip = 0x1000;
    assert_int_equal(hlt_exit(), FASTPATH_NOT_MINE); /* nothing pending */
    /* Pending, but the guest has IF=0: the interrupt does not end the HLT. */
    v.hw.regs.rflags &= ~(uint64_t)RFLAGS_IF;
    send_interrupt();
    assert_int_equal(hlt_exit(), FASTPATH_NOT_MINE);
    assert_int_equal(v.hw.regs.rip, 0x1000);
    assert_int_equal(instructions_ended, 0);
}

static void test_hlt_with_an_nmi_pending_is_over_at_once(void **state)
{
    (void)state;
    v.hw.regs.rip = 0x1000;
    v.hw.regs.rflags &= ~(uint64_t)RFLAGS_IF; /* an NMI ends a HLT whatever IF says */
    nmi_send(&v.nmi);
    assert_int_equal(hlt_exit(), FASTPATH_HANDLED);
    assert_int_equal(v.hw.regs.rip, 0x1001);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_event_between_check_and_entry_is_not_lost, setup),
        cmocka_unit_test_setup(test_event_on_own_cpu_before_check_is_seen, setup),
        cmocka_unit_test_setup(test_full_path_takes_the_word, setup),
        cmocka_unit_test_setup(test_host_kick_and_timer_take_the_full_path, setup),
        cmocka_unit_test_setup(test_reentry_counts_the_exit_time, setup),
        cmocka_unit_test_setup(test_reentry_rules, setup),
        cmocka_unit_test_setup(test_uncommon_exits_are_not_handled, setup),
        cmocka_unit_test_setup(test_com1_write_takes_the_full_path_when_the_console_is_short,
                               setup),
        cmocka_unit_test_setup(test_eoi_uncovering_an_interrupt_takes_the_full_path, setup),
        cmocka_unit_test_setup(test_xapic_register_access_is_handled, setup),
        cmocka_unit_test_setup(test_moved_xapic_page_is_handled_there, setup),
        cmocka_unit_test_setup(test_hlt_with_a_deliverable_interrupt_is_over_at_once, setup),
        cmocka_unit_test_setup(test_hlt_without_a_wake_event_halts_in_the_full_path, setup),
        cmocka_unit_test_setup(test_hlt_with_an_nmi_pending_is_over_at_once, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

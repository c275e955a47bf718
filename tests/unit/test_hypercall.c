/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hypercall's privilege check and call number (vmm/exit/hypercall.c), with a
 * stand-in vendor: the CPL is the one the exit reported (the record's
 * hypercall.cpl); the number is RAX in 64-bit code and EAX elsewhere, and
 * the mode is read only to tell them apart (and, for KVM's calls, to know
 * the width of their arguments: a0-a3 in RBX, RCX, RDX, RSI).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "vmm/exit/hypercall.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/dev/vlapic_dev.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/vm.h"

uint64_t tsc_khz = 1000000;

static struct vm vm;
static struct vcpu v;
static struct guest_mode mode;
static unsigned mode_reads, stops;

static void test_get_mode(struct virt_vcpu *pv, struct guest_mode *m)
{
    (void)pv;
    mode_reads++;
    *m = mode;
}

static const struct virt_ops test_ops = {.get_mode = test_get_mode};
const struct virt_ops *virt = &test_ops;

void vm_request_stop(struct vm *pvm, int64_t code, const char *reason)
{
    (void)pvm;
    (void)code;
    (void)reason;
    stops++;
}

/* KVM_HC_SEND_IPI's deliveries, the argument decoding's evidence. */
static unsigned sent_ids;

bool vlapic_dev_send(struct vcpu *src, struct vcpu *target, const struct vlapic_ipi *ipi)
{
    (void)src;
    (void)ipi;
    sent_ids |= 1u << target->hw.id;
    return true;
}

void vcpu_notify(struct vcpu *t, enum trace_wake source, const struct vcpu *from)
{
    (void)t;
    (void)source;
    (void)from;
}

enum yield_to_result sched_yield_to(struct sched_entity *e, struct sched_entity *target)
{
    (void)e;
    (void)target;
    return YIELD_TO_RUNNING;
}

/* COM1 takes this many of HC_PUTS's bytes, then finds the console full. */
static uint64_t puts_room;

uint64_t vm_uart_puts(struct vm *hvm, const char *s, uint64_t len)
{
    (void)hvm;
    (void)s;
    uint64_t taken = len < puts_room ? len : puts_room;
    puts_room -= taken;
    return taken;
}

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof(vm));
    memset(&v, 0, sizeof(v));
    v.vm = &vm;
    mode = (struct guest_mode){.cr0 = 1, .code_bits = 32};
    mode_reads = stops = 0;
    puts_room = UINT64_MAX;
    return 0;
}

/* A call that is over (its instruction retired), as every call but a waiting HC_PUTS. */
static unsigned long call(unsigned cpl)
{
    bool again = false;
    unsigned long ret = vmm_hypercall(&v, cpl, &again);
    assert_false(again);
    return ret;
}

static void test_ring_0_call_reads_no_mode(void **state)
{
    (void)state;
    v.hw.regs.rax = HC_NOP;
    assert_int_equal(call(0), HC_OK);
    assert_int_equal(mode_reads, 0);
}

static void test_user_mode_is_refused(void **state)
{
    (void)state;
    v.hw.regs.rax = HC_EXIT;
    assert_int_equal(call(3), HC_EPERM);
    assert_int_equal(call(1), HC_EPERM);
    assert_int_equal(stops, 0);
    /* KVM's calls are refused at CPL > 0 too, with KVM's own error. */
    v.hw.regs.rax = KVM_HC_VAPIC_POLL_IRQ;
    assert_int_equal(call(3), (unsigned long)-KVM_EPERM);
    assert_int_equal(call(0), 0);
}

static void test_call_number_width(void **state)
{
    (void)state;
    /* Outside 64-bit code only EAX counts: the upper half is ignored. */
    v.hw.regs.rax = 0xdead000000000000ull | HC_EXIT;
    assert_int_equal(call(0), HC_OK);
    assert_int_equal(stops, 1);
    assert_int_equal(mode_reads, 1);
    /* In 64-bit code it is RAX: not one of pollux's numbers, so KVM's (unknown). */
    mode.code_bits = 64;
    v.exit_mode_read = false;
    assert_int_equal(call(0), (unsigned long)-KVM_ENOSYS);
    assert_int_equal(stops, 1);
}

/* KVM's four arguments: RBX, RCX, RDX and RSI (kvm_hypercall4 passes a3 in RSI). */
static void test_kvm_arguments(void **state)
{
    (void)state;
    static struct vcpu sibling[3];
    vm.kvm_features = 1u << KVM_FEATURE_PV_SEND_IPI;
    vm.nvcpus = 4;
    vm.vcpus[0] = &v;
    v.lapic.apic_base = APIC_BASE_ENABLE;
    for (unsigned i = 0; i < 3; i++) {
        sibling[i].hw.id = i + 1;
        sibling[i].lapic.apic_base = APIC_BASE_ENABLE;
        vm.vcpus[i + 1] = &sibling[i];
    }
    mode.code_bits = 64;
    v.hw.regs =
        (struct guest_regs){.rax = KVM_HC_SEND_IPI, .rbx = 0x5, .rcx = 0, .rdx = 1, .rsi = 0x42};
    sent_ids = 0;
    /* a2 = 1 shifts the bitmap: bits 0 and 2 are IDs 1 and 3. */
    assert_int_equal(call(0), 2);
    assert_int_equal(sent_ids, 0xa);
    /* a3 (RSI) is the ICR: a logical destination is refused. */
    v.hw.regs.rsi = 0x842;
    v.exit_mode_read = false;
    assert_int_equal(call(0), (unsigned long)-KVM_EINVAL);
    /* Outside 64-bit code every argument is 32 bits: RSI's upper half is dropped. */
    mode.code_bits = 32;
    v.exit_mode_read = false;
    v.hw.regs.rsi = 0x100000042ull;
    v.hw.regs.rdx = 0x100000000ull; /* min 0 once truncated */
    sent_ids = 0;
    assert_int_equal(call(0), 2);
    assert_int_equal(sent_ids, 0x5);
}

/*
 * HC_PUTS whose bytes the console cannot all take now: the call is not over,
 * and, as a REP string instruction stopped part way, RBX and RCX name the
 * rest; the call made again with them finishes it.
 */
static void test_puts_waits_with_the_rest_in_its_registers(void **state)
{
    (void)state;
    static uint8_t ram[0x2000];
    vm.hw.mem = ram;
    vm.hw.mem_size = sizeof(ram);
    v.hw.regs = (struct guest_regs){.rax = HC_PUTS, .rbx = 0x1000, .rcx = 300};
    puts_room = 120;
    bool again = false;
    assert_int_equal(vmm_hypercall(&v, 0, &again), HC_OK);
    assert_true(again);
    assert_int_equal(v.hw.regs.rbx, 0x1000 + 120);
    assert_int_equal(v.hw.regs.rcx, 180);
    assert_int_equal(v.hw.regs.rax, HC_PUTS);
    puts_room = UINT64_MAX;
    v.exit_mode_read = false;
    assert_int_equal(call(0), HC_OK);
    /* Past RAM: refused whole, nothing taken. */
    v.hw.regs = (struct guest_regs){.rax = HC_PUTS, .rbx = 0x1f00, .rcx = 0x200};
    v.exit_mode_read = false;
    assert_int_equal(call(0), HC_EFAULT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_ring_0_call_reads_no_mode, setup),
        cmocka_unit_test_setup(test_user_mode_is_refused, setup),
        cmocka_unit_test_setup(test_call_number_width, setup),
        cmocka_unit_test_setup(test_kvm_arguments, setup),
        cmocka_unit_test_setup(test_puts_waits_with_the_rest_in_its_registers, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

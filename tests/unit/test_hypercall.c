/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hypercall's privilege check and call number (vmm/exit/hypercall.c), with a
 * stand-in vendor: the CPL is the one the exit reported (the record's
 * hypercall.cpl); the number is RAX in 64-bit code and EAX elsewhere, and
 * the mode is read only to tell them apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "vmm/exit/hypercall.h"
#include "vmm/dev/kvm_pv.h"
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

void vuart_puts(struct vuart *u, const char *s, uint64_t len)
{
    (void)u;
    (void)s;
    (void)len;
}

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof(vm));
    memset(&v, 0, sizeof(v));
    v.vm = &vm;
    mode = (struct guest_mode){.cr0 = 1, .code_bits = 32};
    mode_reads = stops = 0;
    return 0;
}

static void test_ring_0_call_reads_no_mode(void **state)
{
    (void)state;
    v.hw.regs.rax = HC_NOP;
    assert_int_equal(vmm_hypercall(&v, 0), HC_OK);
    assert_int_equal(mode_reads, 0);
}

static void test_user_mode_is_refused(void **state)
{
    (void)state;
    v.hw.regs.rax = HC_EXIT;
    assert_int_equal(vmm_hypercall(&v, 3), HC_EPERM);
    assert_int_equal(vmm_hypercall(&v, 1), HC_EPERM);
    assert_int_equal(stops, 0);
    /* KVM's calls are refused at CPL > 0 too, with KVM's own error. */
    v.hw.regs.rax = KVM_HC_VAPIC_POLL_IRQ;
    assert_int_equal(vmm_hypercall(&v, 3), (unsigned long)-KVM_EPERM);
    assert_int_equal(vmm_hypercall(&v, 0), 0);
}

static void test_call_number_width(void **state)
{
    (void)state;
    /* Outside 64-bit code only EAX counts: the upper half is ignored. */
    v.hw.regs.rax = 0xdead000000000000ull | HC_EXIT;
    assert_int_equal(vmm_hypercall(&v, 0), HC_OK);
    assert_int_equal(stops, 1);
    assert_int_equal(mode_reads, 1);
    /* In 64-bit code it is RAX: not one of pollux's numbers, so KVM's (unknown). */
    mode.code_bits = 64;
    v.exit_mode_read = false;
    assert_int_equal(vmm_hypercall(&v, 0), (unsigned long)-KVM_ENOSYS);
    assert_int_equal(stops, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_ring_0_call_reads_no_mode, setup),
        cmocka_unit_test_setup(test_user_mode_is_refused, setup),
        cmocka_unit_test_setup(test_call_number_width, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

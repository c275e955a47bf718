/* KVM's paravirtual interface: the hypercall results an unmodified guest sees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/kvm_pv.h"

static void test_kvm_hypercalls_have_kvm_results(void **state)
{
    (void)state;
    assert_int_equal(kvm_pv_hypercall(KVM_HC_VAPIC_POLL_IRQ, 0), 0);
    assert_int_equal((int64_t)kvm_pv_hypercall(0, 0), -1000);
    assert_int_equal((int64_t)kvm_pv_hypercall(5, 0), -1000); /* KICK_CPU: not offered */
    assert_int_equal((int64_t)kvm_pv_hypercall(KVM_HC_VAPIC_POLL_IRQ, 3), -1);
    assert_int_equal((int64_t)kvm_pv_hypercall(0, 3), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kvm_hypercalls_have_kvm_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

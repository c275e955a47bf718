/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which HLT intercept pollux uses (vmm/vcpu/hlt_intercept.c): Idle HLT only where
 * the CPU has it and idle_hlt=auto, and what the backend is told. No
 * emulator here has the feature, so both sides of the decision are here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vmm/vcpu/hlt_intercept.h"

const struct virt_ops *virt;
struct virt_features virt_features;

void kprintf(const char *fmt, ...)
{
    (void)fmt;
}

static int told = -1;

static void record(enum hlt_intercept mode)
{
    told = (int)mode;
}

static void test_choose(void **state)
{
    (void)state;
    assert_int_equal(hlt_intercept_choose(true, IDLE_HLT_AUTO), HLT_INTERCEPT_IDLE);
    assert_int_equal(hlt_intercept_choose(true, IDLE_HLT_OFF), HLT_INTERCEPT_PLAIN);
    assert_int_equal(hlt_intercept_choose(false, IDLE_HLT_AUTO), HLT_INTERCEPT_PLAIN);
    assert_int_equal(hlt_intercept_choose(false, IDLE_HLT_OFF), HLT_INTERCEPT_PLAIN);
    assert_string_equal(hlt_intercept_name(HLT_INTERCEPT_IDLE), "idle_hlt");
    assert_string_equal(hlt_intercept_name(HLT_INTERCEPT_PLAIN), "hlt");
    assert_string_equal(idle_hlt_option_names[IDLE_HLT_AUTO], "auto");
    assert_string_equal(idle_hlt_option_names[IDLE_HLT_OFF], "off");
    assert_null(idle_hlt_option_names[2]);
}

static void setup_with(bool svm, bool has, unsigned opt)
{
    static struct virt_ops svm_like, vmx_like;
    svm_like.set_hlt_intercept = record;
    vmx_like.set_hlt_intercept = 0;
    virt = svm ? &svm_like : &vmx_like;
    virt_features.idle_hlt = has;
    idle_hlt_option = opt;
    told = -1;
    hlt_intercept_setup();
}

static void test_setup_tells_backend(void **state)
{
    (void)state;
    setup_with(true, true, IDLE_HLT_AUTO);
    assert_int_equal(told, HLT_INTERCEPT_IDLE);
    assert_int_equal(hlt_intercept_mode(), HLT_INTERCEPT_IDLE);
    setup_with(true, true, IDLE_HLT_OFF);
    assert_int_equal(told, HLT_INTERCEPT_PLAIN);
    assert_int_equal(hlt_intercept_mode(), HLT_INTERCEPT_PLAIN);
    setup_with(true, false, IDLE_HLT_AUTO);
    assert_int_equal(told, HLT_INTERCEPT_PLAIN);
    assert_int_equal(hlt_intercept_mode(), HLT_INTERCEPT_PLAIN);
    /* A backend without the choice (VMX) keeps the plain intercept, whatever CPUID says. */
    setup_with(false, true, IDLE_HLT_AUTO);
    assert_int_equal(told, -1);
    assert_int_equal(hlt_intercept_mode(), HLT_INTERCEPT_PLAIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_setup_tells_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

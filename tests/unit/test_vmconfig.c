/* SPDX-License-Identifier: GPL-2.0-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "abi/virtio.h"
#include "sched/yield.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/vmconfig.h"

#define MAX_VCPUS 8

static struct vmconfig cfg;
static char err[256];
static char line[2048];

static int setup(void **state)
{
    (void)state;
    memset(&cfg, 0x55, sizeof(cfg));
    memset(err, 0, sizeof(err));
    return 0;
}

static void parse_ok(const char *cmdline)
{
    if (vmconfig_parse(cmdline, 0, MAX_VCPUS, &cfg, err, sizeof(err)) != 0)
        fail_msg("\"%s\" rejected: %s", cmdline, err);
}

/* The whole reason is compared: it must quote the word and stay on one line. */
static void expect_fail(const char *cmdline, const char *reason)
{
    assert_int_equal(vmconfig_parse(cmdline, 0, MAX_VCPUS, &cfg, err, sizeof(err)), -1);
    assert_string_equal(err, reason);
}

/* A string of n copies of c after prefix, in line[]. */
static const char *repeat(const char *prefix, char c, size_t n)
{
    size_t p = strlen(prefix);

    memcpy(line, prefix, p);
    memset(line + p, c, n);
    line[p + n] = '\0';
    return line;
}

static void test_defaults(void **state)
{
    (void)state;
    assert_int_equal(vmconfig_parse("", 3, MAX_VCPUS, &cfg, err, sizeof(err)), 0);
    assert_string_equal(cfg.name, "vm3");
    assert_string_equal(cfg.path, "");
    assert_string_equal(cfg.args, "");
    assert_int_equal(cfg.vcpus, 1);
    assert_int_equal(cfg.mem, VM_MEM_DEFAULT);
    assert_int_equal(cfg.timeout_ms, 0);
    assert_int_equal(cfg.npins, 0);

    memset(&cfg, 0x55, sizeof(cfg));
    assert_int_equal(vmconfig_parse("  \t ", 12, MAX_VCPUS, &cfg, err, sizeof(err)), 0);
    assert_string_equal(cfg.name, "vm12");
    assert_int_equal(cfg.npins, 0);
}

static void test_all_keys(void **state)
{
    (void)state;
    parse_ok("name=web-1.a_b path=/boot/guest.elf vcpus=4 mem=64M timeout_ms=5000 pin=1,2,3 "
             "args=console=ttyS0 root=/dev/sda");
    assert_string_equal(cfg.name, "web-1.a_b");
    assert_string_equal(cfg.path, "/boot/guest.elf");
    assert_int_equal(cfg.vcpus, 4);
    assert_int_equal(cfg.mem, 64ull << 20);
    assert_int_equal(cfg.timeout_ms, 5000);
    assert_int_equal(cfg.npins, 3);
    assert_int_equal(cfg.pins[0], 1);
    assert_int_equal(cfg.pins[1], 2);
    assert_int_equal(cfg.pins[2], 3);
    assert_string_equal(cfg.args, "console=ttyS0 root=/dev/sda");
}

/* A later word overrides an earlier one. */
static void test_repeated_keys(void **state)
{
    (void)state;
    parse_ok("vcpus=2 name=a vcpus=3 name=b pin=0,1,2 pin=5");
    assert_int_equal(cfg.vcpus, 3);
    assert_string_equal(cfg.name, "b");
    assert_int_equal(cfg.npins, 1);
    assert_int_equal(cfg.pins[0], 5);
}

static void test_args(void **state)
{
    (void)state;
    parse_ok("args=a b=c  d=  =e ");
    assert_string_equal(cfg.args, "a b=c  d=  =e ");
    /* Words after args= are part of it, not keys. */
    parse_ok("vcpus=2 args=vcpus=9 bogus");
    assert_int_equal(cfg.vcpus, 2);
    assert_string_equal(cfg.args, "vcpus=9 bogus");
    parse_ok("args=");
    assert_string_equal(cfg.args, "");
    parse_ok("  args=x");
    assert_string_equal(cfg.args, "x");
    assert_string_equal(cfg.name, "vm0");
    expect_fail("args", "module option 'args': missing value");
}

static void test_args_length(void **state)
{
    (void)state;
    parse_ok(repeat("args=", 'x', VM_ARGS_MAX));
    assert_int_equal(strlen(cfg.args), VM_ARGS_MAX);
    expect_fail(repeat("args=", 'x', VM_ARGS_MAX + 1),
                "module option 'args=': args longer than 1023 characters");
}

static void test_unknown_key(void **state)
{
    (void)state;
    expect_fail("vcpus=2 cpus=2", "module option 'cpus=2': unknown key");
    expect_fail("debug", "module option 'debug': unknown key");
    expect_fail("=5", "module option '=5': unknown key");
    expect_fail("arg=x", "module option 'arg=x': unknown key");
}

static void test_missing_value(void **state)
{
    (void)state;
    expect_fail("vcpus", "module option 'vcpus': missing value");
    expect_fail("name= vcpus=2", "module option 'name=': missing value");
    expect_fail("pin=", "module option 'pin=': missing value");
}

static void test_vcpus(void **state)
{
    (void)state;
    expect_fail("vcpus=0", "module option 'vcpus=0': out of range [1, 8]");
    expect_fail("vcpus=9", "module option 'vcpus=9': out of range [1, 8]");
    expect_fail("vcpus=two", "module option 'vcpus=two': not a number");
    expect_fail("vcpus=1K", "module option 'vcpus=1K': not a number");
    parse_ok("vcpus=8");
    assert_int_equal(cfg.vcpus, 8);
    /* The host may have more CPUs than a VM can hold. */
    assert_int_equal(vmconfig_parse("vcpus=65", 0, 256, &cfg, err, sizeof(err)), -1);
    assert_string_equal(err, "module option 'vcpus=65': out of range [1, 64]");
    assert_int_equal(vmconfig_parse("vcpus=64", 0, 256, &cfg, err, sizeof(err)), 0);
}

static void test_mem(void **state)
{
    (void)state;
    parse_ok("mem=1M");
    assert_int_equal(cfg.mem, 1ull << 20);
    parse_ok("mem=0x100000");
    assert_int_equal(cfg.mem, 1ull << 20);
    parse_ok("mem=2G");
    assert_int_equal(cfg.mem, 2ull << 30);
    parse_ok("mem=4100k");
    assert_int_equal(cfg.mem, 4100ull << 10);
    parse_ok("mem=0xfedff000");
    assert_int_equal(cfg.mem, 0xfedff000ull);
    expect_fail("mem=1020K", "module option 'mem=1020K': below the 1 MiB minimum");
    expect_fail("mem=1049000", "module option 'mem=1049000': not a multiple of 4 KiB");
    expect_fail("mem=0xfee00000", "module option 'mem=0xfee00000': must be below 0xfee00000");
    expect_fail("mem=4G", "module option 'mem=4G': must be below 0xfee00000");
    expect_fail("mem=12X", "module option 'mem=12X': not a size");
    expect_fail("mem=M", "module option 'mem=M': not a size");
    expect_fail("mem=99999999999999999999", "module option 'mem=99999999999999999999': not a size");
    expect_fail("mem=17179869184G", "module option 'mem=17179869184G': not a size");
}

static void test_timeout(void **state)
{
    (void)state;
    parse_ok("timeout_ms=0x10");
    assert_int_equal(cfg.timeout_ms, 16);
    expect_fail("timeout_ms=-1", "module option 'timeout_ms=-1': not a number");
}

static void test_name(void **state)
{
    (void)state;
    parse_ok(repeat("name=", 'n', VM_NAME_MAX));
    assert_int_equal(strlen(cfg.name), VM_NAME_MAX);
    expect_fail(repeat("name=", 'n', VM_NAME_MAX + 1),
                "module option 'name=nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn': name longer than 31 "
                "characters");
    expect_fail("name=a/b",
                "module option 'name=a/b': name may hold only A-Z, a-z, 0-9, '_', '.' and '-'");
    expect_fail("name=a=b",
                "module option 'name=a=b': name may hold only A-Z, a-z, 0-9, '_', '.' and '-'");
}

static void test_path(void **state)
{
    (void)state;
    parse_ok(repeat("path=", 'p', VM_PATH_MAX));
    assert_int_equal(strlen(cfg.path), VM_PATH_MAX);
    assert_int_equal(
        vmconfig_parse(repeat("path=", 'p', VM_PATH_MAX + 1), 0, MAX_VCPUS, &cfg, err, sizeof(err)),
        -1);
    assert_non_null(strstr(err, "path longer than 127 characters"));
}

static void test_initrd(void **state)
{
    (void)state;
    parse_ok("name=a");
    assert_string_equal(cfg.initrd, "");
    parse_ok("initrd=/boot/1-initrd.cpio args=x");
    assert_string_equal(cfg.initrd, "/boot/1-initrd.cpio");
    expect_fail("initrd=", "module option 'initrd=': missing value");
    assert_int_equal(vmconfig_parse(repeat("initrd=", 'p', VM_PATH_MAX + 1), 0, MAX_VCPUS, &cfg,
                                    err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "path longer than 127 characters"));
}

static void test_unbacked(void **state)
{
    (void)state;
    parse_ok("name=a");
    assert_int_equal(cfg.unbacked, UNBACKED_STOP);
    assert_false(cfg.unbacked_given);
    parse_ok("unbacked=ignore");
    assert_int_equal(cfg.unbacked, UNBACKED_IGNORE);
    assert_true(cfg.unbacked_given);
    parse_ok("unbacked=ignore unbacked=stop");
    assert_int_equal(cfg.unbacked, UNBACKED_STOP);
    expect_fail("unbacked=zero", "module option 'unbacked=zero': expected stop or ignore");
    expect_fail("unbacked=Stop", "module option 'unbacked=Stop': expected stop or ignore");
    expect_fail("unbacked=", "module option 'unbacked=': missing value");
}

/* On unless the line says off; whether it said so (Linux guests default to off). */
static void test_legacy_pic(void **state)
{
    (void)state;
    parse_ok("name=a");
    assert_true(cfg.legacy_pic);
    assert_false(cfg.legacy_pic_given);
    parse_ok("legacy_pic=off");
    assert_false(cfg.legacy_pic);
    assert_true(cfg.legacy_pic_given);
    parse_ok("legacy_pic=off legacy_pic=on");
    assert_true(cfg.legacy_pic);
    assert_true(cfg.legacy_pic_given);
    expect_fail("legacy_pic=maybe",
                "module option 'legacy_pic=maybe': expected one of 0, 1, yes, no, on, off, true, "
                "false");
    expect_fail("legacy_pic=", "module option 'legacy_pic=': missing value");
}

static void test_ioapic(void **state)
{
    (void)state;
    parse_ok("");
    assert_true(cfg.ioapic);
    parse_ok("ioapic=off");
    assert_false(cfg.ioapic);
    parse_ok("ioapic=off ioapic=on");
    assert_true(cfg.ioapic);
    expect_fail("ioapic=maybe",
                "module option 'ioapic=maybe': expected one of 0, 1, yes, no, on, off, true, "
                "false");
}

/*
 * A VM's own policy words override the hypervisor options (vm_policy_hv)
 * for it alone; a VM without them has the hypervisor's values.
 */
static void test_policy(void **state)
{
    (void)state;
    struct vm_policy saved = vm_policy_hv;
    vm_policy_hv.yield_pivot = YIELD_PIVOT_LAST_BOOSTED;
    vm_policy_hv.halt_poll.max_ns = 123;
    parse_ok("vcpus=2");
    assert_int_equal(cfg.policy.yield_pivot, YIELD_PIVOT_LAST_BOOSTED);
    assert_int_equal(cfg.policy.halt_poll.max_ns, 123);
    assert_true(cfg.policy.spin.enabled);
    parse_ok("yield_pivot=none halt_poll_ns=0 halt_poll_mode=fixed ple=off ple_window=8192 "
             "pause_filter_count=100 pause_filter_count_only=off spin_sw_threshold=4");
    assert_int_equal(cfg.policy.yield_pivot, YIELD_PIVOT_NONE);
    assert_int_equal(cfg.policy.halt_poll.max_ns, 0);
    assert_int_equal(cfg.policy.halt_poll.mode, HALT_POLL_FIXED);
    assert_int_equal(cfg.policy.halt_poll.grow, vm_policy_hv.halt_poll.grow);
    assert_false(cfg.policy.spin.enabled);
    assert_int_equal(cfg.policy.spin.ple.base, 8192);
    assert_int_equal(cfg.policy.spin.pause_filter.base, 100);
    assert_int_equal(cfg.policy.spin.count_only, SPIN_COUNT_ONLY_OFF);
    assert_int_equal(cfg.policy.spin.sw_threshold, 4);
    assert_int_equal(cfg.policy.timer_advance_ns, -1); /* KVM's adaptive, unless given */
    parse_ok("timer_advance_ns=0");
    assert_int_equal(cfg.policy.timer_advance_ns, 0);
    parse_ok("timer_advance_ns=2500");
    assert_int_equal(cfg.policy.timer_advance_ns, 2500);
    expect_fail("timer_advance_ns=-5",
                "module option 'timer_advance_ns=-5': out of range [-1, 1000000]");
    /* The hypervisor's values are untouched by a VM's words. */
    assert_true(vm_policy_hv.spin.enabled);
    assert_int_equal(vm_policy_hv.spin.ple.base, 4096);
    expect_fail(
        "yield_pivot=sideways",
        "module option 'yield_pivot=sideways': expected one of vcpu_id, last_boosted, none");
    expect_fail("pause_filter_count=70000", "module option 'pause_filter_count=70000': out of "
                                            "range [1, 65535]");
    vm_policy_hv = saved;
}

/* pv=: the VM's words replace the hypervisor's; the features they give, and the defaults. */
static void test_pv(void **state)
{
    (void)state;
    struct vm_policy saved = vm_policy_hv;
    const uint32_t st = 1u << KVM_FEATURE_STEAL_TIME, unhalt = 1u << KVM_FEATURE_PV_UNHALT,
                   yield = 1u << KVM_FEATURE_PV_SCHED_YIELD, flush = 1u << KVM_FEATURE_PV_TLB_FLUSH,
                   ipi = 1u << KVM_FEATURE_PV_SEND_IPI;
    parse_ok("vcpus=2");
    assert_int_equal(cfg.policy.pv, 0);
    /* Not given: Linux gets every one (KVM's -cpu host), a bundled guest none (as before). */
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, true), KVM_PV_SCHED_FEATURES);
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, false), 0);
    parse_ok("pv=none");
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, true), 0);
    parse_ok("pv=pv_unhalt,pv_send_ipi");
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, false), unhalt | ipi);
    /* PV sched yield and PV TLB flush bring steal time: Linux uses them only with it. */
    parse_ok("pv=pv_sched_yield");
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, false), yield | st);
    parse_ok("pv=pv_tlb_flush");
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, true), flush | st);
    parse_ok("pv=all");
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, false),
                     st | unhalt | yield | flush | ipi);
    /* The hypervisor's pv= is every VM's default; a VM's own replaces it, never adds to it. */
    vm_policy_hv.pv = 1u << PV_WORD_PV_UNHALT;
    parse_ok("vcpus=1");
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, true), unhalt);
    parse_ok("pv=steal_time");
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, true), st);
    parse_ok("pv=none");
    assert_int_equal(vm_policy_kvm_features(cfg.policy.pv, true), 0);
    expect_fail("pv=pv_yield", "module option 'pv=pv_yield': expected a comma-separated list of "
                               "steal_time, pv_unhalt, pv_sched_yield, pv_tlb_flush, pv_send_ipi, "
                               "all, none");
    char names[96];
    vm_policy_pv_names(st | flush | ipi, names, sizeof(names));
    assert_string_equal(names, "steal_time,pv_tlb_flush,pv_send_ipi");
    vm_policy_pv_names(0, names, sizeof(names));
    assert_string_equal(names, "none");
    vm_policy_hv = saved;
}

static void test_pins(void **state)
{
    (void)state;
    parse_ok("vcpus=3 pin=0,63,0");
    assert_int_equal(cfg.npins, 3);
    assert_int_equal(cfg.pins[0], 0);
    assert_int_equal(cfg.pins[1], 63);
    assert_int_equal(cfg.pins[2], 0);
    /* The count is checked after all words, so vcpus may come after pin. */
    parse_ok("pin=4,0x5 vcpus=2");
    assert_int_equal(cfg.npins, 2);
    assert_int_equal(cfg.pins[1], 5);
    expect_fail("pin=1,2,3 vcpus=2", "module option 'pin=1,2,3': 3 pins but vcpus=2");
    expect_fail("pin=1,2", "module option 'pin=1,2': 2 pins but vcpus=1");
    /* args= ends the words, not the checks (found by the fuzzer). */
    expect_fail("vcpus=2 pin=0,1,2 args=a b", "module option 'pin=0,1,2': 3 pins but vcpus=2");
}

static void test_bad_pins(void **state)
{
    (void)state;
    expect_fail("pin=64", "module option 'pin=64': CPU 64 is not below 64");
    expect_fail("pin=1,,2", "module option 'pin=1,,2': not a comma-separated list of CPU numbers");
    expect_fail("pin=1,", "module option 'pin=1,': not a comma-separated list of CPU numbers");
    expect_fail("pin=,1", "module option 'pin=,1': not a comma-separated list of CPU numbers");
    expect_fail("pin=a", "module option 'pin=a': not a comma-separated list of CPU numbers");
    expect_fail("pin=1;2", "module option 'pin=1;2': not a comma-separated list of CPU numbers");
}

static void test_too_many_pins(void **state)
{
    (void)state;
    size_t n = 0;

    n += (size_t)snprintf(line, sizeof(line), "pin=0");
    for (unsigned i = 1; i <= VM_MAX_VCPUS; i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, ",%u", i % 64);
    assert_int_equal(vmconfig_parse(line, 0, 256, &cfg, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "more than 64 pins"));
}

/* net= takes the virtio-net slot, disk= the virtio-blk slot (the SSDT declares exactly these). */
static void test_virtio_slots(void **state)
{
    (void)state;
    parse_ok("path=linux");
    assert_int_equal(vmconfig_virtio_slots(&cfg), 0);
    parse_ok("path=linux net=lan0");
    assert_int_equal(vmconfig_virtio_slots(&cfg), 1u << VIRTIO_SLOT_NET);
    parse_ok("path=linux disk=/disk.img");
    assert_int_equal(vmconfig_virtio_slots(&cfg), 1u << VIRTIO_SLOT_BLK);
    parse_ok("path=linux disk=/disk.img net=lan0");
    assert_int_equal(vmconfig_virtio_slots(&cfg), 1u << VIRTIO_SLOT_NET | 1u << VIRTIO_SLOT_BLK);
}

/* A short buffer truncates the reason and is never overrun; no buffer is fine too. */
static void test_short_err(void **state)
{
    (void)state;
    char small[12];

    memset(small, 'z', sizeof(small));
    assert_int_equal(vmconfig_parse("vcpus=0", 0, MAX_VCPUS, &cfg, small, 8), -1);
    assert_string_equal(small, "module ");
    assert_int_equal(small[8], 'z');
    assert_int_equal(vmconfig_parse("vcpus=0", 0, MAX_VCPUS, &cfg, NULL, 0), -1);
}

static const char *const earlier[] = {"hello", "a-name-of-exactly-28-chars-x",
                                      "thirty-characters-in-this-name", "b", "b-2"};

static bool taken(const char *name, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < sizeof(earlier) / sizeof(earlier[0]); i++)
        if (!strcmp(earlier[i], name))
            return true;
    return false;
}

static void test_unique_name(void **state)
{
    (void)state;
    char name[VM_NAME_MAX + 1], err[256];
    strcpy(name, "fresh");
    assert_int_equal(vmconfig_unique_name(name, 7, taken, NULL, err, sizeof(err)), 0);
    assert_string_equal(name, "fresh");
    strcpy(name, "hello");
    assert_int_equal(vmconfig_unique_name(name, 7, taken, NULL, err, sizeof(err)), 0);
    assert_string_equal(name, "hello-7");
    /* 28 characters take "-7" whole. */
    strcpy(name, "a-name-of-exactly-28-chars-x");
    assert_int_equal(strlen(name), 28);
    assert_int_equal(vmconfig_unique_name(name, 7, taken, NULL, err, sizeof(err)), 0);
    assert_string_equal(name, "a-name-of-exactly-28-chars-x-7");
    /* 30 characters and "-12" would not fit: never cut to fit, refused. */
    strcpy(name, "thirty-characters-in-this-name");
    assert_int_equal(strlen(name), 30);
    assert_int_equal(vmconfig_unique_name(name, 12, taken, NULL, err, sizeof(err)), -1);
    assert_string_equal(name, "thirty-characters-in-this-name");
    assert_non_null(strstr(err, "longer than 31"));
    /* The suffixed name can be taken as well. */
    strcpy(name, "b");
    assert_int_equal(vmconfig_unique_name(name, 2, taken, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "'b-2'"));
    assert_string_equal(name, "b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults, setup),
        cmocka_unit_test_setup(test_all_keys, setup),
        cmocka_unit_test_setup(test_repeated_keys, setup),
        cmocka_unit_test_setup(test_args, setup),
        cmocka_unit_test_setup(test_args_length, setup),
        cmocka_unit_test_setup(test_unknown_key, setup),
        cmocka_unit_test_setup(test_missing_value, setup),
        cmocka_unit_test_setup(test_vcpus, setup),
        cmocka_unit_test_setup(test_mem, setup),
        cmocka_unit_test_setup(test_timeout, setup),
        cmocka_unit_test_setup(test_name, setup),
        cmocka_unit_test_setup(test_path, setup),
        cmocka_unit_test_setup(test_unbacked, setup),
        cmocka_unit_test_setup(test_legacy_pic, setup),
        cmocka_unit_test_setup(test_ioapic, setup),
        cmocka_unit_test_setup(test_policy, setup),
        cmocka_unit_test_setup(test_pv, setup),
        cmocka_unit_test_setup(test_initrd, setup),
        cmocka_unit_test_setup(test_pins, setup),
        cmocka_unit_test_setup(test_bad_pins, setup),
        cmocka_unit_test_setup(test_too_many_pins, setup),
        cmocka_unit_test_setup(test_virtio_slots, setup),
        cmocka_unit_test_setup(test_short_err, setup),
        cmocka_unit_test(test_unique_name),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* The per-VM CPUID answers: each one, patched for a vCPU, is what the filter says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdbool.h>
#include <string.h>

#include "arch/x86/regs.h"
#include "vmm/exit/cpuid_cache.h"

uint64_t tsc_khz = 2500000; /* vmm/dev/kvm_pv.c's kvmclock reads it */

static const struct cpuid_view vm_view = {.nvcpus = 64,
                                          .exec = CPUID_EXEC_RDTSCP,
                                          .max_leaf = 0x16,
                                          .max_ext_leaf = 0x80000008,
                                          .tsc_khz = 2500000,
                                          .apic_timer_khz = 1000,
                                          .xcr0_supported = 0x207,
                                          .xsave_size = 0x988};

/* The leaves whose answer depends on ECX on x86 CPUs. */
static bool has_subleaves(uint32_t leaf)
{
    static const uint32_t leaves[] = {4, 7, 0xb, 0xd, 0xf, 0x10, 0x12, 0x14, 0x17, 0x18, 0x1f};
    for (unsigned i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++)
        if (leaves[i] == leaf)
            return true;
    return false;
}

/* A host whose every register differs per leaf (and subleaf, where it has them). */
static struct cpuid_regs host(uint32_t leaf, uint32_t subleaf)
{
    if (!has_subleaves(leaf))
        subleaf = 0;
    uint32_t h = (leaf * 2654435761u) ^ (subleaf * 40503u);
    return (struct cpuid_regs){~h, ~(h << 3), ~(h >> 5), ~(h * 7u)};
}

static struct cpuid_cache cache;

static int setup(void **state)
{
    (void)state;
    cpuid_cache_fill(&cache, &vm_view, host);
    return 0;
}

static struct cpuid_regs filtered(uint32_t leaf, uint32_t subleaf,
                                  const struct cpuid_vcpu_inputs *in)
{
    struct cpuid_view v = vm_view;
    v.vcpu_id = in->vcpu_id;
    v.guest_cr4 = in->guest_cr4;
    v.apic_enabled = in->apic_enabled;
    struct cpuid_regs r = host(leaf, subleaf);
    cpuid_filter(leaf, subleaf, &v, &r);
    return r;
}

static void assert_regs_equal(struct cpuid_regs a, struct cpuid_regs b)
{
    assert_int_equal(a.eax, b.eax);
    assert_int_equal(a.ebx, b.ebx);
    assert_int_equal(a.ecx, b.ecx);
    assert_int_equal(a.edx, b.edx);
}

static void test_every_kept_answer_is_the_filters(void **state)
{
    (void)state;
    static const unsigned ids[] = {0, 1, 5, 63};
    static const uint64_t cr4s[] = {0, CR4_OSXSAVE, CR4_PKE, CR4_OSXSAVE | CR4_PKE | 0x20};
    static const uint32_t firsts[] = {0, 0x40000000u, 0x80000000u};
    unsigned kept = 0;
    for (unsigned f = 0; f < 3; f++)
        for (uint32_t leaf = firsts[f]; leaf < firsts[f] + 0x24; leaf++)
            for (uint32_t sub = 0; sub < 4; sub++) {
                const struct cpuid_answer *a = cpuid_cache_find(&cache, leaf, sub);
                if (!a)
                    continue;
                kept++;
                for (unsigned i = 0; i < 4; i++)
                    for (unsigned c = 0; c < 4; c++)
                        for (int apic = 0; apic < 2; apic++) {
                            struct cpuid_vcpu_inputs in = {ids[i], cr4s[c], apic};
                            assert_regs_equal(cpuid_answer_for(a, &in), filtered(leaf, sub, &in));
                        }
            }
    assert_true(kept > 60);
}

static void test_state_dependent_leaves_are_patched(void **state)
{
    (void)state;
    const struct cpuid_answer *l1 = cpuid_cache_find(&cache, 1, 0);
    assert_non_null(l1);
    assert_true(l1->needs & CPUID_NEEDS_CR4);
    assert_true(l1->needs & CPUID_NEEDS_APIC);
    assert_true(l1->needs & CPUID_NEEDS_ID);
    struct cpuid_vcpu_inputs off = {0}, on = {37, CR4_OSXSAVE, true};
    struct cpuid_regs a = cpuid_answer_for(l1, &off), b = cpuid_answer_for(l1, &on);
    assert_false(a.ecx & (1u << 27));
    assert_true(b.ecx & (1u << 27));
    assert_false(a.edx & (1u << 9));
    assert_true(b.edx & (1u << 9));
    assert_int_equal(b.ebx >> 24, 37);
    assert_int_equal((b.ebx >> 16) & 0xff, 64);
    /* Leaf 0 asks nothing of the vCPU: the benchmark's CPUID is one table read. */
    assert_int_equal(cpuid_cache_find(&cache, 0, 0)->needs, 0);
}

static void test_what_is_not_kept(void **state)
{
    (void)state;
    /* The XSAVE sizes follow the XCR0 in force at the exit. */
    assert_null(cpuid_cache_find(&cache, 0xd, 0));
    assert_null(cpuid_cache_find(&cache, 0xd, 1));
    assert_non_null(cpuid_cache_find(&cache, 7, 0));
    assert_non_null(cpuid_cache_find(&cache, 7, 1));
    /* Subleaves past those kept, and the hypervisor range. */
    assert_null(cpuid_cache_find(&cache, 4, 2));
    assert_null(cpuid_cache_find(&cache, 0x40000000u, 0));
    assert_null(cpuid_cache_find(&cache, 0x80000000u + CPUID_CACHE_SPAN, 0));
    /* A leaf that ignores ECX answers every subleaf. */
    assert_non_null(cpuid_cache_find(&cache, 1, 12345));
    /* Leaves past the host's maximum read 0 for every subleaf. */
    const struct cpuid_answer *beyond = cpuid_cache_find(&cache, 0x1f, 7);
    assert_non_null(beyond);
    struct cpuid_vcpu_inputs in = {3, CR4_OSXSAVE, true};
    assert_regs_equal(cpuid_answer_for(beyond, &in), (struct cpuid_regs){0, 0, 0, 0});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kept_answer_is_the_filters),
        cmocka_unit_test(test_state_dependent_leaves_are_patched),
        cmocka_unit_test(test_what_is_not_kept),
    };
    return cmocka_run_group_tests(tests, setup, 0);
}

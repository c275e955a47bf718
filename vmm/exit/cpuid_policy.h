/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest CPUID policy as data: docs/cpuid.md, turned into
 * build/gen/cpuid_table.c by tools/cpuid_policy.py. Each entry holds, per
 * register, the bits each source supplies; bits no source names read as 0.
 * vmm/exit/cpuid.c applies it.
 */
#ifndef POLLUX_VMM_EXIT_CPUID_POLICY_H
#define POLLUX_VMM_EXIT_CPUID_POLICY_H

#include <stdint.h>

enum cpuid_source {
    CPUID_FROM_HOST,         /* the host's bits ("host" and "pass" rows) */
    CPUID_FROM_SET,          /* always 1 */
    CPUID_FROM_APIC_EN,      /* 1 while IA32_APIC_BASE enables the local APIC */
    CPUID_FROM_CR4_OSXSAVE,  /* the guest's CR4.OSXSAVE */
    CPUID_FROM_CR4_PKE,      /* the guest's CR4.PKE */
    CPUID_FROM_EXEC_RDTSCP,  /* the host's, if the guest may execute RDTSCP and RDPID */
    CPUID_FROM_EXEC_INVPCID, /* the host's, if the guest may execute INVPCID */
    CPUID_FROM_EXEC_XSAVES,  /* the host's, if the guest may execute XSAVES/XRSTORS */
    CPUID_FROM_POLLUX,       /* computed by vmm/exit/cpuid.c */
    CPUID_FROM_COUNT
};

enum cpuid_subleaf_kind {
    CPUID_SUBLEAF_NONE,   /* the leaf ignores ECX */
    CPUID_SUBLEAF_EXACT,  /* this subleaf */
    CPUID_SUBLEAF_OTHERS, /* every subleaf of the leaf without an entry of its own */
};

struct cpuid_leaf_policy {
    uint32_t leaf, subleaf;
    enum cpuid_subleaf_kind kind;
    uint32_t mask[4][CPUID_FROM_COUNT]; /* [EAX..EDX][source] */
};

extern const struct cpuid_leaf_policy cpuid_policy_table[];
extern const unsigned cpuid_policy_count;

#endif

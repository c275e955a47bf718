/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The smallest guest: greets, echoes its command line and reports what CPUID
 * says about the hypervisor, then exits 0.
 */
#include "guest-tests/runtime/runtime.h"
#include "abi/hypercall.h"

#define CPUID1_ECX_HYPERVISOR (1u << 31)

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    printf("hello, world\n");
    printf("cmdline: %s\n", cmdline(info));

    struct cpuid_regs r = cpuid(POLLUX_CPUID_BASE, 0);
    uint32_t words[3] = {r.ebx, r.ecx, r.edx};
    char sig[13];
    int n = 0;
    /* The signature is NUL-padded ("pollux\0\0\0\0\0\0"): keep only its characters. */
    for (int i = 0; i < 12; i++) {
        char c = (char)(words[i / 4] >> (8 * (i % 4)));
        if (c != '\0')
            sig[n++] = c;
    }
    sig[n] = '\0';
    printf("hypervisor: %s\n", sig);
    printf("hypervisor bit: %u\n", (cpuid(1, 0).ecx & CPUID1_ECX_HYPERVISOR) ? 1u : 0u);
    return 0;
}

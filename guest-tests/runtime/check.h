/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A contract checker's verdicts (cpucheck, pvcheck): one line per check,
 * "check <name>: ok" or "check <name>: FAIL <why>", which the boot tests
 * parse, then a summary; the guest's exit code is the number of failures.
 * Header-only: each checker is one guest with its own tally.
 */
#ifndef POLLUX_GUEST_CHECK_H
#define POLLUX_GUEST_CHECK_H

#include "guest-tests/runtime/runtime.h"

static unsigned checks, failures;

static inline void vcheck(bool ok, const char *name, const char *why)
{
    checks++;
    if (ok) {
        printf("check %s: ok\n", name);
    } else {
        failures++;
        printf("check %s: FAIL %s\n", name, why);
    }
}

/* "<guest>: N checks, M failed"; returns the exit code. */
static inline int check_summary(const char *guest)
{
    printf("%s: %u checks, %u failed\n", guest, checks, failures);
    return (int)failures;
}

#endif

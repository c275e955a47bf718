/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hypervisor's own command-line options (the multiboot command line).
 * docs/options.md lists them; `bad_options` counts the words that were
 * rejected, which makes the final @shutdown status non-zero.
 */
#ifndef POLLUX_BOOT_OPTIONS_H
#define POLLUX_BOOT_OPTIONS_H

#include <stdint.h>

struct hv_options {
    uint64_t maxcpus;    /* bring at most this many CPUs online */
    uint64_t fault_test; /* 0: off; else the test (docs/options.md) */
};

extern struct hv_options hv_options;

/* Parse, report each bad word as @warning plus a list of valid options. */
unsigned options_init(const char *cmdline);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who gets the bytes typed on host COM1, as QEMU's serial mux decides:
 * the key console by default; `Ctrl-A <n>` gives the input to VM n (its
 * module index, 0-9), `Ctrl-A c` takes it back, `Ctrl-A Ctrl-A` sends one
 * Ctrl-A to whoever has the input. Pure: the caller acts on each result.
 */
#ifndef POLLUX_VMM_CONSOLE_SERIAL_MUX_H
#define POLLUX_VMM_CONSOLE_SERIAL_MUX_H

#include <stdbool.h>

#define SERIAL_MUX_ESCAPE 0x01 /* Ctrl-A */

enum serial_mux_event {
    MUX_KEY,         /* c is a key for the key console */
    MUX_GUEST,       /* c is input for VM vm */
    MUX_SELECT_VM,   /* the input now goes to VM vm */
    MUX_SELECT_KEYS, /* the input is the key console's again */
    MUX_PENDING,     /* an escape: the next byte says what it means */
    MUX_DROPPED,     /* an escape followed by a byte that means nothing */
};

struct serial_mux {
    int vm; /* the VM with the input, -1 for the key console */
    bool escaped;
};

struct serial_mux_result {
    enum serial_mux_event event;
    int vm;
    char c;
};

void serial_mux_init(struct serial_mux *m);
struct serial_mux_result serial_mux_feed(struct serial_mux *m, char c);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reads its COM1 (polling LSR.DR, reading RBR) and prints each line it
 * receives back as "echo: <line>"; the line "bye" makes it exit 0. Input
 * reaches it through the key console's Ctrl-A <n> (docs/console.md).
 */
#include "guest-tests/runtime/runtime.h"

#define COM1_RBR 0x3f8
#define LSR_DR   0x01
#define LINE_MAX 80

static bool same(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    (void)info;
    char line[LINE_MAX + 1];
    unsigned len = 0;
    printf("echo: ready\n");
    for (;;) {
        if (!(inb(COM1_LSR) & LSR_DR))
            continue;
        char c = (char)inb(COM1_RBR);
        if (c == '\r' || c == '\n') {
            line[len] = 0;
            if (same(line, "bye"))
                return 0;
            printf("echo: %s\n", line);
            len = 0;
        } else if (len < LINE_MAX) {
            line[len++] = c;
        }
    }
}

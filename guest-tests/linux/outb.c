/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * outb PORT VALUE: write one byte to an I/O port from the Linux guest's
 * userspace (docs/linux.md, the trace marker). The Debian kernel has no
 * /dev/port (CONFIG_DEVPORT is off), and ioperm() reaches only ports below
 * 0x400, so this takes iopl(3), which init (root) may.
 * Built for the initramfs by tools/linux.sh with the host's compiler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: outb PORT VALUE\n");
        return 2;
    }
    char *end_port, *end_value;
    unsigned long port = strtoul(argv[1], &end_port, 0);
    unsigned long value = strtoul(argv[2], &end_value, 0);
    if (!*argv[1] || !*argv[2] || *end_port || *end_value || port > 0xFFFF || value > 0xFF) {
        fprintf(stderr, "outb: PORT is 0..0xFFFF, VALUE 0..0xFF\n");
        return 2;
    }
    if (iopl(3) != 0) {
        perror("outb: iopl");
        return 1;
    }
    outb((unsigned char)value, (unsigned short)port);
    return 0;
}

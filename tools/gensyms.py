#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn `nm -n` output of the first link into the .ksyms assembly table.

Usage: gensyms.py < nm-output > ksyms.S. Only text symbols are kept; they are
sorted by address, duplicates at one address keep the first global name.
"""
import sys


def main():
    syms = {}
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 3 or parts[1] not in "tT":
            continue
        addr = int(parts[0], 16)
        name = parts[2]
        if name.startswith(".L"):
            continue
        if addr not in syms or (parts[1] == "T" and syms[addr][1] == "t"):
            syms[addr] = (name, parts[1])
    out = ['\t.section .ksyms, "a"', "\t.balign 8", "\t.globl ksyms_count, ksyms_table",
           f"ksyms_count:\t.quad {len(syms)}", "ksyms_table:"]
    for i, addr in enumerate(sorted(syms)):
        out.append(f"\t.quad 0x{addr:x}, .Lname{i}")
    for i, addr in enumerate(sorted(syms)):
        out.append(f'.Lname{i}:\t.asciz "{syms[addr][0]}"')
    print("\n".join(out))


if __name__ == "__main__":
    main()

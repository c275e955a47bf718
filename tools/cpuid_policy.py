#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The guest CPUID policy of docs/cpuid.md: parse it, apply it, generate C.

`cpuid_policy.py docs/cpuid.md out.c` writes the table the hypervisor's
filter uses (vmm/exit/cpuid.c). The boot tests import parse() and expected() to
check what a guest read against the same table.
"""
import re
import sys

REGS = ("EAX", "EBX", "ECX", "EDX")
# Policy word -> enum cpuid_source in vmm/exit/cpuid_policy.h; None: the bits read 0.
SOURCES = {
    "host": "CPUID_FROM_HOST",
    "pass": "CPUID_FROM_HOST",
    "set": "CPUID_FROM_SET",
    "apic.EN": "CPUID_FROM_APIC_EN",
    "cr4.OSXSAVE": "CPUID_FROM_CR4_OSXSAVE",
    "cr4.PKE": "CPUID_FROM_CR4_PKE",
    "exec.RDTSCP": "CPUID_FROM_EXEC_RDTSCP",
    "exec.INVPCID": "CPUID_FROM_EXEC_INVPCID",
    "exec.XSAVES": "CPUID_FROM_EXEC_XSAVES",
    "pollux": "CPUID_FROM_POLLUX",
    "clear": None,
    "zero": None,
}
ORDER = [s for i, s in enumerate(SOURCES.values()) if s and s not in list(SOURCES.values())[:i]]
ROW = re.compile(r"^\|\s*(0x[0-9a-f]+)(?:\.(\d+|\*))?\s*\|\s*(EAX|EBX|ECX|EDX|all)\s*\|\s*([0-9:]*)\s*"
                 r"\|([^|]*)\|\s*([\w.]+)\s*\|")


class Row:
    def __init__(self, line_no, leaf, subleaf, reg, mask, name, policy):
        self.line_no, self.leaf, self.subleaf, self.reg = line_no, leaf, subleaf, reg
        self.mask, self.name, self.policy = mask, name, policy


def bit_mask(bits):
    if ":" in bits:
        hi, lo = (int(b) for b in bits.split(":"))
    else:
        hi = lo = int(bits)
    if not 0 <= lo <= hi <= 31:
        raise ValueError(f"bad bit range {bits}")
    return ((1 << (hi - lo + 1)) - 1) << lo


def parse(path):
    """Rows of the policy tables; raises ValueError on a malformed or overlapping row."""
    rows, taken = [], {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = ROW.match(line)
            if not m:
                if re.match(r"^\|\s*0x", line):
                    raise ValueError(f"{path}:{n}: cannot read the row")
                continue
            leaf_s, sub_s, reg, bits, name, policy = m.groups()
            if policy not in SOURCES:
                raise ValueError(f"{path}:{n}: unknown policy '{policy}'")
            subleaf = None if sub_s is None else ("*" if sub_s == "*" else int(sub_s))
            regs = REGS if reg == "all" else (reg,)
            if reg == "all" and bits:
                raise ValueError(f"{path}:{n}: a whole-leaf row has no bits")
            mask = 0xffffffff if reg == "all" else bit_mask(bits)
            for r in regs:
                key = (int(leaf_s, 16), subleaf, r)
                if taken.get(key, 0) & mask:
                    raise ValueError(f"{path}:{n}: bits of {leaf_s} {r} listed twice")
                taken[key] = taken.get(key, 0) | mask
                rows.append(Row(n, int(leaf_s, 16), subleaf, r, mask, name.strip(), policy))
    leaves = {}
    for r in rows:
        leaves.setdefault(r.leaf, set()).add(r.subleaf is None)
    for leaf, kinds in leaves.items():
        if len(kinds) > 1:
            raise ValueError(f"{path}: leaf {leaf:#x} has rows with and without subleaves")
    return rows


def rows_for(rows, leaf, subleaf):
    """The rows that decide (leaf, subleaf), as the C filter finds them."""
    mine = [r for r in rows if r.leaf == leaf]
    if any(r.subleaf is None for r in mine):
        return mine
    exact = [r for r in mine if r.subleaf == subleaf]
    return exact or [r for r in mine if r.subleaf == "*"]


def expected(rows, leaf, subleaf, host, state):
    """What the guest must read, per register: (value, mask of the bits the table decides).

    host: the four host registers; state: {"apic.EN", "cr4.OSXSAVE", "cr4.PKE",
    "exec.RDTSCP", "exec.INVPCID", "exec.XSAVES"} -> bool. Bits of `pollux`
    rows are left out of the mask: pollux computes them.
    """
    out = {}
    for i, reg in enumerate(REGS):
        value, decided = 0, 0xffffffff
        for r in rows_for(rows, leaf, subleaf):
            if r.reg != reg:
                continue
            p = r.policy
            if p == "pollux":
                decided &= ~r.mask
            elif p in ("host", "pass") or (p.startswith("exec.") and state[p]):
                value |= host[i] & r.mask
            elif p == "set" or (p in ("apic.EN", "cr4.OSXSAVE", "cr4.PKE") and state[p]):
                value |= r.mask
        out[reg] = (value, decided)
    return out


def generate(rows, source):
    entries = {}
    for r in rows:
        key = (r.leaf, r.subleaf)
        masks = entries.setdefault(key, {reg: {} for reg in REGS})
        src = SOURCES[r.policy]
        if src:
            masks[r.reg][src] = masks[r.reg].get(src, 0) | r.mask
    out = [f"/* Generated from {source} by tools/cpuid_policy.py: edit the table, not this file. */",
           '#include "vmm/exit/cpuid_policy.h"', "",
           "const struct cpuid_leaf_policy cpuid_policy_table[] = {"]
    for (leaf, subleaf), masks in sorted(entries.items(),
                                         key=lambda e: (e[0][0], -1 if e[0][1] is None else
                                                        1 << 32 if e[0][1] == "*" else e[0][1])):
        kind = ("CPUID_SUBLEAF_NONE" if subleaf is None else
                "CPUID_SUBLEAF_OTHERS" if subleaf == "*" else "CPUID_SUBLEAF_EXACT")
        regs = []
        for reg in REGS:
            fields = ", ".join(f"[{src}] = {masks[reg][src]:#010x}u" for src in ORDER
                               if src in masks[reg])
            regs.append("{" + (fields or "0") + "}")
        out.append(f"    {{{leaf:#010x}u, {0 if subleaf in (None, '*') else subleaf}u, {kind},")
        out.append("     {" + ", ".join(regs) + "}},")
    out += ["};", "",
            "const unsigned cpuid_policy_count = sizeof(cpuid_policy_table) / "
            "sizeof(cpuid_policy_table[0]);", ""]
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: cpuid_policy.py docs/cpuid.md out.c")
    try:
        rows = parse(sys.argv[1])
    except ValueError as e:
        sys.exit(f"cpuid_policy: {e}")
    text = generate(rows, sys.argv[1])
    with open(sys.argv[2], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

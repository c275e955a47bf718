#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The guest profiler's report (docs/profile.md): pollux's profile_us= samples, by symbol.

    tools/guest_profile.py LOG [--symbols FILE] [--top N]
    tools/guest_profile.py --make-symbols [--symbols FILE]

LOG is a console log of a boot with `profile_us=N`: each VM's `@profile` and
`@profile_rips` lines (RIPs rounded down to `grain` bytes, with their sample
counts). A Linux VM's init script prints where its kernel text lies in that boot
(`@bench {"op":"kernel","text":...}`: KASLR moves it every boot), and FILE holds
the kernel's code symbols, /proc/kallsyms of one boot with its own `_text`: a RIP
is named by the symbol at or below RIP - (text - FILE's _text). Debian's kernel
package ships no System.map (a stub), so --make-symbols boots the kernel once
under QEMU with `workload=kallsyms` and keeps its /proc/kallsyms (about two
minutes; build/linux/kallsyms by default, made again when the kernel changes).
The table: per VM, the top symbols by samples with their share of the VM's
samples; user-mode samples are one row, `[user]`, and samples the table had no
room for one more, `[lost]`.
"""
import argparse
import base64
import bisect
import gzip
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from consolelog import ConsoleLog  # noqa: E402

SYMBOLS = os.path.join(ROOT, "build", "linux", "kallsyms")
BEGIN, END = "linux: kallsyms begin", "linux: kallsyms end"


class Symbols:
    """Code symbols sorted by address: (address, name) from /proc/kallsyms lines."""

    def __init__(self, text):
        syms = []
        for ln in text.splitlines():
            parts = ln.split()
            if len(parts) >= 3 and parts[1] in "TtWw":
                name = parts[2] + (f" {parts[3]}" if len(parts) > 3 else "")
                syms.append((int(parts[0], 16), name))
        if not syms:
            raise ValueError("no code symbols")
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]
        texts = [a for a, n in syms if n == "_text"]
        if not texts:
            raise ValueError("no _text symbol")
        self.text = texts[0]

    def name(self, addr):
        """The symbol at or below addr, or None below the first."""
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else None


def kallsyms_from_log(log):
    """The /proc/kallsyms text a `workload=kallsyms` VM printed, gunzipped."""
    for vm, lines in log.guest_lines.items():
        if BEGIN in lines and END in lines:
            b64 = "".join(lines[lines.index(BEGIN) + 1:lines.index(END)])
            return gzip.decompress(base64.b64decode(b64)).decode()
    raise ValueError(f"no '{BEGIN}' ... '{END}' block in the log")


def vm_profiles(log):
    """{vm: {"head": @profile's body, "rips": {rip: count}, "text": the kernel's or None}}."""
    got = {}
    for e in log.all("profile"):
        got[e["vm"]] = {"head": e.body, "rips": {}, "text": None}
    for e in log.all("profile_rips"):
        if e["vm"] in got:
            for rip, n in e["rips"].items():
                got[e["vm"]]["rips"][int(rip, 16)] = n
    for e in log.all("bench"):
        if e.vm in got and e.get("op") == "kernel" and e.get("text"):
            got[e.vm]["text"] = int(e["text"], 16)
    return got


def by_symbol(profile, symbols):
    """[(samples, name)] for one VM's profile, largest first, with [user] and [lost] rows."""
    counts = {}
    shift = profile["text"] - symbols.text if symbols and profile["text"] is not None else None
    for rip, n in profile["rips"].items():
        name = symbols.name(rip - shift) if shift is not None else None
        key = name or f"{rip:#x}"
        counts[key] = counts.get(key, 0) + n
    head = profile["head"]
    for key, n in (("[user]", head.get("user", 0)), ("[lost]", head.get("lost", 0))):
        if n:
            counts[key] = n
    return sorted(((n, k) for k, n in counts.items()), key=lambda t: (-t[0], t[1]))


def report(log, symbols, top):
    lines = []
    for vm, p in vm_profiles(log).items():
        head = p["head"]
        total = head["samples"]
        how = "symbols" if symbols and p["text"] is not None else \
            "raw RIPs (no kernel text line or no symbols)"
        lines.append(f"{vm}: {total} samples every {head['period_us']} us, by {how}")
        lines.append("| samples | share | symbol |")
        lines.append("|---:|---:|---|")
        for n, name in by_symbol(p, symbols)[:top]:
            lines.append(f"| {n} | {100.0 * n / total if total else 0:.1f}% | {name} |")
        lines.append("")
    return "\n".join(lines)


def make_symbols(path):
    """Boot the kernel once under QEMU with workload=kallsyms and keep its symbols at path."""
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run.py"), "--emu", "qemu", "--smp", "1",
           "--console", "all", "--args", "stats_tables=off", "--timeout", "600",
           "--guests", "linux:name=ksyms:vcpus=1:args=workload=kallsyms"]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, errors="replace")
    text = kallsyms_from_log(ConsoleLog(res.stdout))
    Symbols(text)  # refuses a dump without code symbols or _text
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("log", nargs="?", help="a console log of a boot with profile_us=")
    p.add_argument("--symbols", default=SYMBOLS, help="the kernel's kallsyms (%(default)s)")
    p.add_argument("--make-symbols", action="store_true",
                   help="boot the Linux guest once to write --symbols")
    p.add_argument("--top", type=int, default=25, help="rows per VM (%(default)s)")
    a = p.parse_args()
    if a.make_symbols:
        print(f"profile: symbols in {make_symbols(a.symbols)}")
        if not a.log:
            return 0
    if not a.log:
        p.error("a console log, or --make-symbols")
    with open(a.log, errors="replace") as f:
        log = ConsoleLog(f.read())
    symbols = None
    if os.path.exists(a.symbols):
        with open(a.symbols) as f:
            symbols = Symbols(f.read())
    else:
        print(f"profile: no {a.symbols} (tools/guest_profile.py --make-symbols): RIPs unnamed",
              file=sys.stderr)
    print(report(log, symbols, a.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

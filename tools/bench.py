#!/usr/bin/env python3
"""`make bench`: exit-path round trips measured by the exitbench guest.

Each platform boots once with one exitbench VM. Under QEMU with -icount
shift=0 and under Bochs with clock: sync=none, one guest TSC tick is one
retired instruction, so the numbers are deterministic instruction counts of
the exit path (see ../shared notes: a minimal hand-written handler costs
about 43-50). Prints a Markdown table; compare numbers within one run.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from consolelog import ConsoleLog  # noqa: E402

OPS = ["cpuid", "hypercall", "pio_read", "rdmsr"]
PLATFORMS = [
    ("QEMU TCG -icount, SVM (no NRIPS)", ["--emu", "qemu", "--smp", "1", "--icount", "0"]),
    ("Bochs ryzen, SVM (NRIPS)", ["--emu", "bochs", "--cpu", "ryzen", "--smp", "1"]),
    ("Bochs corei7_skylake_x, VMX", ["--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "1"]),
]


def measure(flags, iters):
    rundir = os.path.join(ROOT, "build", "bench", flags[1] + "-" + flags[3])
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run.py"), "--accel", "tcg",
           "--rundir", rundir, "--timeout", "600", "--guests", f"exitbench:args={iters}"] + flags
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = ConsoleLog(res.stdout, res.returncode)
    got = {e["op"]: e["cycles"] for e in log.all("bench") if e.get("guest") == "exitbench"}
    if res.returncode != 0 or set(got) != set(OPS):
        return None, f"failed (exit {res.returncode}, see {os.path.relpath(rundir, ROOT)})"
    return got, ""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=1000)
    a = p.parse_args()
    rows = []
    for name, flags in PLATFORMS:
        got, err = measure(flags, a.iters)
        rows.append((name, got, err))
    print(f"\nexitbench: median guest TSC ticks per round trip ({a.iters} iterations; "
          "= retired instructions under these settings)\n")
    print("| platform | " + " | ".join(OPS) + " |")
    print("|---|" + "---:|" * len(OPS))
    for name, got, err in rows:
        cells = [str(got[op]) for op in OPS] if got else [err] + [""] * (len(OPS) - 1)
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0 if all(got for _, got, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

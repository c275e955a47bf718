#!/usr/bin/env python3
"""`make bench`: exit-path and IPI round trips, per platform.

exitbench: each platform boots once with one exitbench VM. Under QEMU with
-icount shift=0 and under Bochs with clock: sync=none, one guest TSC tick is
one retired instruction, so the numbers are deterministic instruction counts
of the exit path (a minimal hand-written handler costs about 43-50).
pingpong: two vCPUs bounce an IPI, halting in between, on two CPUs and on one
(Bochs only: QEMU -icount runs its CPUs round robin in coarse slices, which
would measure QEMU's scheduler). Prints Markdown tables; compare numbers
within one run.
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


PINGPONG = [("2 CPUs", "pin=0,1"), ("1 CPU", "pin=0,0")]


def boot(name, flags, guests):
    rundir = os.path.join(ROOT, "build", "bench", name)
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run.py"), "--accel", "tcg",
           "--rundir", rundir, "--timeout", "600", "--guests", guests] + flags
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return ConsoleLog(res.stdout, res.returncode), rundir


def measure(flags, iters):
    log, rundir = boot(flags[1] + "-" + flags[3], flags, f"exitbench:args={iters}")
    got = {e["op"]: e["cycles"] for e in log.all("bench") if e.get("guest") == "exitbench"}
    if log.returncode != 0 or set(got) != set(OPS):
        return None, f"failed (exit {log.returncode}, see {os.path.relpath(rundir, ROOT)})"
    return got, ""


def pingpong(flags, iters):
    cells = []
    for label, pins in PINGPONG:
        name = f"{flags[1]}-{flags[3]}-pingpong-{pins[4:].replace(',', '')}"
        smp = ["--smp", "2"] if flags[4:6] == ["--smp", "1"] else []
        log, rundir = boot(name, flags[:4] + smp, f"pingpong:vcpus=2:{pins}:args={iters}")
        got = [e["cycles"] for e in log.all("bench") if e.get("op") == "ipi_roundtrip"]
        cells.append(str(got[0]) if log.returncode == 0 and got
                     else f"failed (see {os.path.relpath(rundir, ROOT)})")
    return cells


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=1000)
    p.add_argument("--pingpong-iters", type=int, default=200)
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
    print(f"\npingpong: mean guest TSC ticks per IPI round trip ({a.pingpong_iters} iterations, "
          "2 vCPUs halting between IPIs)\n")
    print("| platform | " + " | ".join(label for label, _ in PINGPONG) + " |")
    print("|---|" + "---:|" * len(PINGPONG))
    ok = all(got for _, got, _ in rows)
    for name, flags in PLATFORMS:
        if flags[1] != "bochs":
            continue
        cells = pingpong(flags, a.pingpong_iters)
        ok &= all(not c.startswith("failed") for c in cells)
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

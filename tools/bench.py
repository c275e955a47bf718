#!/usr/bin/env python3
"""`make bench`: exit-path and IPI round trips, per platform.

exitbench: each platform boots once with one exitbench VM. Under QEMU with
-icount shift=0 and under Bochs with clock: sync=none, one guest TSC tick is
one retired instruction, so the numbers are deterministic instruction counts
of the exit path (a minimal hand-written handler costs about 43-50).
pingpong: two vCPUs bounce an IPI, halting in between, on two CPUs and on one
(Bochs only: QEMU -icount runs its CPUs round robin in coarse slices, which
would measure QEMU's scheduler).
halt polling: pingpong on two CPUs and on one, and idletick, under each
polling policy, on Bochs VMX with 2 CPUs (docs/halt_polling.md reads the
table).
yield: spinlock with 2, 4 and 6 vCPUs on 2 CPUs under each spin policy, on
Bochs VMX (PLE), Bochs ryzen (pause filter) and QEMU multi-threaded TCG
(software detector) (docs/directed_yield.md reads the table).
selfipi: `cli; self-IPI; sti; hlt` on the SVM platforms with idle_hlt=auto
and off: cycles per iteration and HLT exits (docs/virtual_interrupts.md).
linux-haltpoll: an idle 2-vCPU Linux guest (docs/linux.md) under each polling
policy, host polling against the guest's cpuidle-haltpoll; linux-yield: a
4-vCPU Linux guest on 2 CPUs running hackbench under each spin policy. Both on
QEMU multi-threaded TCG (Linux on Bochs takes too long): one run on a shared
host each, not deterministic.
Prints Markdown tables; compare numbers within one run.
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

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


def boot(name, flags, guests, kernel=None):
    rundir = os.path.join(ROOT, "build", "bench", name)
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run.py"), "--accel", "tcg",
           "--rundir", rundir, "--timeout", "600", "--guests", guests] + flags
    if kernel:
        cmd += ["--kernel", kernel]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return ConsoleLog(res.stdout, res.returncode), rundir


def measure(flags, iters, kernel=None, name=None, args=""):
    log, rundir = boot(name or flags[1] + "-" + flags[3], flags,
                       f"exitbench:args={iters}{args}", kernel)
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


HALT_POLICIES = [
    ("off (`halt_poll_ns=0`)", "halt_poll_ns=0"),
    ("fixed", "halt_poll_mode=fixed"),
    ("adaptive, shrink 0 (old KVM)", "halt_poll_ns_shrink=0"),
    ("adaptive, shrink 2 (KVM)", ""),
    ("predict", "halt_poll_mode=predict"),
]
HALT_WORKLOADS = [
    ("pingpong, 2 CPUs", "pingpong:vcpus=2:pin=0,1:args={pp}", "pingpong", "ipi_roundtrip"),
    ("pingpong, 1 CPU", "pingpong:vcpus=2:pin=0,0:args={pp}", "pingpong", "ipi_roundtrip"),
    ("idletick", "idletick:vcpus=2:pin=0,1:args={burst}+{ticks}", "idletick", "burst"),
]
BOCHS_VMX = ["--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "2"]


def halt_poll_cell(policy_args, workload, iters):
    """One boot: (round trip, poll success ratio, polling ms per guest second) or an error."""
    label, guests, vm, op = workload
    name = f"haltpoll-{vm}-{guests.split('pin=')[1][:3].replace(',', '')}-" + \
        (policy_args.replace("=", "-") or "default")
    log, rundir = boot(name, BOCHS_VMX + ["--args", policy_args], guests.format(**iters))
    bench = [e for e in log.all("bench") if e.vm == vm and e.get("op") == op]
    stop = [e for e in log.all("vm_stop") if e["vm"] == vm]
    stats = log.stats("vcpu", vm)
    if log.returncode != 0 or not bench or not stop or not stats:
        return None, f"failed (see {os.path.relpath(rundir, ROOT)})"
    attempted = sum(e["halt_attempted_poll"] for e in stats.values())
    caught = sum(e["halt_successful_poll"] for e in stats.values())
    halts = sum(e["halt_exits"] for e in stats.values())
    poll_ns = sum(e["halt_poll_success_ns"] + e["halt_poll_fail_ns"] for e in stats.values())
    fail_ns = sum(e["halt_poll_fail_ns"] for e in stats.values())
    run_us = stop[0]["run_us"]
    return (bench[0]["cycles"], caught, attempted, halts, poll_ns / run_us, fail_ns / run_us), ""


def halt_poll_table(iters):
    jobs = [(p, w) for p in HALT_POLICIES for w in HALT_WORKLOADS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        cells = list(pool.map(lambda j: halt_poll_cell(j[0][1], j[1], iters), jobs))
    print("\nhalt polling, Bochs corei7_skylake_x (VMX), 2 CPUs, clock: sync=none: per workload, "
          "the mean round trip in guest TSC ticks, polls that caught the wake-up (of polls "
          "attempted; of halts) and host CPU time spent polling, in ms per guest second (in "
          "brackets: in polls that caught nothing). "
          f"pingpong: {iters['pp']} round trips; idletick: {iters['burst']} round trips "
          f"(shown), then {iters['ticks']} ticks at 250 Hz\n")
    head = ["policy"]
    for label, *_ in HALT_WORKLOADS:
        head += [f"{label}: round trip", "caught", "polling ms/s"]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    ok = True
    for i, (policy, _) in enumerate(HALT_POLICIES):
        row = [policy]
        for j in range(len(HALT_WORKLOADS)):
            got, err = cells[i * len(HALT_WORKLOADS) + j]
            if not got:
                ok = False
                row += [err, "", ""]
                continue
            cycles, caught, attempted, halts, ms_per_s, failed_ms_per_s = got
            ratio = f"{caught}/{attempted}, {caught}/{halts} of halts" if attempted else \
                f"0/0, 0/{halts} of halts"
            row += [str(cycles), ratio, f"{ms_per_s:.1f} ({failed_ms_per_s:.1f})"]
        print("| " + " | ".join(row) + " |")
    return ok


YIELD_POLICIES = [
    ("`ple=off`", "ple=off"),
    ("`yield_pivot=none`", "yield_pivot=none"),
    ("`yield_pivot=last_boosted`", "yield_pivot=last_boosted"),
    ("`yield_pivot=vcpu_id` (default)", ""),
]
YIELD_OVERCOMMIT = [("1x", 2), ("2x", 4), ("3x", 6)]
YIELD_PLATFORMS = [
    ("Bochs VMX (PLE)", ["--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "2"]),
    ("Bochs ryzen (pause filter)", ["--emu", "bochs", "--cpu", "ryzen", "--smp", "2"]),
    # The second opinion runs multi-threaded, so not deterministic: under -icount, QEMU 7.2
    # runs its CPUs round robin and, while one CPU keeps taking PAUSE exits, may never run
    # the other (docs/directed_yield.md has the failed runs).
    ("QEMU TCG multi-threaded (software)", ["--emu", "qemu", "--smp", "2"]),
]


def yield_cell(platform, policy_args, vcpus, cycles):
    """One boot: the spinlock guest's acquisitions, or an error."""
    label, flags = platform
    name = f"yield-{flags[1]}-{flags[3] if flags[1] == 'bochs' else 'mttcg'}-{vcpus}-" + \
        (policy_args.replace("=", "-") or "default")
    log, rundir = boot(name, flags + ["--args", policy_args],
                       f"spinlock:vcpus={vcpus}:args={cycles}")
    got = [e["value"] for e in log.all("bench") if e.get("guest") == "spinlock"]
    if log.returncode != 0 or len(got) != 1:
        return None, f"failed (see {os.path.relpath(rundir, ROOT)})"
    return got[0], ""


def yield_table(cycles):
    jobs = [(pf, pol, n) for pf in YIELD_PLATFORMS for pol in YIELD_POLICIES
            for _, n in YIELD_OVERCOMMIT]
    with ThreadPoolExecutor(max_workers=2) as pool:
        cells = list(pool.map(lambda j: yield_cell(j[0], j[1][1], j[2], cycles), jobs))
    got = dict(zip([(pf[0], pol[0], n) for pf, pol, n in jobs], cells))
    print(f"\nspinlock: lock acquisitions in {cycles} guest TSC cycles by all vCPUs, 2 CPUs, "
          "per spin policy (in brackets: the ratio to `ple=off`); 1x, 2x, 3x: 2, 4, 6 vCPUs. "
          "Bochs with clock: sync=none: deterministic, one guest TSC tick per instruction; "
          "QEMU multi-threaded: one run on a shared host, not deterministic\n")
    head = ["policy"] + [f"{pf[0]}, {oc}" for pf in YIELD_PLATFORMS for oc, _ in YIELD_OVERCOMMIT]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    ok = True
    for policy, _ in YIELD_POLICIES:
        row = [policy]
        for pf in YIELD_PLATFORMS:
            for _, n in YIELD_OVERCOMMIT:
                value, err = got[(pf[0], policy, n)]
                base, _ = got[(pf[0], YIELD_POLICIES[0][0], n)]
                if value is None:
                    ok = False
                    row.append(err)
                elif base:
                    row.append(f"{value} ({value / base:.2f})")
                else:
                    row.append(str(value))
        print("| " + " | ".join(row) + " |")
    return ok


LINUX_QEMU = ["--emu", "qemu", "--smp", "2", "--args", "watchdog_ms=10000"]
# FXSAVE for the guest's FPU state under QEMU: docs/linux.md, Known problems.
LINUX_QEMU_ARGS = "noxsave"
LINUX_HALT_POLICIES = [
    ("host polls (default)", "", ""),
    ("`halt_poll_ns=0`", "halt_poll_ns=0", ""),
    ("guest cpuidle-haltpoll", "", "+cpuidle_haltpoll.force=1"),
]


def linux_cell(name, flags, guest):
    """One boot of a Linux guest named lx: (its workload's @bench, @vm_stop, @stats) or an error."""
    log, rundir = boot(name, flags, guest)
    bench = [e for e in log.all("bench") if e.vm == "lx" and e.get("op") not in (None, "found")]
    stop = [e for e in log.all("vm_stop") if e["vm"] == "lx"]
    if log.returncode != 0 or not bench or not stop or stop[0]["reason"] != "poweroff":
        return None, f"failed (see {os.path.relpath(rundir, ROOT)})"
    return (bench[0], stop[0], log.stats("vcpu", "lx")), ""


def linux_haltpoll_table(seconds):
    print(f"\nLinux, idle for {seconds} s, 2 vCPUs on 2 CPUs, QEMU multi-threaded TCG: host CPU "
          "time spent polling per guest second (ms/s), and halts\n")
    print("| policy | polling ms/s | halts | polls that caught the wake-up |")
    print("|---|---:|---:|---:|")
    ok = True
    for label, host_args, guest_args in LINUX_HALT_POLICIES:
        flags = LINUX_QEMU[:-1] + [f"{LINUX_QEMU[-1]} {host_args}".strip()]
        got, err = linux_cell(f"linux-haltpoll-{host_args or 'default'}{guest_args and '-guest'}",
                              flags, f"linux:name=lx:vcpus=2:args={LINUX_QEMU_ARGS}"
                              f"+workload=idle:{seconds}{guest_args}")
        if not got:
            ok = False
            print(f"| {label} | {err} | | |")
            continue
        _, stop, stats = got
        poll_ns = sum(e["halt_poll_success_ns"] + e["halt_poll_fail_ns"] for e in stats.values())
        halts = sum(e["halt_exits"] for e in stats.values())
        caught = sum(e["halt_successful_poll"] for e in stats.values())
        print(f"| {label} | {poll_ns / stop['run_us']:.1f} | {halts} | {caught} |")
    return ok


def linux_yield_table(groups, loops):
    print(f"\nLinux, 4 vCPUs on 2 CPUs, `hackbench -g {groups} -l {loops}`, QEMU multi-threaded "
          "TCG: its run time in guest seconds per spin policy (lower is better)\n")
    print("| policy | hackbench s | spins detected | directed yields (successful) |")
    print("|---|---:|---:|---:|")
    ok = True
    for label, policy_args in YIELD_POLICIES:
        flags = LINUX_QEMU[:-1] + [f"{LINUX_QEMU[-1]} {policy_args}".strip()]
        got, err = linux_cell(f"linux-yield-{policy_args.replace('=', '-') or 'default'}", flags,
                              f"linux:name=lx:vcpus=4:args={LINUX_QEMU_ARGS}"
                              f"+workload=hackbench:{groups}:{loops}")
        if not got:
            ok = False
            print(f"| {label} | {err} | | |")
            continue
        bench, _, stats = got
        spins = sum(e["spins_detected"] for e in stats.values())
        tried = sum(e["directed_yield_attempted"] for e in stats.values())
        done = sum(e["directed_yield_successful"] for e in stats.values())
        print(f"| {label} | {bench['seconds']} | {spins} | {tried} ({done}) |")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=1000)
    p.add_argument("--pingpong-iters", type=int, default=200)
    p.add_argument("--only",
                   default="exit,pingpong,haltpoll,yield,selfipi,linux-haltpoll,linux-yield",
                   help="comma-separated parts: exit, pingpong, haltpoll, yield, selfipi, "
                        "linux-haltpoll, linux-yield")
    p.add_argument("--spinlock-cycles", type=int, default=50000000)
    a = p.parse_args()
    parts = a.only.split(",")
    ok = True
    if "exit" in parts:
        ok &= exit_tables(a)
    if "pingpong" in parts:
        ok &= pingpong_table(a)
    if "haltpoll" in parts:
        ok &= halt_poll_table({"pp": a.pingpong_iters, "burst": 2000, "ticks": 50})
    if "yield" in parts:
        ok &= yield_table(a.spinlock_cycles)
    if "selfipi" in parts:
        ok &= selfipi_table(a.iters)
    if "linux-haltpoll" in parts:
        ok &= linux_haltpoll_table(10)
    if "linux-yield" in parts:
        ok &= linux_yield_table(4, 100)
    return 0 if ok else 1


# The exit scenario's platforms: (name in exit.json, flags, exitbench mode argument).
EXIT_PLATFORMS = [
    ("qemu-svm", PLATFORMS[0][1], ""),
    ("bochs-ryzen", PLATFORMS[1][1], ""),
    ("bochs-vmx", PLATFORMS[2][1], ""),
]
# Targets of issue 13: the ratio to the floor build per (no NRIPS?, op).
EXIT_TARGETS = {"cpuid": 2.5, "hypercall": 2.5, "pio_read": 3.0, "rdmsr": 3.0}
EXIT_TARGET_NO_NRIPS = 3.5


def exit_tables(a):
    """The `exit` scenario: the real exit path and the floor build, ratio per platform and op."""
    floor_kernel = os.path.join(ROOT, "build", "floor", "pollux.elf")
    jobs = [(p, kernel) for p in EXIT_PLATFORMS for kernel in (None, floor_kernel)]

    def run(job):
        (name, flags, mode), kernel = job
        return measure(flags, a.iters, kernel, f"exit-{name}" + ("-floor" if kernel else ""),
                       mode)
    with ThreadPoolExecutor(max_workers=2) as pool:
        cells = list(pool.map(run, jobs))
    print(f"\nexitbench: median guest TSC ticks per round trip ({a.iters} iterations; "
          "= retired instructions under these settings), the floor build's "
          "(arch/x86/exit_floor.h) and the ratio (target in brackets)\n")
    print("| platform | " + " | ".join(OPS) + " |")
    print("|---|" + "---:|" * len(OPS))
    records, ok = [], True
    for i, (name, _, _) in enumerate(EXIT_PLATFORMS):
        (got, err), (floor, ferr) = cells[2 * i], cells[2 * i + 1]
        if not got or not floor:
            ok = False
            print(f"| {name} | {err or ferr} |" + " |" * (len(OPS) - 1))
            continue
        row = []
        for op in OPS:
            target = EXIT_TARGET_NO_NRIPS if name.startswith("qemu") else EXIT_TARGETS[op]
            ratio = got[op] / floor[op]
            met = "" if ratio <= target else " **over**"
            row.append(f"{got[op]} / {floor[op]} = {ratio:.2f}x (<= {target}){met}")
            records.append({"platform": name, "op": op, "ticks": got[op], "floor": floor[op],
                            "ratio": round(ratio, 3)})
        print(f"| {name} | " + " | ".join(row) + " |")
    out = os.path.join(ROOT, "build", "bench", "exit.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(records, f, indent=1)
    print(f"\n(written to {os.path.relpath(out, ROOT)})")
    return ok


def pingpong_table(a):
    print(f"\npingpong: mean guest TSC ticks per IPI round trip ({a.pingpong_iters} iterations, "
          "2 vCPUs halting between IPIs)\n")
    print("| platform | " + " | ".join(label for label, _ in PINGPONG) + " |")
    print("|---|" + "---:|" * len(PINGPONG))
    ok = True
    for name, flags in PLATFORMS:
        if flags[1] != "bochs":
            continue
        cells = pingpong(flags, a.pingpong_iters)
        ok &= all(not c.startswith("failed") for c in cells)
        print(f"| {name} | " + " | ".join(cells) + " |")
    return ok


def selfipi_table(iters):
    print(f"\nselfipi: guest TSC ticks per `cli; self-IPI; sti; hlt` and the HLT exits of "
          f"{iters} iterations, per HLT intercept mode\n")
    print("| platform | idle_hlt= | intercept used | ticks | hlt_exits |")
    print("|---|---|---|---:|---:|")
    ok = True
    for name, flags in PLATFORMS:
        if flags[1] == "bochs" and flags[3] != "ryzen":
            continue  # Idle HLT is an SVM intercept
        for mode in ("auto", "off"):
            log, rundir = boot(f"{flags[1]}-{flags[3]}-selfipi-{mode}",
                               flags + ["--args", f"idle_hlt={mode}"], f"selfipi:args={iters}")
            got = [e for e in log.all("bench") if e.get("op") == "sti_hlt"]
            boots = log.all("boot")
            if log.returncode != 0 or not got or not boots:
                ok = False
                print(f"| {name} | {mode} | failed (see {os.path.relpath(rundir, ROOT)}) | | |")
                continue
            print(f"| {name} | {mode} | {boots[0]['hlt_intercept']} | {got[0]['cycles']} | "
                  f"{got[0]['hlt_exits']} |")
    return ok


if __name__ == "__main__":
    sys.exit(main())

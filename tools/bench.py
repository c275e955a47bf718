#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""`make bench`: every benchmark scenario on every platform here, as Markdown tables.

Scenarios (B=<name> runs one):
exit: each platform boots once with one exitbench VM, with the real and the
floor build; QEMU also with exitbench in long mode (qemu-svm-paging), and
each platform with exitbench +smp in a 1-vCPU and a 64-vCPU VM (CPUID with
the other vCPUs all halted). Under QEMU with -icount shift=0 and under Bochs
with clock: sync=none, one guest TSC tick is
one retired instruction, so the numbers are deterministic instruction counts
of the exit path (a minimal hand-written handler costs about 43-50). Each
platform also boots the counting build, which reports what one round trip
executes that costs far more on hardware than its tick: VMREAD/VMWRITE,
VMCB accesses, VMLOAD/VMSAVE, RDMSR/WRMSR/XSETBV (paging off).
pingpong: two vCPUs bounce an IPI, halting in between, on two CPUs and on one
(Bochs only: QEMU -icount runs its CPUs round robin in coarse slices, which
would measure QEMU's scheduler).
haltpoll: pingpong on two CPUs and on one, and idletick, under each
polling policy, on Bochs VMX with 2 CPUs (docs/halt_polling.md reads the
table).
yield: spinlock with 2, 4 and 6 vCPUs on 2 CPUs under each spin policy, on
Bochs VMX (PLE), Bochs ryzen (pause filter) and QEMU TCG (software
detector) (docs/directed_yield.md reads the table).
selfipi: `cli; self-IPI; sti; hlt` on the SVM platforms with idle_hlt=auto
and off: cycles per iteration and HLT exits (docs/virtual_interrupts.md).
linux-haltpoll: an idle 2-vCPU Linux guest (docs/linux.md) under each polling
policy, host polling against the guest's cpuidle-haltpoll; linux-yield: a
4-vCPU Linux guest on 2 CPUs running hackbench under each spin policy. Both on
QEMU TCG only (Linux on Bochs takes too long): one run on a shared host each,
not deterministic.
A scenario is one entry of SCENARIOS: its boots (cells) and its table.
All boots share one queue of at most 2 emulators at once; each writes its
console log under build/bench/<boot>/, and the run writes
build/bench/results.json and a chart per table (tools/plot.py).
Compare numbers within one run.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
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




BENCH_DIR = os.path.join(ROOT, "build", "bench")
MAX_EMULATORS = 2


def boot(name, flags, guests, kernel=None):
    rundir = os.path.join(BENCH_DIR, name)
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run.py"), "--accel", "tcg",
           "--rundir", rundir, "--timeout", "600", "--guests", guests] + flags
    if kernel:
        cmd += ["--kernel", kernel]
    res = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(rundir, "console.log"), "w") as f:
        f.write(res.stdout)
    return ConsoleLog(res.stdout, res.returncode), rundir


def measure(flags, iters, kernel=None, name=None, args="", vcpus=1):
    """exitbench's cycles by op; args: its mode words ("+long", "+smp")."""
    log, rundir = boot(name or flags[1] + "-" + flags[3], flags,
                       f"exitbench:vcpus={vcpus}:args={iters}{args}", kernel)
    mode = "long" if "+long" in args else "protected"
    online = vcpus if "+smp" in args else 1
    got = {e["op"]: e["cycles"] for e in log.all("bench") if e.get("guest") == "exitbench"
           and e.get("mode") == mode and e.get("vcpus") == online}
    if log.returncode != 0 or set(got) != set(OPS):
        return None, f"failed (exit {log.returncode}, see {os.path.relpath(rundir, ROOT)})"
    return got, ""


PINGPONG = [("2 CPUs", "pin=0,1"), ("1 CPU", "pin=0,0")]


def pingpong_cell(flags, label, pins, iters):
    name = f"{flags[1]}-{flags[3]}-pingpong-{pins[4:].replace(',', '')}"
    smp = ["--smp", "2"] if flags[4:6] == ["--smp", "1"] else []
    log, rundir = boot(name, flags[:4] + smp, f"pingpong:vcpus=2:{pins}:args={iters}")
    got = [e["cycles"] for e in log.all("bench") if e.get("op") == "ipi_roundtrip"]
    if log.returncode == 0 and got:
        return got[0], ""
    return None, f"failed (see {os.path.relpath(rundir, ROOT)})"


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
    # The second opinion runs without -icount, so not deterministic: under -icount, QEMU 7.2
    # may never run the other CPU while one keeps taking PAUSE exits (docs/directed_yield.md
    # has the failed runs).
    ("QEMU TCG (software)", ["--emu", "qemu", "--smp", "2"]),
]


def yield_cell(platform, policy_args, vcpus, cycles):
    """One boot: the spinlock guest's acquisitions, or an error."""
    label, flags = platform
    name = f"yield-{flags[1]}-{flags[3] if flags[1] == 'bochs' else 'tcg'}-{vcpus}-" + \
        (policy_args.replace("=", "-") or "default")
    log, rundir = boot(name, flags + ["--args", policy_args],
                       f"spinlock:vcpus={vcpus}:args={cycles}")
    got = [e["value"] for e in log.all("bench") if e.get("guest") == "spinlock"]
    if log.returncode != 0 or len(got) != 1:
        return None, f"failed (see {os.path.relpath(rundir, ROOT)})"
    return got[0], ""


class Table:
    """A scenario's result: Markdown (title, heading, rows) and the numbers to chart."""

    def __init__(self, title, head, rows, chart_rows, chart_columns, ok):
        self.title, self.head, self.rows, self.ok = title, head, rows, ok
        self.chart_rows, self.chart_columns = chart_rows, chart_columns

    def markdown(self):
        lines = ["", self.title, "", "| " + " | ".join(self.head) + " |",
                 "|---|" + "---:|" * (len(self.head) - 1)]
        return lines + ["| " + " | ".join(r) + " |" for r in self.rows]

    def as_json(self):
        return {"title": self.title, "head": self.head, "rows": self.rows, "ok": self.ok,
                "chart": {"rows": self.chart_rows, "columns": self.chart_columns}}


class Scenario:
    """cells: key -> a function booting once and returning (value, error); table: the
    results by key -> Table."""

    def __init__(self, name, cells, table):
        self.name, self.cells, self.table = name, cells, table


# The exit scenario's platforms: (name in exit.json, flags, exitbench mode argument).
EXIT_PLATFORMS = [
    ("qemu-svm", PLATFORMS[0][1], ""),
    ("qemu-svm-paging", PLATFORMS[0][1], "+long"),  # 64-bit code, 4-level paging
    ("bochs-ryzen", PLATFORMS[1][1], ""),
    ("bochs-vmx", PLATFORMS[2][1], ""),
]
# Targets of issue 13: the ratio to the floor build per (no NRIPS?, op).
EXIT_TARGETS = {"cpuid": 2.5, "hypercall": 2.5, "pio_read": 3.0, "rdmsr": 3.0}
EXIT_TARGET_NO_NRIPS = 3.5
FLOOR_KERNEL = os.path.join(ROOT, "build", "floor", "pollux.elf")
# CPUID on vCPU 0 of a VM whose other vCPUs are all online and halted, against a 1-vCPU
# VM running the same guest code (exitbench "+smp"), on the platform's one CPU.
EXIT_MANY_VCPUS = 64
EXIT_VCPU_PLATFORMS = ["qemu-svm", "bochs-ryzen", "bochs-vmx"]
EXIT_VCPU_TARGET = 1.05
EXIT_VCPU_COLUMN = f"cpuid {EXIT_MANY_VCPUS} vCPUs / 1"
# The counting build (arch/x86/exit_counts.h): exitbench's accesses per round trip, by kind.
COUNTS_KERNEL = os.path.join(ROOT, "build", "counts", "pollux.elf")
COUNT_ITERS = 100
COUNT_KINDS = ["vmread", "vmwrite", "vmcb_read", "vmcb_write", "rdmsr", "wrmsr", "xsetbv",
               "vmload", "vmsave"]
COUNT_LABELS = {"vmx": [("VMREAD", "vmread"), ("VMWRITE", "vmwrite")],
                "svm": [("VMCB read", "vmcb_read"), ("VMCB write", "vmcb_write"),
                        ("VMLOAD", "vmload"), ("VMSAVE", "vmsave")]}
COUNT_LABELS_MSR = [("RDMSR", "rdmsr"), ("WRMSR", "wrmsr"), ("XSETBV", "xsetbv")]


def measure_counts(flags, name, mode):
    log, rundir = boot(name, flags, f"exitbench:args={COUNT_ITERS}+counts{mode}", COUNTS_KERNEL)
    got = {e["op"]: e.body for e in log.all("bench") if e.get("guest") == "exitbench"}
    if log.returncode != 0 or set(got) != set(OPS):
        return None, f"counts failed (exit {log.returncode}, see {os.path.relpath(rundir, ROOT)})"
    return got, ""


def counts_cell(platform, counts):
    labels = COUNT_LABELS["vmx" if "vmx" in platform else "svm"] + COUNT_LABELS_MSR
    text = ", ".join(f"{label} {counts[key]}" for label, key in labels)
    return text if counts["exact"] else text + " (not exact)"


def exit_scenario(a):
    """The real exit path and the floor build, ratio per platform and op."""
    cells = {(name, floor): (lambda flags=flags, mode=mode, name=name, floor=floor:
                             measure(flags, a.iters, FLOOR_KERNEL if floor else None,
                                     f"exit-{name}" + ("-floor" if floor else ""), mode))
             for name, flags, mode in EXIT_PLATFORMS for floor in (False, True)}
    cells.update({(name, "vcpus", n): (lambda flags=flags, name=name, n=n:
                                       measure(flags, a.iters, None, f"exit-{name}-{n}vcpu",
                                               "+smp", n))
                  for name, flags, _ in EXIT_PLATFORMS if name in EXIT_VCPU_PLATFORMS
                  for n in (1, EXIT_MANY_VCPUS)})
    # Paging off only: the counts are of the same exit path in either mode.
    cells.update({(name, "counts"): (lambda flags=flags, mode=mode, name=name:
                                     measure_counts(flags, f"exit-{name}-counts", mode))
                  for name, flags, mode in EXIT_PLATFORMS if not mode})

    def vcpu_cell(got, name, records, chart):
        """The many-vCPU column: a cell, and False if it failed or missed its target."""
        if name not in EXIT_VCPU_PLATFORMS:
            chart[EXIT_VCPU_COLUMN].append(None)
            return "", True
        (one, err), (many, merr) = got[(name, "vcpus", 1)], got[(name, "vcpus", EXIT_MANY_VCPUS)]
        if not one or not many:
            chart[EXIT_VCPU_COLUMN].append(None)
            return err or merr, False
        ratio = many["cpuid"] / one["cpuid"]
        records.append({"platform": name, "op": f"cpuid_{EXIT_MANY_VCPUS}vcpu",
                        "ticks": many["cpuid"], "ticks_1vcpu": one["cpuid"],
                        "ratio": round(ratio, 3)})
        chart[EXIT_VCPU_COLUMN].append(round(ratio, 3))
        met = ratio <= EXIT_VCPU_TARGET
        return (f"{many['cpuid']} / {one['cpuid']} = {ratio:.2f}x (<= {EXIT_VCPU_TARGET})"
                + ("" if met else " **over**")), met

    def table(got):
        rows, records, ok = [], [], True
        chart = {op: [] for op in OPS + [EXIT_VCPU_COLUMN]}
        for name, _, _ in EXIT_PLATFORMS:
            (value, err), (floor, ferr) = got[(name, False)], got[(name, True)]
            if not value or not floor:
                ok = False
                row = [name, err or ferr] + [""] * (len(OPS) - 1)
                for op in OPS:
                    chart[op].append(None)
            else:
                row = [name]
                counts, cerr = got.get((name, "counts"), (None, ""))
                ok = ok and (counts is not None or (name, "counts") not in got)
                count_row = [f"{name}: per round trip"]
                for op in OPS:
                    target = EXIT_TARGET_NO_NRIPS if name.startswith("qemu") else EXIT_TARGETS[op]
                    ratio = value[op] / floor[op]
                    met = "" if ratio <= target else " **over**"
                    row.append(f"{value[op]} / {floor[op]} = {ratio:.2f}x (<= {target}){met}")
                    record = {"platform": name, "op": op, "ticks": value[op], "floor": floor[op],
                              "ratio": round(ratio, 3)}
                    if counts:
                        record.update({k: counts[op][k] for k in COUNT_KINDS})
                        record["counts_exact"] = counts[op]["exact"]
                    records.append(record)
                    count_row.append(counts_cell(name, counts[op]) if counts else cerr)
                    chart[op].append(round(ratio, 3))
            vcell, vok = vcpu_cell(got, name, records, chart)
            ok = ok and vok
            rows.append(row + [vcell])
            if value and floor and (name, "counts") in got:
                rows.append(count_row + [""])
        os.makedirs(BENCH_DIR, exist_ok=True)
        with open(os.path.join(BENCH_DIR, "exit.json"), "w") as f:
            json.dump(records, f, indent=1)
        return Table(f"exitbench: median guest TSC ticks per round trip ({a.iters} iterations; "
                     "= retired instructions under these settings), the floor build's "
                     "(arch/x86/exit_floor.h) and the ratio (target in brackets); below each "
                     "platform with paging off, what one round trip executes, from the counting "
                     "build (arch/x86/exit_counts.h); charted: the ratios; the last column: "
                     f"CPUID with all {EXIT_MANY_VCPUS} vCPUs online "
                     "and halted against 1 vCPU (exitbench +smp)",
                     ["platform"] + OPS + [EXIT_VCPU_COLUMN], rows,
                     [n for n, _, _ in EXIT_PLATFORMS], chart, ok)
    return Scenario("exit", cells, table)


def selfipi_scenario(a):
    """`cli; self-IPI; sti; hlt` per HLT intercept mode, on the SVM platforms."""
    svm = [(name, flags) for name, flags in PLATFORMS
           if not (flags[1] == "bochs" and flags[3] != "ryzen")]  # Idle HLT is an SVM intercept
    modes = ("auto", "off")

    def cell(flags, mode):
        log, rundir = boot(f"{flags[1]}-{flags[3]}-selfipi-{mode}",
                           flags + ["--args", f"idle_hlt={mode}"], f"selfipi:args={a.iters}")
        got = [e for e in log.all("bench") if e.get("op") == "sti_hlt"]
        boots = log.all("boot")
        if log.returncode != 0 or not got or not boots:
            return None, f"failed (see {os.path.relpath(rundir, ROOT)})"
        return (boots[0]["hlt_intercept"], got[0]["cycles"], got[0]["hlt_exits"]), ""
    cells = {(name, mode): (lambda flags=flags, mode=mode: cell(flags, mode))
             for name, flags in svm for mode in modes}

    def table(got):
        rows, chart = [], {mode: [] for mode in modes}
        for name, _ in svm:
            for mode in modes:
                value, err = got[(name, mode)]
                rows.append([name, mode] + ([value[0], str(value[1]), str(value[2])]
                                           if value else [err, "", ""]))
                chart[mode].append(value[1] if value else None)
        return Table(f"selfipi: guest TSC ticks per `cli; self-IPI; sti; hlt` and the HLT exits "
                     f"of {a.iters} iterations, per HLT intercept mode",
                     ["platform", "idle_hlt=", "intercept used", "ticks", "hlt_exits"], rows,
                     [name for name, _ in svm], chart, all(v for v, _ in got.values()))
    return Scenario("selfipi", cells, table)


def pingpong_scenario(a):
    bochs = [(name, flags) for name, flags in PLATFORMS if flags[1] == "bochs"]
    cells = {(name, label): (lambda flags=flags, label=label, pins=pins:
                             pingpong_cell(flags, label, pins, a.pingpong_iters))
             for name, flags in bochs for label, pins in PINGPONG}

    def table(got):
        rows = [[name] + [str(got[(name, label)][0]) if got[(name, label)][0] is not None
                          else got[(name, label)][1] for label, _ in PINGPONG]
                for name, _ in bochs]
        chart = {label: [got[(name, label)][0] for name, _ in bochs] for label, _ in PINGPONG}
        return Table(f"pingpong: mean guest TSC ticks per IPI round trip ({a.pingpong_iters} "
                     "iterations, 2 vCPUs halting between IPIs)",
                     ["platform"] + [label for label, _ in PINGPONG], rows,
                     [name for name, _ in bochs], chart, all(v is not None for v, _ in got.values()))
    return Scenario("pingpong", cells, table)


def halt_poll_scenario(a):
    iters = {"pp": a.pingpong_iters, "burst": 2000, "ticks": 50}
    cells = {(p[0], w[0]): (lambda p=p, w=w: halt_poll_cell(p[1], w, iters))
             for p in HALT_POLICIES for w in HALT_WORKLOADS}

    def table(got):
        head = ["policy"]
        for label, *_ in HALT_WORKLOADS:
            head += [f"{label}: round trip", "caught", "polling ms/s"]
        rows, chart, ok = [], {w[0]: [] for w in HALT_WORKLOADS}, True
        for policy, _ in HALT_POLICIES:
            row = [policy]
            for w in HALT_WORKLOADS:
                value, err = got[(policy, w[0])]
                chart[w[0]].append(value[0] if value else None)
                if not value:
                    ok = False
                    row += [err, "", ""]
                    continue
                cycles, caught, attempted, halts, ms_per_s, failed_ms_per_s = value
                ratio = f"{caught}/{attempted}, {caught}/{halts} of halts" if attempted else \
                    f"0/0, 0/{halts} of halts"
                row += [str(cycles), ratio, f"{ms_per_s:.1f} ({failed_ms_per_s:.1f})"]
            rows.append(row)
        return Table("halt polling, Bochs corei7_skylake_x (VMX), 2 CPUs, clock: sync=none: per "
                     "workload, the mean round trip in guest TSC ticks, polls that caught the "
                     "wake-up (of polls attempted; of halts) and host CPU time spent polling, in "
                     "ms per guest second (in brackets: in polls that caught nothing). "
                     f"pingpong: {iters['pp']} round trips; idletick: {iters['burst']} round "
                     f"trips (shown), then {iters['ticks']} ticks at 250 Hz", head, rows,
                     [p for p, _ in HALT_POLICIES], chart, ok)
    return Scenario("haltpoll", cells, table)


def yield_scenario(a):
    cycles = a.spinlock_cycles
    cells = {(pf[0], pol[0], n): (lambda pf=pf, pol=pol, n=n: yield_cell(pf, pol[1], n, cycles))
             for pf in YIELD_PLATFORMS for pol in YIELD_POLICIES for _, n in YIELD_OVERCOMMIT}

    def table(got):
        head = ["policy"] + [f"{pf[0]}, {oc}" for pf in YIELD_PLATFORMS
                             for oc, _ in YIELD_OVERCOMMIT]
        rows, ok = [], True
        chart = {pol: [] for pol, _ in YIELD_POLICIES}
        for policy, _ in YIELD_POLICIES:
            row = [policy]
            for pf in YIELD_PLATFORMS:
                for _, n in YIELD_OVERCOMMIT:
                    value, err = got[(pf[0], policy, n)]
                    base, _ = got[(pf[0], YIELD_POLICIES[0][0], n)]
                    chart[policy].append(value)
                    if value is None:
                        ok = False
                        row.append(err)
                    elif base:
                        row.append(f"{value} ({value / base:.2f})")
                    else:
                        row.append(str(value))
            rows.append(row)
        return Table(f"spinlock: lock acquisitions in {cycles} guest TSC cycles by all vCPUs, 2 "
                     "CPUs, per spin policy (in brackets: the ratio to `ple=off`); 1x, 2x, 3x: 2, "
                     "4, 6 vCPUs. Bochs with clock: sync=none: deterministic, one guest TSC tick "
                     "per instruction; QEMU: one run on a shared host, not "
                     "deterministic", head, rows, head[1:], chart, ok)
    return Scenario("yield", cells, table)


LINUX_QEMU = ["--emu", "qemu", "--smp", "2", "--args", "watchdog_ms=10000"]
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


def linux_flags(host_args):
    return LINUX_QEMU[:-1] + [f"{LINUX_QEMU[-1]} {host_args}".strip()]


def linux_haltpoll_scenario(a, seconds=10):
    """An idle Linux guest: host CPU time spent polling per guest second, per policy."""
    cells = {label: (lambda host=host, guest=guest: linux_cell(
        f"linux-haltpoll-{host.replace('=', '-') or 'default'}{guest and '-guest'}",
        linux_flags(host),
        f"linux:name=lx:vcpus=2:args=workload=idle:{seconds}{guest}"))
        for label, host, guest in LINUX_HALT_POLICIES}

    def table(got):
        rows, chart, ok = [], {"polling ms/s": []}, True
        for label, _, _ in LINUX_HALT_POLICIES:
            value, err = got[label]
            if not value:
                ok = False
                rows.append([label, err, "", ""])
                chart["polling ms/s"].append(None)
                continue
            _, stop, stats = value
            poll_ns = sum(e["halt_poll_success_ns"] + e["halt_poll_fail_ns"]
                          for e in stats.values())
            halts = sum(e["halt_exits"] for e in stats.values())
            caught = sum(e["halt_successful_poll"] for e in stats.values())
            rows.append([label, f"{poll_ns / stop['run_us']:.1f}", str(halts), str(caught)])
            chart["polling ms/s"].append(round(poll_ns / stop["run_us"], 1))
        return Table(f"Linux, idle for {seconds} s, 2 vCPUs on 2 CPUs, QEMU TCG: host CPU time "
                     "spent polling per guest second (ms/s), and halts",
                     ["policy", "polling ms/s", "halts", "polls that caught the wake-up"], rows,
                     [label for label, _, _ in LINUX_HALT_POLICIES], chart, ok)
    return Scenario("linux-haltpoll", cells, table)


def linux_yield_scenario(a, groups=4, loops=100):
    """hackbench in a 4-vCPU Linux guest on 2 CPUs, per spin policy."""
    cells = {label: (lambda policy=policy: linux_cell(
        f"linux-yield-{policy.replace('=', '-') or 'default'}", linux_flags(policy),
        f"linux:name=lx:vcpus=4:args=workload=hackbench:{groups}:{loops}"))
        for label, policy in YIELD_POLICIES}

    def table(got):
        rows, chart, ok = [], {"hackbench s": []}, True
        for label, _ in YIELD_POLICIES:
            value, err = got[label]
            if not value:
                ok = False
                rows.append([label, err, "", ""])
                chart["hackbench s"].append(None)
                continue
            bench, _, stats = value
            spins = sum(e["spins_detected"] for e in stats.values())
            tried = sum(e["spin_yield_attempted"] for e in stats.values())
            done = sum(e["spin_yield_successful"] for e in stats.values())
            rows.append([label, str(bench["seconds"]), str(spins), f"{tried} ({done})"])
            chart["hackbench s"].append(bench["seconds"])
        return Table(f"Linux, 4 vCPUs on 2 CPUs, `hackbench -g {groups} -l {loops}`, QEMU TCG: "
                     "its run time in guest seconds per spin policy (lower is better)",
                     ["policy", "hackbench s", "spins detected", "directed yields (successful)"],
                     rows, [label for label, _ in YIELD_POLICIES], chart, ok)
    return Scenario("linux-yield", cells, table)


# Every scenario, in output order: a function from the options to its Scenario.
SCENARIOS = [("exit", exit_scenario), ("pingpong", pingpong_scenario),
             ("haltpoll", halt_poll_scenario), ("yield", yield_scenario),
             ("selfipi", selfipi_scenario), ("linux-haltpoll", linux_haltpoll_scenario),
             ("linux-yield", linux_yield_scenario)]


def run_cells(scenarios):
    """Every boot of every scenario, at most MAX_EMULATORS at once, with progress."""
    jobs = [(s, key, fn) for s in scenarios for key, fn in s.cells.items()]
    results = {s.name: {} for s in scenarios}
    start, done, lock = time.monotonic(), [0], threading.Lock()

    def one(job):
        scenario, key, fn = job
        value = fn()
        with lock:
            done[0] += 1
            results[scenario.name][key] = value
            mins, secs = divmod(int(time.monotonic() - start), 60)
            what = key if isinstance(key, str) else ", ".join(str(k) for k in key)
            state = "ok" if value[0] is not None else value[1]
            print(f"bench: [{done[0]}/{len(jobs)}] {scenario.name}: {what}: {state} "
                  f"({mins}m{secs:02d}s)", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=MAX_EMULATORS) as pool:
        list(pool.map(one, jobs))
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--iters", type=int, default=1000)
    p.add_argument("--pingpong-iters", type=int, default=200)
    p.add_argument("--only", default=",".join(name for name, _ in SCENARIOS),
                   help="comma-separated scenarios: " + ", ".join(n for n, _ in SCENARIOS))
    p.add_argument("--spinlock-cycles", type=int, default=50000000)
    a = p.parse_args()
    wanted = a.only.split(",")
    unknown = set(wanted) - {name for name, _ in SCENARIOS}
    if unknown:
        sys.exit(f"bench: no scenario {', '.join(sorted(unknown))} (scenarios: "
                 f"{', '.join(n for n, _ in SCENARIOS)})")
    scenarios = [make(a) for name, make in SCENARIOS if name in wanted]
    start = time.monotonic()
    results = run_cells(scenarios)
    os.makedirs(BENCH_DIR, exist_ok=True)
    tables = {s.name: s.table(results[s.name]) for s in scenarios}
    for s in scenarios:
        print("\n".join(tables[s.name].markdown()), flush=True)
    with open(os.path.join(BENCH_DIR, "results.json"), "w") as f:
        json.dump({name: t.as_json() for name, t in tables.items()}, f, indent=1)
    charts = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot.py"), "--bench",
                             os.path.join(BENCH_DIR, "results.json"), BENCH_DIR])
    mins, secs = divmod(int(time.monotonic() - start), 60)
    print(f"\nbench: {len(scenarios)} scenarios in {mins}m{secs:02d}s; raw logs, results.json "
          f"and the charts in {os.path.relpath(BENCH_DIR, ROOT)}/", flush=True)
    return 0 if all(t.ok for t in tables.values()) and charts.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

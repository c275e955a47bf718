#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""`make bench`: the synthetic benchmark scenarios, each cell run several times with seeds.

Method. Each scenario is a set of cells (a configuration booted once per
run); run r of every cell boots with the hypervisor's `seed=BASE+r`
(docs/options.md: each vCPU's first entry is staggered by a seeded delay)
and the guest's own seed where it has one (`locks`). Under Bochs with
`clock: sync=none` a run is deterministic: the same seed and command line
repeat it exactly, another seed changes its interleaving (the `seedcheck`
scenario shows both). All (cell, run) jobs run in one order shuffled by
`--order-seed` (printed), at most 2 Bochs or QEMU -icount emulators at
once (their numbers count instructions, so host load does not change
them), a QEMU cell without -icount alone (its numbers depend on the host's
load). A cell prints the median of its runs and the 95% bootstrap
confidence interval of the median; a ratio to a baseline cell the ratio of
the two medians with its own bootstrap interval, `no difference detected`
when that interval holds 1 (tools/benchstats.py: scipy.stats.bootstrap,
Debian's python3-scipy, with a fixed random state, so the tables are
reproducible from results.json). Each boot prints a progress line with an
estimate of what is left, from the mean boot time so far per platform.

Scenarios (--only NAME,...; B=NAME in make):
exit: exitbench's round trips against the floor build, the 64-vCPU VM and
the counting build (docs/exit_path.md). One run each, no seed: exitbench
runs on one vCPU (the others of +smp halted before it starts), and one
guest TSC tick is one retired instruction, so a run is an instruction
count that no stagger or host load can change.
selfipi: `cli; self-IPI; sti; hlt` on the SVM platforms per idle_hlt mode;
one vCPU, one run each as for exit.
pingpong: two vCPUs bounce an IPI, halting in between, on two CPUs and on
one (Bochs only: QEMU -icount runs its CPUs round robin in coarse slices).
haltpoll: pingpong on two CPUs and on one, and idletick, under each polling
policy, on Bochs VMX with 2 CPUs, also with `idle_exit_latency_us=133` (a
host C6 exit, docs/halt_polling.md); ratios to fixed polling and to none.
seedcheck: one spinlock cell on Bochs VMX run twice with one seed and once
with each of several others: equal values for the same seed, different
values for different seeds.
yield: the spinlock guest under each spin policy on Bochs corei7_skylake_x
(VMX, PLE) and ryzen (pause filter), with 2, 4 and 8 CPUs at 1x, 2x and 3x
overcommit, one VM or two VMs sharing the CPUs (each with half the vCPUs);
ratios to `ple=off` and of vcpu_id to last_boosted (docs/directed_yield.md).
By default Bochs VMX's 8-CPU 2x cells with one VM, which decide the docs'
claims, with --runs (RUNS, default 10) runs, and its 2-CPU row with
--scan-runs (default 3); --full: every cell with --runs runs, plus a QEMU
TCG column at 2 CPUs (multi-threaded: load-dependent, so run alone).
haltpoll's claim cells (off, fixed and KVM's adaptive polling with
`idle_exit_latency_us=133`, on pingpong with 2 CPUs and idletick) have
--runs runs, the others --scan-runs.
The spinlock and locks guests run 20 M guest TSC cycles (0.2 s) per boot.
Cost of one boot before the Bochs BIOS's fastboot, on an idle core: 1 or
2 CPUs about 18 s, 4 CPUs about 35 s, 8 CPUs about 95 s; fastboot took
about 13 s off each, and at 8 CPUs the guest's own time is most of what
is left (Bochs emulates every CPU in one host thread).
locks: the locks guest (many test-and-set and MCS locks, its own seed
`seed=` the run's) at 8 CPUs 2x on Bochs VMX per spin policy, with
--runs runs (docs/directed_yield.md compares the pivots on it).
countonly: spinlock at 4 CPUs 2x on Bochs ryzen, whose pause filter has
no threshold: pollux's count-only spins (the default) against KVM's
choice there (`pause_filter_count_only=off`) and `ple=off`, --runs runs.
--full adds the Linux scenarios of tools/bench_linux.py, when present
(`make bench-full`). Its matrices on Bochs run their workload several times
per boot (a value with "reps"; the first a warm-up), summarised by a
two-level bootstrap (boots, then repetitions), over the boots and cells of
their budgets; each finished boot is appended to bench-results/<scenario>.json
with the code's commit, so that --resume continues a matrix in a later
session, and --plan prints what a run would boot and how long it should take
(docs/linux.md, "Running a matrix").
Every boot writes its console log under build/bench/<cell>/run-<r>/; the
run writes build/bench/results.json (every run: seed, raw value, log; and
each table) and a chart per table (tools/plot.py).
"""
import argparse
import contextvars
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from benchstats import (cluster_median_estimate, cluster_ratio_estimate, format_estimate,  # noqa: E402
                        format_ratio, format_spread, median_estimate, ratio_estimate, spread)
from consolelog import ConsoleLog  # noqa: E402

OPS = ["cpuid", "hypercall", "pio_read", "rdmsr"]
PLATFORMS = [
    ("QEMU TCG -icount, SVM (no NRIPS)", ["--emu", "qemu", "--smp", "1", "--icount", "0"]),
    ("Bochs ryzen, SVM (NRIPS)", ["--emu", "bochs", "--cpu", "ryzen", "--smp", "1"]),
    ("Bochs corei7_skylake_x, VMX", ["--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "1"]),
]

BENCH_DIR = os.path.join(ROOT, "build", "bench")
MAX_EMULATORS = 2
# Runs per cell by default: a bootstrap interval of the median from 5 runs is little more
# than their range, so a cell that decides a claim in the docs has at least 10.
RUNS_DEFAULT = 10
# Runs of the cells that decide no claim (the rest of the yield matrix) in `make bench`.
SCAN_RUNS_DEFAULT = 3
SEED_BASE_DEFAULT = 1  # seed=0 means no stagger
# Every boot: the human tables of each statistics round cost about a second of guest time
# per 8 vCPUs at 115200 baud, which Bochs emulates on every CPU; the tools read the records.
BENCH_HV_ARGS = "stats_tables=off"


class Run:
    """One boot of a cell: its index, seed, value (None if it failed), error, console logs
    and wall time."""

    def __init__(self, index, seed):
        self.index, self.seed = index, seed
        self.value, self.error, self.logs, self.wall_s = None, "", [], 0.0

    def as_json(self):
        return {"run": self.index, "seed": self.seed, "value": self.value, "error": self.error,
                "logs": self.logs, "wall_s": round(self.wall_s, 1)}


# The run whose boot is in progress on this thread: boot() takes its seed and files its logs.
CURRENT_RUN = contextvars.ContextVar("bench_current_run", default=None)


def flag_value(flags, name, default=None):
    return flags[flags.index(name) + 1] if name in flags else default


def with_hv_args(flags, extra):
    """flags with extra appended to the hypervisor's --args."""
    if "--args" not in flags:
        return flags + ["--args", extra]
    i = flags.index("--args") + 1
    return flags[:i] + [f"{flags[i]} {extra}".strip()] + flags[i + 1:]


def guest_seed():
    """The seed of the run in progress, for a guest that takes its own."""
    return CURRENT_RUN.get().seed


def boot(name, flags, guests, kernel=None):
    run = CURRENT_RUN.get()
    rundir = os.path.join(BENCH_DIR, name)
    flags = with_hv_args(flags, BENCH_HV_ARGS)
    if run is not None:
        rundir = os.path.join(rundir, f"run-{run.index}")
        if run.seed is not None:
            flags = with_hv_args(flags, f"seed={run.seed}")
        run.logs.append(os.path.relpath(os.path.join(rundir, "console.log"), ROOT))
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run.py"), "--accel", "tcg",
           "--rundir", rundir, "--timeout", "1200", "--guests", guests] + flags
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


# (label, hypervisor arguments); the ratios' baselines are the first two.
HALT_POLICIES = [
    ("off (`halt_poll_ns=0`)", "halt_poll_ns=0"),
    ("fixed", "halt_poll_mode=fixed"),
    ("adaptive, shrink 0 (old KVM)", "halt_poll_ns_shrink=0"),
    ("adaptive, shrink 2 (KVM)", ""),
    ("predict", "halt_poll_mode=predict"),
]
HALT_OFF, HALT_FIXED, HALT_ADAPTIVE = (HALT_POLICIES[i][0] for i in (0, 1, 3))
# A host C-state model (idle_exit_latency_us=, Linux's intel_idle C6 exit on Skylake-SP):
# the policies that decide docs/halt_polling.md's claim, again with a costly wake-up.
HALT_IDLE_EXIT_US = 133
HALT_IDLE_EXIT_POLICIES = (HALT_OFF, HALT_FIXED, HALT_ADAPTIVE)
HALT_WORKLOADS = [
    ("pingpong, 2 CPUs", "pingpong:vcpus=2:pin=0,1:args={pp}", "pingpong", "ipi_roundtrip"),
    ("pingpong, 1 CPU", "pingpong:vcpus=2:pin=0,0:args={pp}", "pingpong", "ipi_roundtrip"),
    ("idletick", "idletick:vcpus=2:pin=0,1:args={burst}+{ticks}", "idletick", "burst"),
]
BOCHS_VMX = ["--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "2"]


def halt_poll_cell(policy_args, idle_exit_us, workload, iters):
    """One boot: the round trip, polls and polling time of one workload, or an error."""
    label, guests, vm, op = workload
    args = f"{policy_args} idle_exit_latency_us={idle_exit_us}".strip() if idle_exit_us \
        else policy_args
    name = f"haltpoll-{vm}-{guests.split('pin=')[1][:3].replace(',', '')}-" + \
        (policy_args.replace("=", "-") or "default") + (f"-idle{idle_exit_us}" if idle_exit_us
                                                        else "")
    log, rundir = boot(name, with_hv_args(BOCHS_VMX, args), guests.format(**iters))
    bench = [e for e in log.all("bench") if e.vm == vm and e.get("op") == op]
    stop = [e for e in log.all("vm_stop") if e["vm"] == vm]
    stats = log.stats("vcpu", vm)
    if log.returncode != 0 or not bench or not stop or not stats:
        return None, f"failed (see {os.path.relpath(rundir, ROOT)})"
    run_us = stop[0]["run_us"]
    return {"round_trip": bench[0]["cycles"],
            "caught": sum(e["halt_successful_poll"] for e in stats.values()),
            "attempted": sum(e["halt_attempted_poll"] for e in stats.values()),
            "halts": sum(e["halt_exits"] for e in stats.values()),
            "poll_ms_per_s": sum(e["halt_poll_success_ns"] + e["halt_poll_fail_ns"]
                                 for e in stats.values()) / run_us,
            "wasted_ms_per_s": sum(e["halt_poll_fail_ns"] for e in stats.values()) / run_us}, ""


YIELD_POLICIES = [
    ("`ple=off`", "ple=off"),
    ("`yield_pivot=none`", "yield_pivot=none"),
    ("`yield_pivot=last_boosted`", "yield_pivot=last_boosted"),
    ("`yield_pivot=vcpu_id` (default)", ""),
]
YIELD_BASELINE, YIELD_LAST_BOOSTED, YIELD_VCPU_ID = (YIELD_POLICIES[i][0] for i in (0, 2, 3))
YIELD_OVERCOMMIT = [("1x", 1), ("2x", 2), ("3x", 3)]
YIELD_CPUS = (2, 4, 8)
YIELD_VMS = (1, 2)  # one VM with every vCPU, or two VMs with half each, sharing the CPUs
# The cells that decide docs/directed_yield.md's claims: (CPUs, overcommit).
YIELD_CLAIM = (8, "2x")
YIELD_PLATFORMS = [
    ("Bochs VMX (PLE)", ["--emu", "bochs", "--cpu", "corei7_skylake_x"]),
    ("Bochs ryzen (pause filter)", ["--emu", "bochs", "--cpu", "ryzen"]),
]
# --full only, at 2 CPUs: without -icount, so load-dependent and run alone: under -icount,
# QEMU 7.2 may never run the other CPU while one keeps taking PAUSE exits
# (docs/directed_yield.md has the failed runs).
YIELD_QEMU = ("QEMU TCG (software)", ["--emu", "qemu"])


def spin_guests(image, vcpus, vms, args):
    """The GUESTS words of vms VMs sharing vcpus vCPUs equally."""
    if vms == 1:
        return f"{image}:vcpus={vcpus}:args={args}"
    return " ".join(f"{image}:name={image}{i}:vcpus={vcpus // vms}:args={args}"
                    for i in range(vms))


def spin_cell(name, flags, guests, image, vms):
    """One boot: the acquisitions of all VMs of the lock guest image, or an error."""
    log, rundir = boot(name, flags, guests)
    got = [e["value"] for e in log.all("bench") if e.get("guest") == image
           and e.get("op") == "acquisitions"]
    if log.returncode != 0 or len(got) != vms:
        return None, f"failed (see {os.path.relpath(rundir, ROOT)})"
    return sum(got), ""


def yield_cell(platform, cpus, policy_args, vcpus, vms, cycles):
    label, flags = platform
    name = f"yield-{flags[1]}-{flags[3] if flags[1] == 'bochs' else 'tcg'}-{cpus}cpu-" \
        f"{vcpus}vcpu-{vms}vm-" + (policy_args.replace("=", "-") or "default")
    return spin_cell(name, with_hv_args(flags + ["--smp", str(cpus)], policy_args),
                     spin_guests("spinlock", vcpus, vms, cycles), "spinlock", vms)


class Cell:
    """One configuration of a scenario: measure() boots it once and returns (value, error);
    seeds: the seed of each run (None: unseeded, deterministic without one); reps: the runs
    of its workload inside each boot (a value with "reps", below); boot_s: what one boot is
    expected to take, in wall seconds with two emulators at once (--plan), None if unknown."""

    def __init__(self, flags, measure, seeds, reps=1, boot_s=None):
        self.flags, self.measure, self.seeds = flags, measure, seeds
        self.reps, self.boot_s = reps, boot_s

    def platform(self):
        """What the boot time depends on: the emulator and its CPUs (the progress estimate)."""
        emu = flag_value(self.flags, "--emu")
        icount = " -icount" if emu == "qemu" and "--icount" in self.flags else ""
        return f"{emu}{icount}, {flag_value(self.flags, '--smp', '2')} CPUs"

    def alone(self):
        """Its numbers depend on the host's load (QEMU without -icount): nothing runs beside it."""
        return flag_value(self.flags, "--emu") == "qemu" and "--icount" not in self.flags


def seeded(runs, a):
    return [a.seed_base + r for r in range(runs)]


UNSEEDED = [None]


def single(got):
    """key -> (value, error) of a scenario whose cells run once."""
    return {key: (runs[0].value, runs[0].error) for key, runs in got.items()}


def failure(runs):
    """The first failed run's error with how many failed, or "" when none did."""
    failed = [r for r in runs if r.value is None]
    return f"{failed[0].error} ({len(failed)} of {len(runs)} runs failed)" if failed else ""


def measured(value):
    """A run's measured repetitions: a value with "reps" (a boot that ran its workload several
    times, tools/bench_linux.py) holds one dict per repetition, the first a warm-up when there
    are more; any other value is one measurement."""
    if isinstance(value, dict) and "reps" in value:
        reps = value["reps"]
        return reps[1:] if len(reps) > 1 else reps
    return [value]


def repeated(runs):
    return any(isinstance(r.value, dict) and "reps" in r.value for r in runs)


def boots(runs, pick):
    """Per run, pick of each measured repetition."""
    return [[pick(v) for v in measured(r.value)] for r in runs]


def pooled(runs, pick):
    """pick of every measured repetition of every run."""
    return [x for b in boots(runs, pick) for x in b]


def estimate(runs, pick=lambda v: v):
    """The median of one field and its interval: the two-level bootstrap (boots, then the
    repetitions in each) when the runs repeat their workload, the plain one otherwise."""
    if repeated(runs):
        return cluster_median_estimate(boots(runs, pick))
    return median_estimate([pick(r.value) for r in runs])


def summary(runs, pick=lambda v: v, digits=0):
    """(Estimate, `median [low, high]`) of one field of a cell's runs; (None, error) if a
    run failed."""
    err = failure(runs)
    if err:
        return None, err
    est = estimate(runs, pick)
    return est, format_estimate(est, digits)


def ratio(runs, base, pick=lambda v: v):
    """`ratio [low, high]` of the medians of one field of two cells' runs; "" if one failed.
    Runs that repeat their workload: the two-level bootstrap, the boots paired by seed when
    both cells ran the same seeds (benchstats.cluster_ratio_estimate)."""
    if failure(runs) or failure(base):
        return ""
    if repeated(runs) or repeated(base):
        return format_ratio(cluster_ratio_estimate(boots(runs, pick), boots(base, pick),
                                                   [r.seed for r in runs],
                                                   [r.seed for r in base]))
    return format_ratio(ratio_estimate([pick(r.value) for r in runs],
                                       [pick(r.value) for r in base]))


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
    """cells: key -> Cell; table: the runs by key -> Table; matrix: a Matrix, for a scenario
    whose boots are recorded as they finish (--full) so that --resume continues it."""

    def __init__(self, name, cells, table, matrix=None):
        self.name, self.cells, self.table, self.matrix = name, cells, table, matrix


class Matrix:
    """What --plan prints and the results file needs beyond the cells: metric (label, pick,
    digits), the value whose spreads within and between boots the claim cells report; claims,
    the keys of the cells that decide a claim; cut, {key: why} of the cells left out."""

    def __init__(self, metric, claims, cut):
        self.metric, self.claims, self.cut = metric, claims, cut


def spread_table(scenario, got):
    """Per claim cell: boots, repetitions, the metric's median and its spreads within a boot
    and between boots (benchstats.spread), so a reader sees what the repetitions bought."""
    label, pick, digits = scenario.matrix.metric
    rows = []
    for key in scenario.matrix.claims:
        runs = got.get(key)
        if not runs or failure(runs):
            continue
        cell = scenario.cells[key]
        est, text = summary(runs, pick, digits)
        rows.append([job_key_text(key), str(len(runs)), f"{cell.reps} (1 warm-up)"
                     if cell.reps > 1 else "1", text,
                     format_spread(spread(boots(runs, pick)), digits + 1)])
    return Table(f"{scenario.name}, claim cells: {label}, the median [95% CI, two-level "
                 "bootstrap], and its standard deviation within a boot (over its measured "
                 "repetitions) and between boots (of their means)",
                 ["cell", "boots", "repetitions", label, "spread"], rows, [], {}, True)


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
    flags = {name: flags for name, flags, _ in EXIT_PLATFORMS}
    return Scenario("exit", {key: Cell(flags[key[0]], fn, UNSEEDED) for key, fn in cells.items()},
                    lambda got: table(single(got)))


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
    flags = dict(svm)
    return Scenario("selfipi", {key: Cell(flags[key[0]], fn, UNSEEDED)
                                for key, fn in cells.items()}, lambda got: table(single(got)))


def pingpong_scenario(a):
    bochs = [(name, flags) for name, flags in PLATFORMS if flags[1] == "bochs"]
    cells = {(name, label): Cell(flags, lambda flags=flags, label=label, pins=pins:
                                 pingpong_cell(flags, label, pins, a.pingpong_iters),
                                 seeded(a.runs if a.full else a.scan_runs, a))
             for name, flags in bochs for label, pins in PINGPONG}

    def table(got):
        rows, chart = [], {label: [] for label, _ in PINGPONG}
        for name, _ in bochs:
            row = [name]
            for label, _ in PINGPONG:
                est, text = summary(got[(name, label)])
                row.append(text)
                chart[label].append(est.value if est else None)
            rows.append(row)
        return Table(f"pingpong: guest TSC ticks per IPI round trip ({a.pingpong_iters} "
                     "iterations, 2 vCPUs halting between IPIs): the median of the runs "
                     "[95% CI]", ["platform"] + [label for label, _ in PINGPONG], rows,
                     [name for name, _ in bochs], chart,
                     not any(failure(runs) for runs in got.values()))
    return Scenario("pingpong", cells, table)


def halt_poll_scenario(a):
    iters = {"pp": a.pingpong_iters, "burst": 2000, "ticks": 50}
    settings = [(0, p) for p in HALT_POLICIES] + \
        [(HALT_IDLE_EXIT_US, p) for p in HALT_POLICIES if p[0] in HALT_IDLE_EXIT_POLICIES]
    def runs(policy, idle, workload):
        """The claim's cells (its policies with the C-state model, on the workloads with 2
        CPUs) run --runs times, the others --scan-runs times unless --full."""
        claim = idle and policy in HALT_IDLE_EXIT_POLICIES and workload != HALT_WORKLOADS[1][0]
        return a.runs if claim or a.full else a.scan_runs
    cells = {(p[0], idle, w[0]): Cell(
        BOCHS_VMX, lambda p=p, idle=idle, w=w: halt_poll_cell(p[1], idle, w, iters),
        seeded(runs(p[0], idle, w[0]), a)) for idle, p in settings for w in HALT_WORKLOADS}

    def table(got):
        head = ["policy"]
        for label, *_ in HALT_WORKLOADS:
            head += [f"{label}: round trip", "/ fixed", "/ off", "caught", "polling ms/s",
                     "wasted ms/s", "wasted / fixed"]
        rows, chart, ok = [], {w[0]: [] for w in HALT_WORKLOADS}, True
        for idle, (policy, _) in settings:
            row = [policy + (f", `idle_exit_latency_us={idle}`" if idle else "")]
            for w in HALT_WORKLOADS:
                runs = got[(policy, idle, w[0])]
                fixed, off = got[(HALT_FIXED, idle, w[0])], got[(HALT_OFF, idle, w[0])]
                est, text = summary(runs, lambda v: v["round_trip"])
                chart[w[0]].append(est.value if est else None)
                if not est:
                    ok = False
                    row += [text] + [""] * 6
                    continue
                caught = [r.value["caught"] for r in runs]
                halts = [r.value["halts"] for r in runs]
                row += [text, ratio(runs, fixed, lambda v: v["round_trip"]),
                        ratio(runs, off, lambda v: v["round_trip"]),
                        f"{format_estimate(median_estimate(caught))} of "
                        f"{statistics.median(halts):g} halts",
                        summary(runs, lambda v: v["poll_ms_per_s"], 1)[1],
                        summary(runs, lambda v: v["wasted_ms_per_s"], 1)[1],
                        ratio(runs, fixed, lambda v: v["wasted_ms_per_s"])]
            rows.append(row)
        return Table("halt polling, Bochs corei7_skylake_x (VMX), 2 CPUs, clock: sync=none: per "
                     "workload, the median of the runs [95% CI] of the mean round trip in guest "
                     "TSC ticks and its ratio to fixed polling's and to no polling's, polls that "
                     "caught the wake-up (of halts), host CPU time spent polling and wasted in "
                     "polls that caught nothing, in ms per guest second, and the wasted time's "
                     f"ratio to fixed polling's. pingpong: {iters['pp']} round trips; idletick: "
                     f"{iters['burst']} round trips (shown), then {iters['ticks']} ticks at "
                     "250 Hz (its idle phase)", head, rows,
                     [row[0] for row in rows], chart, ok)
    return Scenario("haltpoll", cells, table)


def seedcheck_scenario(a):
    """One cell whose result the seed should move: the same seed twice, then other seeds."""
    seeds = [a.seed_base, a.seed_base] + [a.seed_base + i for i in range(1, a.seedcheck_seeds)]
    vcpus = 4
    cell = Cell(BOCHS_VMX, lambda: spin_cell(f"seedcheck-{vcpus}vcpu", BOCHS_VMX,
                                             spin_guests("spinlock", vcpus, 1,
                                                         a.spinlock_cycles), "spinlock", 1),
                seeds)

    def table(got):
        runs = got["spinlock"]
        err = failure(runs)
        rows = [[str(r.index), str(r.seed), str(r.value) if r.value is not None else r.error]
                for r in runs]
        if err:
            return Table("seedcheck: failed", ["run", "seed", "acquisitions"], rows, [], {}, False)
        same = {r.value for r in runs if r.seed == a.seed_base}
        by_seed = {r.seed: r.value for r in runs}
        distinct = len(set(by_seed.values()))
        repeats = len(same) == 1
        moves = distinct > 1
        verdict = ("the same seed repeats the run exactly" if repeats else
                   "**the same seed gave different values**") + "; " + \
            (f"{len(by_seed)} seeds gave {distinct} different values" if moves else
             "**the value does not move with the seed**")
        return Table(f"seedcheck: spinlock, {vcpus} vCPUs on Bochs corei7_skylake_x with 2 CPUs, "
                     f"{a.spinlock_cycles} guest TSC cycles, acquisitions per run and seed: "
                     + verdict, ["run", "seed", "acquisitions"], rows,
                     [f"run {r.index} (seed {r.seed})" for r in runs],
                     {"acquisitions": [r.value for r in runs]}, repeats and moves)
    return Scenario("seedcheck", {"spinlock": cell}, table)


def spin_policy_table(title, row_keys, got):
    """Rows (label, key(policy label) -> cell key): each policy's acquisitions and the ratios
    to `ple=off`, and of vcpu_id to last_boosted."""
    head = ["cell"] + [p for p, _ in YIELD_POLICIES] + \
        [f"{p} / `ple=off`" for p, _ in YIELD_POLICIES[1:]] + ["vcpu_id / last_boosted"]
    rows, chart, ok = [], {p: [] for p, _ in YIELD_POLICIES}, True
    for label, key in row_keys:
        row = [label]
        for policy, _ in YIELD_POLICIES:
            est, text = summary(got[key(policy)])
            ok = ok and est is not None
            chart[policy].append(est.value if est else None)
            row.append(text)
        base = got[key(YIELD_BASELINE)]
        row += [ratio(got[key(p)], base) for p, _ in YIELD_POLICIES[1:]]
        row.append(ratio(got[key(YIELD_VCPU_ID)], got[key(YIELD_LAST_BOOSTED)]))
        rows.append(row)
    return Table(title, head, rows, [label for label, _ in row_keys], chart, ok)


def yield_matrix(a):
    """(platform, CPUs, overcommit label, factor, VMs, runs) of every yield cell to run: by
    default the claim cells (YIELD_CLAIM, Bochs VMX, one VM) with --runs and Bochs VMX's
    2-CPU row with --scan-runs; --full: the whole matrix with --runs, and QEMU at 2 CPUs."""
    for pf in YIELD_PLATFORMS + ([YIELD_QEMU] if a.full else []):
        for cpus in YIELD_CPUS if pf != YIELD_QEMU else (2,):
            for oc, factor in YIELD_OVERCOMMIT:
                for vms in YIELD_VMS:
                    claim = (cpus, oc, vms, pf) == YIELD_CLAIM + (1, YIELD_PLATFORMS[0])
                    scan = (cpus, vms, pf) == (2, 1, YIELD_PLATFORMS[0])
                    runs = a.runs if claim or a.full else a.scan_runs if scan else 0
                    if runs:
                        yield pf, cpus, oc, factor, vms, runs


def yield_scenario(a):
    cycles = a.spinlock_cycles
    matrix = list(yield_matrix(a))
    cells = {}
    for pf, cpus, oc, factor, vms, runs in matrix:
        flags = pf[1] + ["--smp", str(cpus)]
        for policy, args in YIELD_POLICIES:
            cells[(pf[0], cpus, oc, vms, policy)] = Cell(
                flags, lambda pf=pf, cpus=cpus, args=args, n=cpus * factor, vms=vms:
                yield_cell(pf, cpus, args, n, vms, cycles), seeded(runs, a))

    def table(got):
        row_keys = [(f"{pf[0]}, {cpus} CPUs, {oc}, {vms} VM{'s' if vms > 1 else ''} "
                     f"({runs} runs)",
                     lambda policy, pf=pf, cpus=cpus, oc=oc, vms=vms: (pf[0], cpus, oc, vms,
                                                                       policy))
                    for pf, cpus, oc, _, vms, runs in matrix]
        return spin_policy_table(
            f"spinlock: lock acquisitions in {cycles} guest TSC cycles by all vCPUs of all VMs "
            "per spin policy, the median of the runs [95% CI], and the ratios of the medians "
            "[95% CI]; 1x, 2x, 3x: 1, 2, 3 vCPUs per CPU, one VM or two VMs with half the vCPUs "
            "each. Bochs with clock: sync=none: each run deterministic for its seed; QEMU: "
            "multi-threaded TCG, on a loaded host, not deterministic", row_keys, got)
    return Scenario("yield", cells, table)


LOCKS_ELF = os.path.join(ROOT, "build", "guests", "locks.elf")


def locks_scenario(a):
    """The many-lock guest (guest-tests/locks.c) per spin policy, in the claim cells'
    configuration; it takes its own seed, the run's."""
    if not os.path.exists(LOCKS_ELF):
        print(f"bench: locks: skipped, no {os.path.relpath(LOCKS_ELF, ROOT)}", file=sys.stderr)
        return None
    cpus, oc = YIELD_CLAIM
    vcpus = cpus * dict(YIELD_OVERCOMMIT)[oc]
    pf = YIELD_PLATFORMS[0]
    flags = pf[1] + ["--smp", str(cpus)]

    def cell(args):
        name = f"locks-{cpus}cpu-{vcpus}vcpu-" + (args.replace("=", "-") or "default")
        return spin_cell(name, with_hv_args(flags, args),
                         spin_guests("locks", vcpus, 1, f"{a.spinlock_cycles}+seed={guest_seed()}"),
                         "locks", 1)
    # docs/directed_yield.md states vcpu_id against last_boosted on it: --runs.
    runs = a.runs
    cells = {policy: Cell(flags, lambda args=args: cell(args), seeded(runs, a))
             for policy, args in YIELD_POLICIES}
    return Scenario("locks", cells, lambda got: spin_policy_table(
        f"locks (16 locks, half test-and-set, half MCS; its seed the run's): acquisitions in "
        f"{a.spinlock_cycles} guest TSC cycles, {vcpus} vCPUs on {cpus} CPUs, {pf[0]}, per spin "
        "policy, the median [95% CI], and the ratios [95% CI]",
        [(f"{pf[0]}, {cpus} CPUs, {oc}", lambda policy: policy)], got))


# A pause filter without a threshold (Bochs ryzen): pollux's count-only spins against KVM's
# choice there, no spin detection (pause_filter_count_only=off), and ple=off.
COUNT_ONLY_POLICIES = [
    ("`ple=off`", "ple=off"),
    ("`pause_filter_count_only=off` (KVM's)", "pause_filter_count_only=off"),
    ("`pause_filter_count_only=spin` (default)", ""),
]
COUNT_ONLY_CPUS, COUNT_ONLY_FACTOR = 4, 2


def count_only_scenario(a):
    """Which default the numbers favour on a count-only pause filter (issue 26 fix 4)."""
    pf = YIELD_PLATFORMS[1]
    flags = pf[1] + ["--smp", str(COUNT_ONLY_CPUS)]
    vcpus = COUNT_ONLY_CPUS * COUNT_ONLY_FACTOR

    def cell(args):
        name = f"countonly-{COUNT_ONLY_CPUS}cpu-{vcpus}vcpu-" + (args.replace("=", "-") or
                                                               "default")
        return spin_cell(name, with_hv_args(flags, args),
                         spin_guests("spinlock", vcpus, 1, a.spinlock_cycles), "spinlock", 1)
    cells = {policy: Cell(flags, lambda args=args: cell(args), seeded(a.runs, a))
             for policy, args in COUNT_ONLY_POLICIES}

    def table(got):
        base, kvm = got[COUNT_ONLY_POLICIES[0][0]], got[COUNT_ONLY_POLICIES[1][0]]
        rows, chart, ok = [], {"acquisitions": []}, True
        for policy, _ in COUNT_ONLY_POLICIES:
            est, text = summary(got[policy])
            ok = ok and est is not None
            chart["acquisitions"].append(est.value if est else None)
            rows.append([policy, text, ratio(got[policy], base), ratio(got[policy], kvm)])
        return Table(f"count-only pause filter: spinlock, {vcpus} vCPUs on {COUNT_ONLY_CPUS} CPUs "
                     f"of {pf[0]}, acquisitions in {a.spinlock_cycles} guest TSC cycles, the "
                     "median [95% CI] and the ratios of the medians [95% CI]",
                     ["policy", "acquisitions", "/ `ple=off`", "/ KVM's"], rows,
                     [p for p, _ in COUNT_ONLY_POLICIES], chart, ok)
    return Scenario("countonly", cells, table)


LINUX_QEMU = ["--emu", "qemu", "--smp", "2", "--args", "watchdog_ms=10000"]
LINUX_HALT_POLICIES = [
    ("host polls (default)", "", ""),
    ("`halt_poll_ns=0`", "halt_poll_ns=0", ""),
    ("guest cpuidle-haltpoll", "", "+cpuidle_haltpoll.force=1"),
]


def linux_cell(name, flags, guest):
    """One boot of a Linux guest named lx: (its workload's @bench, @vm_stop, @stats) or an error."""
    log, rundir = boot(name, flags, guest)
    # The workload's own line is the one whose op is its word (`idle`, `hackbench`); the init
    # script also reports found, kernel, devices, workload and cpu_times (docs/console.md).
    workload = guest.split("workload=", 1)[1].split(":", 1)[0]
    bench = [e for e in log.all("bench") if e.vm == "lx" and e.get("op") == workload]
    stop = [e for e in log.all("vm_stop") if e["vm"] == "lx"]
    if log.returncode != 0 or not bench or not stop or stop[0]["reason"] != "poweroff":
        return None, f"failed (see {os.path.relpath(rundir, ROOT)})"
    return (bench[0].body, stop[0].body,
            {vcpu: e.body for vcpu, e in log.stats("vcpu", "lx").items()}), ""


def linux_flags(host_args):
    return LINUX_QEMU[:-1] + [f"{LINUX_QEMU[-1]} {host_args}".strip()]


def linux_haltpoll_scenario(a, seconds=10):
    """An idle Linux guest: host CPU time spent polling per guest second, per policy."""
    cells = {label: Cell(LINUX_QEMU, lambda host=host, guest=guest: linux_cell(
        f"linux-haltpoll-{host.replace('=', '-') or 'default'}{guest and '-guest'}",
        linux_flags(host),
        f"linux:name=lx:vcpus=2:args=workload=idle:{seconds}{guest}"), UNSEEDED)
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
    return Scenario("linux-haltpoll", cells, lambda got: table(single(got)))


def linux_yield_scenario(a, groups=4, loops=100):
    """hackbench in a 4-vCPU Linux guest on 2 CPUs, per spin policy."""
    cells = {label: Cell(LINUX_QEMU, lambda policy=policy: linux_cell(
        f"linux-yield-{policy.replace('=', '-') or 'default'}", linux_flags(policy),
        f"linux:name=lx:vcpus=4:args=workload=hackbench:{groups}:{loops}"), UNSEEDED)
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
    return Scenario("linux-yield", cells, lambda got: table(single(got)))


# Every scenario, in output order: a function from the options to its Scenario (None: skipped),
# and whether `make bench` runs it (the others: --full, `make bench-full`).
SCENARIOS = [("exit", exit_scenario, True), ("pingpong", pingpong_scenario, True),
             ("haltpoll", halt_poll_scenario, True), ("seedcheck", seedcheck_scenario, True),
             ("yield", yield_scenario, True), ("locks", locks_scenario, True),
             ("countonly", count_only_scenario, True),
             ("selfipi", selfipi_scenario, True),
             ("linux-net", lambda a: linux_net_scenario(a), True),
             ("linux-haltpoll", linux_haltpoll_scenario, False),
             ("linux-yield", linux_yield_scenario, False)]


def linux_net_scenario(a):
    """tools/bench_linux.py's virtio-net table: the claim's cells in make bench, the whole
    matrix with --full."""
    import bench_linux
    return bench_linux.net_scenario(sys.modules[__name__], a)


def linux_scenarios():
    """tools/bench_linux.py's scenarios, when it exists: its scenarios(bench) returns
    [(name, make(options) -> Scenario)], built from this module's Cell, boot and tables;
    they replace the built-in Linux scenarios of the same names."""
    try:
        import bench_linux
    except ImportError:
        print("bench: no tools/bench_linux.py: only the built-in Linux scenarios",
              file=sys.stderr)
        return []
    return [(name, make, False) for name, make in bench_linux.scenarios(sys.modules[__name__])]


def job_key_text(key):
    return key if isinstance(key, str) else ", ".join(str(k) for k in key)


def key_json(key):
    """A cell's key as results files write it: a list of strings."""
    return [str(k) for k in ([key] if isinstance(key, str) else key)]


# ---- A matrix across sessions (docs/linux.md, "Running a matrix"): its boots are appended to
# bench-results/<scenario>.json as they finish, each with the code's commit and whether the
# tree was clean; --resume skips the boots already there and refuses a file of another
# commit. The files are small (values, not logs): committed, a later session on a new
# machine resumes them.
RESULTS_DIR = os.path.join(ROOT, "bench-results")


def tree_state(root=ROOT):
    """(the commit of the code, whether the tree is clean), the results files aside: the code's
    commit is the last that changed anything outside bench-results/, so committing a session's
    results there leaves it as it was and the next session resumes."""
    def git(*args):
        return subprocess.run(["git", "-C", root] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, check=True).stdout
    outside = ["--", ".", ":(exclude)bench-results"]
    status = git("status", "--porcelain", *outside)
    return git("log", "-1", "--format=%H", *outside).strip(), not status.strip()


class Results:
    """One matrix's results file: {"matrix", "commit", "boots": [one record per finished boot,
    in the order they finished]}; a boot's record: scenario, cell (key_json), run, seed,
    commit, clean, reps, value (None if it failed), error, logs, wall_s. A later record of the
    same cell and seed (a failed boot run again) replaces an earlier one."""

    def __init__(self, path, name, commit, clean, resume):
        self.path, self.commit, self.clean = path, commit, clean
        self.lock = threading.Lock()
        rel = os.path.relpath(path, ROOT)
        if os.path.exists(path):
            with open(path) as f:
                self.data = json.load(f)
            had = self.data["commit"]
            if not resume:
                raise SystemExit(f"bench: {rel} exists ({len(self.data['boots'])} boots at "
                                 f"{had[:12]}): --resume (RESUME=1) continues it; move it away "
                                 "to start over")
            if had != commit:
                raise SystemExit(f"bench: {rel} holds boots of commit {had[:12]}, the code is at "
                                 f"{commit[:12]}: a matrix never mixes commits; check out "
                                 f"{had[:12]} to resume it, or move the file away to start over")
        else:
            self.data = {"matrix": name, "commit": commit, "boots": []}

    def latest(self):
        """(cell, seed) -> the last record of that boot."""
        return {(tuple(b["cell"]), b["seed"]): b for b in self.data["boots"]}

    def done(self):
        """(cell, seed) -> the record of each boot that gave a value."""
        return {k: b for k, b in self.latest().items() if b["value"] is not None}

    def append(self, job):
        record = {"scenario": job.scenario.name, "cell": key_json(job.key),
                  "commit": self.commit, "clean": self.clean, "reps": job.cell.reps,
                  **job.run.as_json()}
        with self.lock:
            self.data["boots"].append(record)
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = self.path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(self.data, f, indent=1)
                f.write("\n")
            os.replace(tmp, self.path)


def boots_to_run(scenarios, done):
    """A Job per boot of every cell, but those done: {scenario: {(key_json tuple, seed)}}."""
    return [Job(s, key, cell, index, seed) for s in scenarios for key, cell in s.cells.items()
            for index, seed in enumerate(cell.seeds)
            if (tuple(key_json(key)), seed) not in done.get(s.name, {})]


def recorded_run(record):
    run = Run(record["run"], record["seed"])
    run.value, run.error = record["value"], record["error"]
    run.logs, run.wall_s = record["logs"], record["wall_s"]
    return run


def plan(scenario, done, jobs):
    """(lines, seconds): --plan's table of a scenario, per cell its boots (and how many are
    done), repetitions and estimated hours, then the cells cut and why; seconds: what its
    boots still to run should take with jobs emulators at once (a cell that runs alone, one
    at a time), None if a cell has no estimate. done: (key_json tuple, seed) of the finished
    boots."""
    lines = [f"{scenario.name}:", "| cell | boots (done) | repetitions | min per boot | h left |",
             "|---|---:|---:|---:|---:|"]
    total = 0.0
    for key, cell in scenario.cells.items():
        k = tuple(key_json(key))
        finished = sum((k, seed) in done for seed in cell.seeds)
        left = len(cell.seeds) - finished
        if cell.boot_s is None:
            total, hours = None, "?"
        else:
            seconds = left * cell.boot_s / (1 if cell.alone() else jobs)
            total = total + seconds if total is not None else None
            hours = f"{seconds / 3600:.2f}"
        each = f"{cell.boot_s / 60:.1f}" if cell.boot_s is not None else "?"
        lines.append(f"| {job_key_text(key)} | {len(cell.seeds)} ({finished}) | {cell.reps} | "
                     f"{each} | {hours} |")
    reasons = {}
    for key, why in (scenario.matrix.cut.items() if scenario.matrix else ()):
        reasons.setdefault(why, []).append(job_key_text(key))
    lines += [f"cut ({why}): {'; '.join(keys)}" for why, keys in reasons.items()]
    hours = f"{total / 3600:.2f} h" if total is not None else "unknown"
    lines.append(f"{scenario.name}: {sum(len(c.seeds) for c in scenario.cells.values())} boots, "
                 f"{hours} left with {jobs} emulators at once")
    return lines, total


class Job:
    def __init__(self, scenario, key, cell, index, seed):
        self.scenario, self.key, self.cell = scenario, key, cell
        self.run = Run(index, seed)

    def describe(self):
        key = job_key_text(self.key)
        seed = f" (seed {self.run.seed})" if self.run.seed is not None else ""
        return f"{self.scenario.name}: {key} run {self.run.index}{seed}"


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def minutes(seconds):
    mins, secs = divmod(int(seconds), 60)
    return f"{mins}m{secs:02d}s"


def remaining_seconds(pending, durations, max_emulators):
    """What the pending jobs should still take: each at the mean boot time so far of its
    platform (of all platforms while its own has none), those that run alone serially."""
    everything = [d for ds in durations.values() for d in ds]
    if not everything:
        return None
    total = 0.0
    for job in pending:
        times = durations.get(job.cell.platform()) or everything
        total += sum(times) / len(times) / (1 if job.cell.alone() else max_emulators)
    return total


def run_jobs(jobs, max_emulators, finished=lambda job: None, deadline=None):
    """Every job in the given order: up to max_emulators at once, a job whose cell runs alone
    with nothing beside it; a progress line per boot, and finished(job) as each ends. None
    starts that would not end by deadline (time.monotonic(), the cell's boot_s estimate);
    returns the jobs that ran."""
    cond = threading.Condition()
    state = {"running": 0, "alone": False, "done": 0}
    durations, pending = {}, list(jobs)
    start = time.monotonic()

    def work(job):
        CURRENT_RUN.set(job.run)
        t0 = time.monotonic()
        job.run.value, job.run.error = job.cell.measure()
        job.run.wall_s = time.monotonic() - t0
        with cond:
            state["done"] += 1
            state["running"] -= 1
            state["alone"] = False
            durations.setdefault(job.cell.platform(), []).append(job.run.wall_s)
            pending.remove(job)
            finished(job)
            left = remaining_seconds(pending, durations, max_emulators)
            outcome = "ok" if job.run.value is not None else job.run.error
            estimate = f", about {round(left / 60)} min left" if left is not None else ""
            print(f"bench: [{state['done']}/{len(jobs)}] {job.describe()}: {outcome} "
                  f"({minutes(time.monotonic() - start)}{estimate})", file=sys.stderr,
                  flush=True)
            cond.notify_all()

    threads, started = [], []
    for job in jobs:
        with cond:
            while state["alone"] or state["running"] >= max_emulators or \
                    (job.cell.alone() and state["running"]):
                cond.wait()
            if deadline is not None and time.monotonic() + (job.cell.boot_s or 0) > deadline:
                print(f"bench: --hours: {len(jobs) - len(started)} boots would not end in "
                      "time and do not start",
                      file=sys.stderr, flush=True)
                pending[:] = [j for j in pending if j in started]
                break
            started.append(job)
            state["running"] += 1
            state["alone"] = job.cell.alone()
        t = threading.Thread(target=work, args=(job,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    return started


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=1000)
    p.add_argument("--pingpong-iters", type=int, default=200)
    p.add_argument("--only", default="", help="comma-separated scenarios (default: those of "
                   "make bench; with --full all)")
    p.add_argument("--full", action="store_true", help="every cell of every scenario with "
                   "--runs runs, and the Linux scenarios (make bench-full)")
    p.add_argument("--runs", type=int, default=None,
                   help=f"runs of each cell that decides a claim (default {RUNS_DEFAULT}; "
                   "with --full of every cell; the Linux matrices' boots per cell default to "
                   "their budget, tools/bench_linux.py BUDGETS)")
    p.add_argument("--reps", type=int, default=None,
                   help="runs of the workload inside each boot of a Linux matrix, the first a "
                   "warm-up (default: its budget's)")
    p.add_argument("--plan", action="store_true", help="print each scenario's cells, boots, "
                   "repetitions and estimated hours (and what a results file already holds), "
                   "and run nothing")
    p.add_argument("--hours", type=float, default=None, help="start no boot that would not "
                   "end within this many hours, by its estimate (a session's share of a "
                   "matrix; --resume continues it)")
    p.add_argument("--resume", action="store_true", help="continue the Linux matrices from "
                   "their bench-results/<scenario>.json (--full), skipping the boots there; "
                   "refused if that file is of another commit")
    p.add_argument("--scan-runs", type=int, default=SCAN_RUNS_DEFAULT,
                   help=f"runs of the other cells without --full (default {SCAN_RUNS_DEFAULT})")
    p.add_argument("--seed-base", type=int, default=SEED_BASE_DEFAULT,
                   help="run r of a cell uses seed BASE+r")
    p.add_argument("--seedcheck-seeds", type=int, default=5,
                   help="distinct seeds of the seedcheck scenario")
    p.add_argument("--cells", default="", help="substrings separated by '|': only the cells whose "
                   "key (as printed in the progress lines) holds one of them")
    p.add_argument("--order-seed", type=int, default=None,
                   help="the shuffle of the jobs (default: drawn, and printed)")
    p.add_argument("--jobs", type=int, default=MAX_EMULATORS,
                   help=f"emulators at once (default {MAX_EMULATORS})")
    # 0.2 s of guest time: 16 vCPUs on 8 CPUs get 50 slices each; at 8 CPUs the guest's
    # time is most of a boot's cost (Bochs emulates every CPU in one host thread).
    p.add_argument("--spinlock-cycles", type=int, default=20000000)
    a = p.parse_args()
    a.runs_given = a.runs is not None
    a.runs = a.runs if a.runs_given else RUNS_DEFAULT
    known = SCENARIOS + linux_scenarios() if a.full else SCENARIOS
    makers = {name: (make, default) for name, make, default in known}
    wanted = a.only.split(",") if a.only else [n for n, (_, d) in makers.items() if d or a.full]
    unknown = set(wanted) - set(makers)
    if unknown:
        sys.exit(f"bench: no scenario {', '.join(sorted(unknown))} (scenarios: "
                 f"{', '.join(makers)})")
    scenarios = [s for s in (makers[name][0](a) for name in makers if name in wanted) if s]
    if a.cells:
        wanted_cells = a.cells.split("|")
        for s in scenarios:
            s.cells = {key: cell for key, cell in s.cells.items()
                       if any(w in job_key_text(key) for w in wanted_cells)}
    results, done, clean = {}, {}, True
    if any(s.matrix for s in scenarios):
        commit, clean = tree_state()
    for s in scenarios:
        if s.matrix:
            path = os.path.join(RESULTS_DIR, f"{s.name}.json")
            results[s.name] = Results(path, s.name, commit, clean, a.resume or a.plan)
            done[s.name] = results[s.name].done()
    total = 0.0
    for s in (s for s in scenarios if s.matrix or a.plan):
        lines, seconds = plan(s, done.get(s.name, {}), a.jobs)
        total = total + seconds if total is not None and seconds is not None else None
        print("\n".join(lines), file=sys.stderr, flush=True)
    if a.plan or results:
        print(f"bench: about {total / 3600:.2f} h left in all" if total is not None else
              "bench: some cells have no estimate", file=sys.stderr, flush=True)
    if a.plan:
        return 0
    scenarios = [s for s in scenarios if s.cells]  # a matrix cut whole runs nothing
    if results and not clean:
        print("bench: the tree has changes: every boot is recorded with clean false",
              file=sys.stderr, flush=True)
    jobs = boots_to_run(scenarios, done)
    order_seed = a.order_seed if a.order_seed is not None else random.SystemRandom().randrange(
        1 << 32)
    random.Random(order_seed).shuffle(jobs)
    print(f"bench: {plural(len(jobs), 'boot')} of {plural(len(scenarios), 'scenario')} in the order of "
          f"--order-seed {order_seed}, seeds from {a.seed_base}", file=sys.stderr, flush=True)
    start = time.monotonic()
    deadline = time.monotonic() + a.hours * 3600 if a.hours else None
    jobs = run_jobs(jobs, a.jobs, lambda job: job.scenario.name in results and
                    results[job.scenario.name].append(job), deadline)
    got = {s.name: {key: [] for key in s.cells} for s in scenarios}
    for s in scenarios:
        for key in s.cells:
            got[s.name][key] += [recorded_run(r) for (k, _), r in done.get(s.name, {}).items()
                                 if k == tuple(key_json(key))]
    for job in jobs:
        got[job.scenario.name][job.key].append(job.run)
    for runs in (r for cells in got.values() for r in cells.values()):
        runs.sort(key=lambda r: r.index)
    os.makedirs(BENCH_DIR, exist_ok=True)
    incomplete = [s for s in scenarios if any(len(got[s.name][key]) < len(cell.seeds)
                                              for key, cell in s.cells.items())]
    for s in incomplete:
        have = sum(len(runs) for runs in got[s.name].values())
        print(f"bench: {s.name}: {have} of {sum(len(c.seeds) for c in s.cells.values())} boots "
              "ran, no table yet" + ("; --resume continues it" if s.matrix else ""), flush=True)
    scenarios = [s for s in scenarios if s not in incomplete]
    tables = {s.name: s.table(got[s.name]) for s in scenarios}
    spreads = {s.name: spread_table(s, got[s.name]) for s in scenarios if s.matrix}
    for s in scenarios:
        print("\n".join(tables[s.name].markdown()), flush=True)
        if s.name in spreads:
            print("\n".join(spreads[s.name].markdown()), flush=True)
    with open(os.path.join(BENCH_DIR, "results.json"), "w") as f:
        json.dump({"order_seed": order_seed, "seed_base": a.seed_base,
                   "tables": {name: t.as_json() for name, t in tables.items()},
                   "spreads": {name: t.as_json() for name, t in spreads.items()},
                   "runs": [dict(scenario=j.scenario.name, cell=[str(k) for k in (
                       [j.key] if isinstance(j.key, str) else j.key)], **j.run.as_json())
                       for j in jobs]}, f, indent=1)
    charts = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot.py"), "--bench",
                             os.path.join(BENCH_DIR, "results.json"), BENCH_DIR])
    booting = time.monotonic() - start
    # make exports when it started (the floor and counting builds come first): the true total.
    made = os.environ.get("POLLUX_MAKE_START")
    total = time.time() - float(made) if made else None
    took = (f"{minutes(total)} ({minutes(booting)} of boots, the rest building)" if total
            else minutes(booting))
    print(f"\nbench: {plural(len(scenarios), 'scenario')}, {plural(len(jobs), 'boot')} in "
          f"{took}; raw logs, results.json and the charts in "
          f"{os.path.relpath(BENCH_DIR, ROOT)}/", flush=True)
    return 0 if all(t.ok for t in tables.values()) and charts.returncode == 0 and \
        not incomplete else 1


if __name__ == "__main__":
    sys.exit(main())

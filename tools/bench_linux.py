# SPDX-License-Identifier: GPL-2.0-only
"""The Linux cells of the benchmark, as data (docs/linux.md, "Linux at scale").

A cell is one boot: tools/run.py's flags, the GUESTS string, a timeout, and
`parse(log)`, which takes the boot's tools/consolelog.ConsoleLog and returns a
dict (`ok`, `error`, and per Linux VM what the guest and pollux reported).
This module runs nothing; a harness boots each cell as

    run.py --rundir DIR --timeout cell.timeout_s --guests cell.guests *cell.flags

All cells run on Bochs corei7_skylake_x (VMX) with 4 CPUs, where
`clock: sync=none` makes guest time an instruction count: deterministic.
Every cell puts 8 vCPUs on the 4 CPUs, as one 8-vCPU VM or two 4-vCPU VMs,
and boots the guest with and without `nopvspin` (virt_spin_lock, the
test-and-set lock a KVM guest falls back to without PV_UNHALT, against the
native qspinlock). hackbench runs under each spin policy, cyclictest under
each halt-polling policy.

A cell's boot may run its workload R times (`reps`: workload=w,w,...), the
first a warm-up; the init script announces each with a `workload` line and runs
each between its own pair of trace marks, so a repetition's counters are the
difference of the two mark rounds (`chain`). The matrices' budgets (`BUDGETS`:
boots and repetitions per cell, the cells cut and why, the wall time of a boot)
are what `tools/bench.py --plan` adds up (docs/linux.md, "Running a matrix").
"""
import os
import statistics
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --mem 1024: two 256 MiB VMs do not fit in run.py's default 512 MiB (@vm_reject "out of host
# memory"). Measured wall times per boot: docs/linux.md.
PLATFORM = ("--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "4", "--mem", "1024")
# (label, pollux options)
SPIN_POLICIES = (
    ("`ple=off`", "ple=off"),
    ("`yield_pivot=none`", "yield_pivot=none"),
    ("`yield_pivot=last_boosted`", "yield_pivot=last_boosted"),
    ("`yield_pivot=vcpu_id` (default)", ""),
)
HALT_POLICIES = (
    ("`halt_poll_ns=0`", "halt_poll_ns=0"),
    ("adaptive (default)", ""),
    ("`halt_poll_mode=fixed`", "halt_poll_mode=fixed"),
)
# (label, VM words and kernel command line words, the spinlock the init script must report).
# pv=none: the PAUSE-exit policies are measured without KVM's PV interfaces (a Linux VM's
# default is pv=all, whose PV queued spinlock issue 23's benchmark measures).
LOCKS = (
    ("virt_spin_lock (`pv=none`)", ":pv=none", "", "virt_spin_lock"),
    ("qspinlock (`pv=none`, `nopvspin`)", ":pv=none", "+nopvspin", "qspinlock"),
)
# (label, ((VM name, vCPUs), ...)); the VMs run the same workload at once.
LAYOUTS = (
    ("one 8-vCPU VM", (("lx", 8),)),
    ("two 4-vCPU VMs", (("lx0", 4), ("lx1", 4))),
)
VM_MEM = "256M"
# The per-VM sums of @stats every parse returns.
STAT_KEYS = ("spins_detected", "spin_yield_attempted", "spin_yield_successful", "halt_exits",
             "halt_attempted_poll", "halt_successful_poll", "halt_poll_success_ns",
             "halt_poll_fail_ns", "pv_kicks", "pv_send_ipis", "pv_tlb_flushes",
             "directed_yield_successful", "timer_interrupts", "timer_late_ns",
             "timer_advance_wait_ns")


def mark_rounds(log, vm):
    """The VM's `vm` and `devices` records of the rounds its trace marks printed, in order:
    [(vm record, devices record or {})] (a mark's round has no global record; the stop's
    round comes after the VM's @vm_stop)."""
    stats = log.all("stats")
    global_rounds = {e["round"] for e in stats if e["scope"] == "global"}
    stop_at = next((i for i, e in enumerate(log.events) if e.name == "vm_stop" and e["vm"] == vm),
                   len(log.events))
    devices = {e["round"]: e.body for e in stats if e["scope"] == "devices" and e["vm"] == vm}
    out = []
    for i, e in enumerate(log.events):
        if i >= stop_at:
            break
        if e.name == "stats" and e["scope"] == "vm" and e["vm"] == vm and \
                e["round"] not in global_rounds:
            out.append((e.body, devices.get(e["round"], {})))
    return out


def delta(later, earlier, key):
    a, b = later.get(key, 0), earlier.get(key, 0)
    if isinstance(a, dict):
        return {k: a.get(k, 0) - b.get(k, 0) for k in set(a) | set(b)}
    return a - b


def chain(log, vm):
    """The VM's workloads as its init script ran them, or a str saying what does not add up:
    per `workload` line, {"workload", "bench": the @bench lines up to the next one, "start",
    "end": the (vm record, devices record) of the mark rounds around it}. Every workload
    runs between one pair of trace marks (the script's measure), so workload i's are the
    VM's mark rounds 2i and 2i + 1."""
    items = []
    for e in log.all("bench"):
        if e.vm == vm and e.get("op") == "workload":
            items.append({"workload": e["workload"], "bench": []})
        elif e.vm == vm and items:
            items[-1]["bench"].append(e)
    rounds = mark_rounds(log, vm)
    if not items or len(rounds) != 2 * len(items):
        return f"{vm}: {len(rounds)} mark rounds for {len(items)} workloads, want 2 each"
    for i, item in enumerate(items):
        item["start"], item["end"] = rounds[2 * i], rounds[2 * i + 1]
    return items


def repetitions(log, vm, workload):
    """The VM's runs of workload (its chain's items whose name is workload's), each with
    `stats`, the STAT_KEYS counted between its marks; or a str, what is missing."""
    items = chain(log, vm)
    if isinstance(items, str):
        return items
    reps = [dict(item, stats={k: delta(item["end"][0], item["start"][0], k) for k in STAT_KEYS})
            for item in items if item["workload"].split(":")[0] == workload]
    return reps or f"{vm}: no {workload} in its chain"


def vm_reports(log, vms, workload):
    """Per VM: its init script's lines, @vm_stop and @stats, or the first thing missing."""
    got, errors = {}, []
    for name, vcpus in vms:
        bench = [e for e in log.all("bench") if e.vm == name]
        found = [e for e in bench if e.get("op") == "found"]
        ops = [e for e in bench if e.get("op", "").startswith(workload)]
        stop = [e for e in log.all("vm_stop") if e["vm"] == name]
        stats = log.stats("vm", name)
        if not found or found[0]["cpus_online"] != vcpus:
            errors.append(f"{name}: no found line with {vcpus} CPUs online")
        elif not [e for e in ops if e["op"] == workload]:
            errors.append(f"{name}: no {workload} result")
        elif not stop or stop[0]["reason"] != "poweroff":
            errors.append(f"{name}: did not power off")
        elif not stats:
            errors.append(f"{name}: no @stats")
        got[name] = {"found": found[0].body if found else None, "ops": ops,
                     "stop": stop[0].body if stop else None,
                     "stats": {k: stats[-1].get(k) for k in STAT_KEYS} if stats else None}
    if log.returncode != 0:
        errors.append(f"run.py exited {log.returncode}")
    return got, errors


def vm_repetitions(log, name, workload, errors, result):
    """The VM's repetitions of workload, each result(its @bench lines by op) with `stats`,
    its counters between its marks; [] with the error appended when they do not add up."""
    reps = repetitions(log, name, workload)
    if isinstance(reps, str):
        errors.append(reps)
        return []
    out = []
    for i, rep in enumerate(reps):
        ops = {e["op"]: e.body for e in rep["bench"]}
        got = result(ops) if workload in ops else None
        if got is None:
            errors.append(f"{name}: no {workload} result in repetition {i}")
            return []
        out.append(dict(got, stats=rep["stats"]))
    return out


# A throughput workload's result field: hackbench's run time, ebizzy's records per second.
WORK_FIELDS = {"hackbench": "seconds", "ebizzy": "records_per_s"}


def parse_hackbench(log, vms, spinlock, workload="hackbench"):
    """{"ok", "error", "vms": {name: {"spinlock", field, "stop", "stats", "reps":
    [{field, "stats"}]}}} for workload hackbench (field `seconds`) or ebizzy
    (`records_per_s`): field the first repetition's, stats the whole boot's."""
    field = WORK_FIELDS[workload]
    reports, errors = vm_reports(log, vms, workload)
    out = {}
    for name, r in reports.items():
        result = next((e for e in r["ops"] if e["op"] == workload), None)
        out[name] = {"spinlock": r["found"] and r["found"].get("spinlock"),
                     field: result and result[field], "stop": r["stop"],
                     "stats": r["stats"],
                     "reps": vm_repetitions(log, name, workload, errors,
                                            lambda ops: {field: ops[workload][field]})}
        if r["found"] and out[name]["spinlock"] != spinlock:
            errors.append(f"{name}: spinlock {out[name]['spinlock']}, want {spinlock}")
    return {"ok": not errors, "error": "; ".join(errors), "vms": out}


def parse_cyclictest(log, vms, spinlock):
    """{"ok", "error", "vms": {name: {"spinlock", "seconds", "min_us", "avg_us", "max_us",
    "samples", "overflows", "p50_us", "p99_us", "threads": [{"min_us", "avg_us", "max_us",
    "samples", "overflows"}], "log2_us": [...], "stop", "stats", "reps": [{"seconds",
    "min_us", "avg_us", "max_us", "samples", "p50_us", "p99_us", "stats"}]}}}
    (docs/linux.md: the result lines): the first repetition's, and each repetition's.
    spinlock: what each VM's init script must report (None: anything)."""
    reports, errors = vm_reports(log, vms, "cyclictest")
    out = {}
    for name, r in reports.items():
        total = next((e.body for e in r["ops"] if e["op"] == "cyclictest"), {})
        # The first repetition's: its thread lines come first, one per thread.
        threads = sorted([e.body for e in r["ops"] if e["op"] == "cyclictest_thread"]
                         [:total.get("threads", 0)], key=lambda t: t["thread"])
        hist = next((e.body for e in r["ops"] if e["op"] == "cyclictest_histogram"), {})
        pct = next((e.body for e in r["ops"] if e["op"] == "cyclictest_percentiles"), {})
        out[name] = {"spinlock": r["found"] and r["found"].get("spinlock"),
                     **{k: total.get(k) for k in ("seconds", "min_us", "avg_us", "max_us",
                                                  "samples", "overflows")},
                     "p50_us": pct.get("p50_us"), "p99_us": pct.get("p99_us"),
                     "threads": [{k: v for k, v in t.items() if k not in ("guest", "op")}
                                 for t in threads],
                     "log2_us": hist.get("log2_us"), "stop": r["stop"], "stats": r["stats"],
                     "reps": vm_repetitions(log, name, "cyclictest", errors, lambda ops: dict(
                         {k: ops["cyclictest"][k] for k in ("seconds", "min_us", "avg_us",
                                                            "max_us", "samples")},
                         **{k: ops.get("cyclictest_percentiles", {}).get(k)
                            for k in ("p50_us", "p99_us")}))}
        if total and len(threads) != total["threads"]:
            errors.append(f"{name}: {len(threads)} thread lines of {total['threads']}")
        if spinlock and r["found"] and out[name]["spinlock"] != spinlock:
            errors.append(f"{name}: spinlock {out[name]['spinlock']}, want {spinlock}")
    return {"ok": not errors, "error": "; ".join(errors), "vms": out}


@dataclass(frozen=True)
class Cell:
    name: str        # unique and file-name safe: the boot's run directory
    workload: str    # "hackbench", "ebizzy" or "cyclictest"
    layout: str      # a LAYOUTS label
    lock: str        # a LOCKS label
    policy: str      # a SPIN_POLICIES or HALT_POLICIES label
    flags: tuple     # tools/run.py flags
    guests: str      # GUESTS
    vms: tuple       # ((VM name, vCPUs), ...)
    spinlock: str    # what each VM's init script must report
    timeout_s: int
    reps: int = 1    # runs of the workload per boot (workload=w,w,...), the first a warm-up

    def parse(self, log):
        if self.workload == "cyclictest":
            return parse_cyclictest(log, self.vms, self.spinlock)
        return parse_hackbench(log, self.vms, self.spinlock, self.workload)


def cell(workload, layout, lock, policy, timeout_s, reps=1):
    """One Cell: workload is `hackbench:<groups>:<loops>` or `cyclictest:<s>:<interval_us>`,
    run reps times in each boot."""
    kind = workload.split(":")[0]
    layout_label, vms = layout
    lock_label, vm_words, words, spinlock = lock
    policy_label, options = policy
    guests = " ".join(f"linux:name={name}:vcpus={vcpus}:mem={VM_MEM}{vm_words}:args=workload="
                      f"{','.join([workload] * reps)}{words}" for name, vcpus in vms)
    flags = PLATFORM + (("--args", options) if options else ())
    name = "-".join(["linux", kind, f"{len(vms)}x{vms[0][1]}",
                     "nopvspin" if words else "pvspin", options.replace("=", "-") or "default"])
    return Cell(name, kind, layout_label, lock_label, policy_label, flags, guests, vms,
                spinlock, timeout_s, reps)


def linux_cells(hackbench=(4, 20), cyclictest=(2, 1000), timeout_s=1800, reps=1):
    """Every Linux cell: hackbench -g G -l L per spin policy, cyclictest for S seconds at an
    interval of I us per halt-polling policy, each in both layouts and with both locks, the
    workload reps times per boot."""
    hb = f"hackbench:{hackbench[0]}:{hackbench[1]}"
    ct = f"cyclictest:{cyclictest[0]}:{cyclictest[1]}"
    return ([cell(hb, layout, lock, policy, timeout_s, reps)
             for layout in LAYOUTS for lock in LOCKS for policy in SPIN_POLICIES] +
            [cell(ct, layout, lock, policy, timeout_s, reps)
             for layout in LAYOUTS for lock in LOCKS for policy in HALT_POLICIES])


# hackbench cells also record the workload's window (the init script's marks around it):
# spins and yields inside it, and what tools/yield_report.py reads from the timeline. 8192
# records cost about 0.5 MB of console, some 40 s of guest time at 115200 baud.
HACKBENCH_TRACE = "trace=sched trace_window=marker trace_records=8192"


def window_report(log, vms):
    """Per VM, tools/yield_report.py's summary of its window, with the records dropped."""
    from timeline import Timeline
    from yield_report import report
    tl = Timeline(log)
    out = {}
    for name, _ in vms:
        if name in tl.vms:
            out[name] = {**report(tl.vms[name]),
                         "dropped": tl.flush.get(name, {}).get("dropped")}
    return out


@dataclass(frozen=True)
class Budget:
    """A matrix's share of the 2-core machine, two emulators at once (docs/linux.md, "Running
    a matrix"): reps per boot (the first a warm-up), boots per cell and per claim cell, the
    claim cells' keys, cut(key): why a cell is left out (None: it runs), and what a boot
    takes in wall seconds with another emulator beside it: boot_s without its workload, rep_s
    per repetition (from the measured boots in docs/linux.md)."""
    reps: int
    boots: int
    claim_boots: int
    claims: tuple
    cut: object
    boot_s: int
    rep_s: int

    def seconds(self, reps):
        return self.boot_s + reps * self.rep_s


def repetition_count(a, budget):
    """Repetitions per boot: --reps, else the budget's under --full, else 1 (make bench)."""
    return a.reps or (budget.reps if a.full else 1)


def budget_cell(bench, a, budget, key, flags, measure, reps, runs=None):
    """The bench Cell of a matrix cell: under --full, --runs seeded boots if given, else the
    budget's (more for a claim cell); without, runs (make bench's count) or --runs."""
    if not a.full:
        boots = runs if runs is not None else a.runs
    elif a.runs_given:
        boots = a.runs
    else:
        boots = budget.claim_boots if key in budget.claims else budget.boots
    return bench.Cell(flags, measure, bench.seeded(boots, a), reps, budget.seconds(reps))


def budget_matrix(bench, a, budget, metric, cut):
    """The scenario's Matrix under --full (its boots recorded, --resume), None otherwise."""
    return bench.Matrix(metric, budget.claims, cut) if a.full else None


def per_rep(vms, fields):
    """A boot's repetitions from its VMs' (parse_* "reps"): per repetition, each field's
    maximum over the VMs (the slower VM decides) and each VM's own."""
    counts = {len(v["reps"]) for v in vms.values()}
    if len(counts) != 1:
        return None
    return [{**{f: max(v["reps"][i][f] for v in vms.values()) for f in fields},
             "vms": {name: v["reps"][i] for name, v in vms.items()}}
            for i in range(counts.pop())]


def scenarios(bench):
    """The Linux scenarios for tools/bench.py --full: each cell of linux_cells() as a bench
    Cell with --runs seeded runs; tables of the medians [95% CI] and the ratios."""
    def make(workload, policies, baseline, lower_better_note):
        def scenario(a):
            budget = BUDGETS[f"linux-{workload}"]
            reps = repetition_count(a, budget)
            cells, cut = {}, {}
            for c in linux_cells(timeout_s=1800, reps=reps):
                key = (c.layout, c.lock, c.policy)
                why = budget.cut(key)
                if c.workload != workload or why:
                    if why and c.workload == workload:
                        cut[key] = why
                    continue
                flags = list(c.flags) + ["--timeout", str(c.timeout_s)]
                if workload == "hackbench":
                    flags = bench.with_hv_args(flags, HACKBENCH_TRACE)

                def measure(c=c, flags=flags):
                    log, rundir = bench.boot(c.name, flags, c.guests)
                    got = c.parse(log)
                    if not got["ok"]:
                        return None, f"{got['error']} (see {os.path.relpath(rundir, ROOT)})"
                    fields = ("seconds",) if workload == "hackbench" else ("avg_us", "max_us")
                    value = {"reps": per_rep(got["vms"], fields)}
                    if value["reps"] is None:
                        return None, f"the VMs ran their workload unequally (see {rundir})"
                    if workload == "hackbench":
                        value["window"] = window_report(log, c.vms)
                    return value, ""
                cells[key] = budget_cell(bench, a, budget, key, flags, measure, reps)

            def table(got):
                field = "seconds" if workload == "hackbench" else "avg_us"
                head = ["layout, lock"] + [p for p, _ in policies] + \
                    [f"{p} / {baseline}" for p, _ in policies if p != baseline]
                if workload == "hackbench":
                    head.append("vcpu_id / last_boosted")
                rows, chart, ok = [], {p: [] for p, _ in policies}, True
                for layout, _ in LAYOUTS:
                    for lock, *_ in LOCKS:
                        row = [f"{layout}, {lock}"]
                        for p, _ in policies:
                            runs = got.get((layout, lock, p))
                            est, text = bench.summary(runs, lambda v: v[field], 2) if runs \
                                else (None, "cut")
                            ok = ok and (est is not None or runs is None)
                            chart[p].append(est.value if est else None)
                            row.append(text)

                        def ratio(p, q):
                            runs, base = got.get((layout, lock, p)), got.get((layout, lock, q))
                            return bench.ratio(runs, base, lambda v: v[field]) \
                                if runs and base else ""
                        row += [ratio(p, baseline) for p, _ in policies if p != baseline]
                        if workload == "hackbench":
                            row.append(ratio(SPIN_POLICIES[3][0], SPIN_POLICIES[2][0]))
                        rows.append(row)
                return bench.Table(
                    f"Linux on Bochs corei7_skylake_x, 4 CPUs, 8 vCPUs (2x), `{workload}`: "
                    f"{field} per policy, the median of the runs [95% CI], and the ratios of the "
                    f"medians [95% CI] ({lower_better_note}); {reps} runs of the workload per "
                    "boot, the first a warm-up", head, rows, [r[0] for r in rows], chart, ok)
            metric = ("hackbench s", lambda v: v["seconds"], 2) if workload == "hackbench" \
                else ("cyclictest avg us", lambda v: v["avg_us"], 1)
            return bench.Scenario(f"linux-{workload}", cells, table,
                                  budget_matrix(bench, a, budget, metric, cut))
        return scenario
    return [("linux-pivot", lambda a: pivot_scenario(bench, a)),
            ("linux-pv", lambda a: pv_scenario(bench, a)),
            ("linux-pv-4x", lambda a: pv4x_scenario(bench, a)),
            ("linux-timer", lambda a: timer_scenario(bench, a)),
            ("linux-hackbench", make("hackbench", SPIN_POLICIES, SPIN_POLICIES[0][0],
                                     "seconds: lower is better")),
            ("linux-cyclictest", make("cyclictest", HALT_POLICIES, HALT_POLICIES[0][0],
                                      "mean wake-up latency in us: lower is better"))] + \
        [(name, lambda a, f=f: f(bench, a)) for name, f in SEED_SCENARIOS]


# ---- KVM's PV scheduling interfaces (issue 23's Benchmark, docs/linux.md): hackbench in one
# 8-vCPU VM on 4 CPUs (2x), the guest's three spinlocks crossed with the PAUSE-exit policies
# (pv= offers only what the lock needs) and with the full PV set the lock allows.
# (label, the VM's pv= for the PAUSE-exit columns, for the full-PV column, kernel words,
# the spinlock the init script must report)
PV_LOCKS = (
    ("test-and-set virt_spin_lock", "none", "steal_time,pv_sched_yield,pv_tlb_flush,pv_send_ipi",
     "", "virt_spin_lock"),
    ("native qspinlock (`nopvspin`)", "none", "all", "+nopvspin", "qspinlock"),
    ("PV qspinlock (`pv_unhalt`)", "pv_unhalt", "all", "", "pv_qspinlock"),
)
PV_SET = "full PV set"
PV_POLICIES = SPIN_POLICIES + ((PV_SET, ""),)
# The claim: the PV interfaces together (the PV lock and everything else) against today's
# Linux under pollux, PAUSE-exit directed yield with the default pivot on test-and-set.
PV_CLAIM = ((PV_LOCKS[2][0], PV_SET), (PV_LOCKS[0][0], SPIN_POLICIES[3][0]))
PV_WORKLOAD = "hackbench:4:20"
PV_LAYOUT = LAYOUTS[0]


def vm_lx_cell(bench, a, budget, key, c, reps):
    """The bench Cell of a matrix cell whose one VM, lx, runs c's workload: each boot's
    value is lx's repetitions."""
    flags = list(c.flags) + ["--timeout", str(c.timeout_s)]

    def measure():
        log, rundir = bench.boot(c.name, flags, c.guests)
        got = c.parse(log)
        if not got["ok"]:
            return None, f"{got['error']} (see {os.path.relpath(rundir, ROOT)})"
        return {"reps": got["vms"]["lx"]["reps"]}, ""
    return budget_cell(bench, a, budget, key, flags, measure, reps)


def pv_cell(lock, policy, timeout_s=1800, reps=1):
    """One linux-pv Cell: lock a PV_LOCKS entry, policy a PV_POLICIES one."""
    label, pv_ple, pv_all, words, spinlock = lock
    policy_label, options = policy
    pv = pv_all if policy_label == PV_SET else pv_ple
    c = cell(PV_WORKLOAD, PV_LAYOUT, (label, f":pv={pv}", words, spinlock), policy, timeout_s,
             reps)
    slug = {"none": "none", "all": "all", "pv_unhalt": "unhalt"}.get(pv, "allbutunhalt")
    return Cell(f"{c.name}-pv-{slug}", c.workload, c.layout, label, policy_label, c.flags,
                c.guests, c.vms, spinlock, timeout_s, reps)


# ---- The PV kick's regime (issue 35, item 5): linux-pv found no difference with PLE on at
# 2x because no PV qspinlock waiter ever halted (pv_kicks 0). At 4x, one 8-vCPU VM on 2
# CPUs, a waiter's vCPU is more often preempted behind a preempted holder, which is where
# the PV lock's halt and kick can beat PAUSE exits; hackbench and the ebizzy-shaped workload
# (mmap and page-fault locks, TLB shootdowns). The kernel is Debian's: the critical sections
# are its own, so "longer critical sections" is out of reach without changing the guest.
PV4X_WORKLOADS = ("hackbench:4:20", "ebizzy:5")
PV4X_CELLS = ((PV_LOCKS[0], SPIN_POLICIES[3]), (PV_LOCKS[1], SPIN_POLICIES[3]),
              (PV_LOCKS[2], (PV_SET, "")))
PV4X_CPUS = 2
PV4X_CLAIMS = tuple((w, *c) for w in PV4X_WORKLOADS for c in PV_CLAIM)


def pv4x_cell(workload, lock, policy, reps):
    """One linux-pv-4x Cell: a pv_cell with workload, on PV4X_CPUS CPUs."""
    c = pv_cell(lock, policy, reps=reps)
    guests = c.guests.replace(f"workload={','.join([PV_WORKLOAD] * reps)}",
                              f"workload={','.join([workload] * reps)}")
    flags = list(c.flags)
    flags[flags.index("--smp") + 1] = str(PV4X_CPUS)
    kind = workload.split(":")[0]
    return Cell(c.name.replace("hackbench", kind) + "-4x", kind, c.layout, c.lock, c.policy,
                tuple(flags), guests, c.vms, c.spinlock, c.timeout_s, reps)


def pv4x_scenario(bench, a):
    budget = BUDGETS["linux-pv-4x"]
    reps = repetition_count(a, budget)
    cells = {}
    for workload in PV4X_WORKLOADS:
        for lock, policy in PV4X_CELLS:
            c = pv4x_cell(workload, lock, policy, reps)
            key = (workload, c.lock, c.policy)
            cells[key] = vm_lx_cell(bench, a, budget, key, c, reps)

    def table(got):
        labels = [f"{lock[0]}, {policy[0]}" for lock, policy in PV4X_CELLS]
        head = ["workload"] + labels + ["PV kicks per run", "claim: PV / test-and-set"]
        rows, chart, ok = [], {label: [] for label in labels}, True
        for workload in PV4X_WORKLOADS:
            field = WORK_FIELDS[workload.split(":")[0]]
            row = [f"`{workload}` ({field})"]
            for label, (lock, policy) in zip(labels, PV4X_CELLS):
                runs = got.get((workload, lock[0], policy[0]))
                est, text = bench.summary(runs, lambda v: v[field], 2) if runs else (None, "")
                ok = ok and est is not None
                chart[label].append(est.value if est else None)
                row.append(text)
            pv_runs = got.get((workload, *PV_CLAIM[0]))
            kicks = [r["stats"]["pv_kicks"] for run in (pv_runs or ()) if run.value
                     for r in run.value["reps"][1:]]
            row.append(f"{statistics.median(kicks):.0f} ({min(kicks)}-{max(kicks)})"
                       if kicks else "")
            claim, base = got.get((workload, *PV_CLAIM[0])), got.get((workload, *PV_CLAIM[1]))
            row.append(bench.ratio(claim, base, lambda v: v[field]) if claim and base else "")
            rows.append(row)
        return bench.Table(
            f"The PV kick's regime: Linux on Bochs corei7_skylake_x, {PV4X_CPUS} CPUs, one "
            "8-vCPU VM (4x), each workload "
            f"{reps} times per boot (the first a warm-up): the median of the boots' runs [95% "
            "CI] (hackbench seconds: lower is better; ebizzy records/s: higher is better), the "
            "PV qspinlock's kicks per measured run, and the claim's ratio of the medians "
            "[95% CI] (the 1.3x goal: at most 0.77 for hackbench, at least 1.3 for ebizzy)",
            head, rows, [r[0] for r in rows], chart, ok)
    return bench.Scenario("linux-pv-4x", cells, table, budget_matrix(
        bench, a, budget, ("hackbench s / ebizzy records/s",
                           lambda v: v.get("seconds", v.get("records_per_s")), 2), {}))


def pv_scenario(bench, a):
    budget = BUDGETS["linux-pv"]
    reps = repetition_count(a, budget)
    cells, cut = {}, {}
    for lock in PV_LOCKS:
        for policy in PV_POLICIES:
            c = pv_cell(lock, policy, reps=reps)
            key = (c.lock, c.policy)
            if budget.cut(key):
                cut[key] = budget.cut(key)
                continue
            cells[key] = vm_lx_cell(bench, a, budget, key, c, reps)

    def table(got):
        head = ["lock"] + [p for p, _ in PV_POLICIES] + [f"{PV_SET} / {SPIN_POLICIES[3][0]}"]
        rows, chart, ok = [], {p: [] for p, _ in PV_POLICIES}, True
        for lock, *_ in PV_LOCKS:
            row = [lock]
            for p, _ in PV_POLICIES:
                runs = got.get((lock, p))
                est, text = bench.summary(runs, lambda v: v["seconds"], 2) if runs else \
                    (None, "")
                ok = ok and (est is not None or runs is None)
                chart[p].append(est.value if est else None)
                row.append(text)
            pv_all, dy = got.get((lock, PV_SET)), got.get((lock, SPIN_POLICIES[3][0]))
            row.append(bench.ratio(pv_all, dy, lambda v: v["seconds"]) if pv_all and dy else "")
            rows.append(row)
        claim, base = got.get(PV_CLAIM[0]), got.get(PV_CLAIM[1])
        if claim and base:
            rows.append([f"the claim: {PV_CLAIM[0][0]}, {PV_CLAIM[0][1]} / {PV_CLAIM[1][0]}, "
                         f"{PV_CLAIM[1][1]}", bench.ratio(claim, base, lambda v: v["seconds"])] +
                        [""] * len(PV_POLICIES))
        return bench.Table(
            "KVM's PV scheduling interfaces: Linux on Bochs corei7_skylake_x, 4 CPUs, one 8-vCPU "
            f"VM (2x), `hackbench -g 4 -l 20`, {reps} times per boot (the first a warm-up): "
            "seconds per spinlock and policy, the median of the boots' runs [95% CI], and ratios "
            "of the medians [95% CI] (lower is better; the goal: the claim's ratio at most "
            "1/1.3 = 0.77)",
            head, rows, [r[0] for r in rows[:len(PV_LOCKS)]], chart, ok)
    return bench.Scenario("linux-pv", cells, table, budget_matrix(
        bench, a, budget, ("hackbench s", lambda v: v["seconds"], 2), cut))


# The hackbench question (docs/directed_yield.md): the configuration where QEMU once showed
# last_boosted ahead of vcpu_id, now on Bochs: 4 vCPUs on 2 CPUs, hackbench, each pivot.
PIVOT_PLATFORM = ("--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "2")
PIVOT_POLICIES = (SPIN_POLICIES[2], SPIN_POLICIES[3])


def pivot_scenario(bench, a):
    budget = BUDGETS["linux-pivot"]
    reps = repetition_count(a, budget)
    cells = {}
    for label, options in PIVOT_POLICIES:
        # The default ring of 4096 records: the window's last records, a sample (dropped says
        # how much is missing), at half the console time of HACKBENCH_TRACE's.
        flags = bench.with_hv_args(list(PIVOT_PLATFORM) + ["--timeout", "1800"],
                                   f"{options} trace=sched trace_window=marker".strip())
        c = cell("hackbench:4:20", ("one 4-vCPU VM", (("lx", 4),)), LOCKS[0],
                 (label, options), 1800, reps)

        def measure(c=c, flags=flags):
            log, rundir = bench.boot(c.name + "-2cpu", flags, c.guests)
            got = c.parse(log)
            if not got["ok"]:
                return None, f"{got['error']} (see {os.path.relpath(rundir, ROOT)})"
            return {"reps": got["vms"]["lx"]["reps"],
                    "window": window_report(log, c.vms)["lx"]}, ""
        cells[label] = budget_cell(bench, a, budget, label, flags, measure, reps)

    def table(got):
        keys = ("spins", "boosts", "repeat_boosts", "vm_repeat_boosts", "cross_cpu_takes",
                "handoffs_under_1ms", "handoffs_measured", "dropped")
        head = ["pivot", "hackbench s"] + [f"{k} (median)" for k in keys]
        rows, chart, ok = [], {"hackbench s": []}, True
        for label, _ in PIVOT_POLICIES:
            runs = got[label]
            est, text = bench.summary(runs, lambda v: v["seconds"], 2)
            ok = ok and est is not None
            chart["hackbench s"].append(est.value if est else None)
            cols = [f"{statistics.median(r.value['window'][k] or 0 for r in runs):g}"
                    if est else "" for k in keys]
            rows.append([label, text] + cols)
        vcpu_id, last = got[PIVOT_POLICIES[1][0]], got[PIVOT_POLICIES[0][0]]
        rows.append(["vcpu_id / last_boosted",
                     bench.ratio(vcpu_id, last, lambda v: v["seconds"])] + [""] * len(keys))
        return bench.Table(
            "The hackbench question: Linux (`pv=none`, test-and-set virt_spin_lock), 4 vCPUs on "
            "2 CPUs of Bochs corei7_skylake_x, `hackbench -g 4 -l 20`: its seconds per pivot, "
            f"the median [95% CI] of {reps} runs per boot (the first a warm-up), the ratio (lower "
            "is better), and per boot, from the trace windows of all its runs (tools/"
            "yield_report.py), the medians of spins, boosts, boosts of the "
            "target the same spinner boosted last (repeat) or the VM boosted last, takes from "
            "another CPU, hand-offs that ended within 1 ms, and records dropped",
            head, rows, [r[0] for r in rows[:-1]], chart, ok)
    return bench.Scenario("linux-pivot", cells, table, budget_matrix(
        bench, a, budget, ("hackbench s", lambda v: v["seconds"], 2), {}))


# ---- virtio-net round trips (docs/virtio.md, "Benchmark"): the seeds' guest-to-guest table.
# Two 1-vCPU Linux VMs on one switch, each pinned to its own CPU: the client idles, then runs
# sockperf ping-pong (UDP, then TCP) against the server. The init script's marks around each
# phase print a round of the client's records (docs/console.md), so a phase's counts are the
# difference of two rounds.
NET_SECONDS = 3  # of each sockperf run (sockperf drops about 1.2 s of each: docs/linux.md)
NET_IDLE_S = 2
NET_BOCHS = ("--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "2", "--mem", "768")
NET_QEMU = ("--emu", "qemu", "--smp", "2", "--mem", "768", "--args", "watchdog_ms=10000")
# Bochs' deterministic C-state model (docs/halt_polling.md): a halted CPU's wake-up costs this.
NET_IDLE_EXIT_US = 133
# The polling window. KVM's default 200 us is for hardware, where this round trip takes tens
# of us; under Bochs every exit costs microseconds of guest time and the round trip about
# 770 us (a side waits some 400 us for its answer), so no 200 us poll could catch it (measured:
# every policy alike). 2 ms puts the wait inside the window, as on hardware.
NET_HALT_POLL_NS = 2000000
# (label, pollux options, the client's and server's extra kernel words)
NET_POLICIES = (
    ("`halt_poll_ns=0`", "halt_poll_ns=0", ""),
    ("fixed", f"halt_poll_mode=fixed halt_poll_ns={NET_HALT_POLL_NS}", ""),
    ("adaptive (default rules)", f"halt_poll_ns={NET_HALT_POLL_NS}", ""),
    ("predict", f"halt_poll_mode=predict halt_poll_ns={NET_HALT_POLL_NS}", ""),
    ("guest cpuidle-haltpoll", "",
     f"+cpuidle_haltpoll.force=1+haltpoll.guest_halt_poll_ns={NET_HALT_POLL_NS}"),
    # The control of seed 002's explanation (docs/seeds.md): a guest that polls at every idle
    # and never halts, with no host polling to mistake for it.
    ("guest `idle=poll`", "halt_poll_ns=0", "+idle=poll"),
    # Linux's transmit path without interrupts: it reclaims sent buffers at its next transmit
    # (and its ring's end), so a round trip takes one interrupt per side, the floor.
    ("adaptive, guest `virtio_net.napi_tx=0`", f"halt_poll_ns={NET_HALT_POLL_NS}",
     "+virtio_net.napi_tx=0"),
)
# The devices whose pages the client's npf exits reach, per round trip (npf_exits).
NET_NPF_DEVICES = ("virtio-net", "lapic")
NET_EXIT_REASONS = ("npf", "msr_write", "msr_read", "io", "hlt", "external_interrupt",
                    "preemption_timer", "cpuid")


def guest_slug(words):
    """A run directory's word for the guest's extra kernel words."""
    if not words:
        return "host"
    if "idle=poll" in words:
        return "idlepoll"
    return "napitx0" if "napi_tx=0" in words else "guesthp"


def net_guests(words, reps=1):
    """The server, and the client: idle, then reps sockperf runs (the server serves until
    the client's chain ends)."""
    client = ",".join([f"net-client:10.0.0.1:{NET_SECONDS}"] * reps)
    return (f"linux:name=srv:pin=0:net=lan0:args=workload=net-server{words} "
            f"linux:name=cli:pin=1:net=lan0:args=workload=idle:{NET_IDLE_S},{client}{words}")


def parse_net(log):
    """{"ok", "error", "reps": per net-client of the client's chain, {udp/tcp {median_us,
    p99_us, mean_us, count}; idle_poll_ms_per_s (the client's host polling while the pair
    idled, before the first: the same in every repetition); per_rt: exits by reason,
    notifies and interrupts per round trip over its sockperf window (both protocols);
    guest_poll, when the init script reported its cpuidle states: the governor and the
    guest's POLL state's entries per round trip and its share of the window}}."""
    errors = []
    stop = {e["vm"]: e["reason"] for e in log.all("vm_stop")}
    if stop != {"srv": "poweroff", "cli": "poweroff"}:
        errors.append(f"VM stops {stop}")
    items = chain(log, "cli")
    if isinstance(items, str):
        return {"ok": False, "error": "; ".join(errors + [items])}
    idle = [i for i in items if i["workload"].startswith("idle")]
    clients = [i for i in items if i["workload"].startswith("net-client")]
    if len(idle) != 1 or not clients:
        errors.append(f"the client's chain {[i['workload'] for i in items]}")
    reps = []
    polls = guest_polls(items)
    for n, item in enumerate(clients):
        bench = {e["proto"]: e.body for e in item["bench"] if e.get("op") == "sockperf"}
        if sorted(bench) != ["tcp", "udp"]:
            errors.append(f"sockperf results {sorted(bench)} in repetition {n}")
        reps.append((item, bench))
    if errors:
        return {"ok": False, "error": "; ".join(errors)}
    (idle0, _), (idle1, _) = idle[0]["start"], idle[0]["end"]
    idle_s = delta(idle1, idle0, "t") / 1e9
    polled_ns = delta(idle1, idle0, "halt_poll_success_ns") + delta(idle1, idle0,
                                                                    "halt_poll_fail_ns")
    out = []
    for item, bench in reps:
        (net0, dev0), (net1, dev1) = item["start"], item["end"]
        rts = bench["udp"]["count"] + bench["tcp"]["count"]
        exits = delta(net1, net0, "exits")
        net0d, net1d = dev0.get("virtio-net", {}), dev1.get("virtio-net", {})
        per_rt = {k: exits.get(k, 0) / rts for k in NET_EXIT_REASONS}
        per_rt["all"] = sum(exits.values()) / rts
        npf = delta(net1, net0, "npf_exits")
        per_rt.update({f"npf:{d}": npf.get(d, 0) / rts for d in NET_NPF_DEVICES})
        per_rt["notifies"] = delta(net1d, net0d, "notifies") / rts
        per_rt["interrupts"] = delta(net1d, net0d, "interrupts") / rts
        got = {**{p: {k: bench[p][k] for k in ("median_us", "p99_us", "mean_us", "count")}
                  for p in ("udp", "tcp")},
               "idle_poll_ms_per_s": polled_ns / 1e6 / idle_s if idle_s > 0 else 0.0,
               "per_rt": per_rt}
        poll = polls.get(id(item))
        if poll:
            window_us = delta(net1, net0, "t") / 1e3
            got["guest_poll"] = {"governor": poll["governor"],
                                 "entries_per_rt": poll["usage"] / rts,
                                 "share": poll["time_us"] / window_us if window_us else 0.0}
        out.append(got)
    return {"ok": True, "error": "", "reps": out}


def guest_polls(items):
    """id(chain item) -> the guest's POLL cpuidle state over that item ({governor, usage,
    time_us}: the difference of the init script's cumulative cpuidle lines after it and after
    the item before it), for the items after the first that have them."""
    def poll(item):
        return next((e.body for e in item["bench"] if e.get("op") == "cpuidle" and
                     e.get("state") == "POLL"), None)
    out = {}
    for before, item in zip(items, items[1:]):
        a, b = poll(before), poll(item)
        if a and b:
            out[id(item)] = {"governor": b["governor"], "usage": b["usage"] - a["usage"],
                             "time_us": b["time_us"] - a["time_us"]}
    return out


def net_scenario(bench, a):
    """The round trip per halt-polling policy: on Bochs with and without the C-state model,
    and on QEMU TCG for information (cut by the budget). Without --full only the claim's
    cells (fixed, adaptive, no polling; C-state model on) run, --scan-runs times each: a boot
    of two Linux VMs costs about 4.5 minutes of Bochs, and make bench has 30 minutes in all;
    bench-full runs the matrix of BUDGETS["linux-net"], each boot's sockperf several times."""
    settings = [("bochs", idle) for idle in (NET_IDLE_EXIT_US, 0)] + [("qemu", 0)]
    budget = BUDGETS["linux-net"]
    reps = repetition_count(a, budget)
    cells, cut = {}, {}
    for platform, idle in settings:
        for label, options, words in NET_POLICIES:
            key = (platform, idle, label)
            if not a.full and key not in budget.claims:
                continue
            if a.full and budget.cut(key):
                cut[key] = budget.cut(key)
                continue
            hv = " ".join(w for w in (options, f"idle_exit_latency_us={idle}" if idle else "")
                          if w)
            base = list(NET_BOCHS if platform == "bochs" else NET_QEMU)
            flags = bench.with_hv_args(base, hv) if hv else base
            name = "-".join(["linux-net", platform, f"c{idle}",
                             (options or "default").replace("=", "-").replace(" ", "-"),
                             guest_slug(words)])

            def measure(name=name, flags=flags, words=words):
                log, rundir = bench.boot(name, flags, net_guests(words, reps))
                got = parse_net(log)
                if not got["ok"]:
                    return None, f"{got['error']} (see {os.path.relpath(rundir, ROOT)})"
                return {"reps": got["reps"]}, ""
            cells[key] = budget_cell(bench, a, budget, key, flags, measure, reps, a.scan_runs)

    def table(got):
        head = ["platform, policy", "UDP median us", "UDP p99 us", "TCP median us",
                "TCP p99 us", "UDP / fixed", "UDP / no polling", "idle polling ms/s",
                "exits per round trip (npf, msr_write, hlt, all)",
                "npf per RT (virtio-net, lapic)", "notifies, interrupts / RT"]
        rows, chart, ok = [], {"UDP median us": []}, True
        for platform, idle in settings:
            where = ("Bochs" + (f", `idle_exit_latency_us={idle}`" if idle else "")
                     if platform == "bochs" else "QEMU TCG (information)")
            for label, _, _ in NET_POLICIES:
                runs = got.get((platform, idle, label))
                if runs is None:
                    continue
                est, text = bench.summary(runs, lambda v: v["udp"]["median_us"], 1)
                chart["UDP median us"].append(est.value if est else None)
                if not est:
                    ok = False
                    rows.append([f"{where}, {label}", text] + [""] * 9)
                    continue
                fixed = got.get((platform, idle, "fixed"))
                off = got.get((platform, idle, "`halt_poll_ns=0`"))
                pick = lambda v: v["udp"]["median_us"]  # noqa: E731
                med = lambda f: statistics.median(bench.pooled(runs, f))  # noqa: E731
                rows.append([
                    f"{where}, {label}", text,
                    bench.summary(runs, lambda v: v["udp"]["p99_us"], 1)[1],
                    bench.summary(runs, lambda v: v["tcp"]["median_us"], 1)[1],
                    bench.summary(runs, lambda v: v["tcp"]["p99_us"], 1)[1],
                    bench.ratio(runs, fixed, pick) if fixed and len(runs) > 1 else "",
                    bench.ratio(runs, off, pick) if off and len(runs) > 1 else "",
                    bench.summary(runs, lambda v: v["idle_poll_ms_per_s"], 1)[1],
                    ", ".join(f"{med(lambda v, k=k: v['per_rt'][k]):.2f}"
                              for k in ("npf", "msr_write", "hlt", "all")),
                    ", ".join(f"{med(lambda v, k=k: v['per_rt'].get(k, 0)):.2f}"
                              for k in (f"npf:{d}" for d in NET_NPF_DEVICES)),
                    f"{med(lambda v: v['per_rt']['notifies']):.2f}, "
                    f"{med(lambda v: v['per_rt']['interrupts']):.2f}"])
        return bench.Table(
            "virtio-net round trips between two 1-vCPU Linux VMs on one switch (each on its own "
            f"CPU; sockperf ping-pong --full-rtt, {NET_SECONDS} s of UDP then of TCP): per "
            f"halt-polling policy (window `halt_poll_ns={NET_HALT_POLL_NS}`), the median of the "
            "runs [95% CI] of the round trip's median "
            "and p99 in guest us, the ratio of the UDP medians [95% CI] to fixed polling's and "
            "to no polling's, the client's host polling while the pair idles, and the client's "
            "exits (the npf ones also by device), notifies and interrupts per round trip (the "
            "medians of the runs); "
            + " or ".join(str(n) for n in sorted({len(c.seeds) for k, c in cells.items()
                                                   if k[0] == "bochs"}))
            + f" seeded boots per Bochs cell, {reps} sockperf runs per boot"
            + (" (the first a warm-up)" if reps > 1 else ""),
            head, rows, [r[0] for r in rows], chart, ok)
    return bench.Scenario("linux-net", cells, table, budget_matrix(
        bench, a, budget, ("UDP median us", lambda v: v["udp"]["median_us"], 1), cut))


# ---- KVM's timer advance (issue 34 item 4, docs/timers.md): cyclictest in one 2-vCPU VM on
# Bochs corei7_skylake_x with 2 CPUs, per timer_advance_ns=; the advance moves TSC-deadline
# wake-ups (Linux's high-resolution timers) from the deadline plus an exit and an entry to the
# deadline, at the cost of a wait with interrupts off.
TIMER_ADVANCES = (
    ("off (`timer_advance_ns=0`)", "timer_advance_ns=0"),
    ("adaptive (`-1`, KVM's default)", "timer_advance_ns=-1"),
)
TIMER_WORKLOAD = "cyclictest:2:1000"
TIMER_PLATFORM = ("--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "2")


def timer_value(vm):
    """What a linux-timer table shows of one boot, per repetition: cyclictest's latencies and
    pollux's between the repetition's marks (its lateness per timer interrupt, the advance's
    waits); and the advance per vCPU at the end (@vm_stop)."""
    reps = [{**{k: r[k] for k in ("p50_us", "p99_us", "avg_us", "max_us", "samples")},
             "late_mean_ns": r["stats"]["timer_late_ns"] / max(r["stats"]["timer_interrupts"], 1),
             "wait_ms": r["stats"]["timer_advance_wait_ns"] / 1e6} for r in vm["reps"]]
    return {"reps": reps,
            "advance_ns": [t["timer"]["advance_ns"] for t in vm["stop"]["vcpus"].values()]}


def timer_scenario(bench, a, workload=TIMER_WORKLOAD):
    budget = BUDGETS["linux-timer"]
    reps = repetition_count(a, budget)
    cells = {}
    for label, options in TIMER_ADVANCES:
        flags = list(TIMER_PLATFORM) + ["--args", options, "--timeout", "1800"]
        guests = (f"linux:name=lx:vcpus=2:mem={VM_MEM}:args=workload="
                  f"{','.join([workload] * reps)}")
        name = f"linux-timer-{options.replace('=', '')}"

        def measure(name=name, flags=flags, guests=guests):
            log, rundir = bench.boot(name, flags, guests)
            got = parse_cyclictest(log, (("lx", 2),), None)
            vm = got["vms"].get("lx")
            if not got["ok"] or any(r["p50_us"] is None for r in vm["reps"]):
                return None, f"{got['error']} (see {os.path.relpath(rundir, ROOT)})"
            return timer_value(vm), ""
        cells[label] = budget_cell(bench, a, budget, label, flags, measure, reps)

    def table(got):
        base = got.get(TIMER_ADVANCES[0][0])
        head = ["timer advance", "p50 us", "p99 us", "avg us", "p50 / off", "p99 / off",
                "pollux: late ns per timer interrupt", "waited ms per run",
                "advance ns at the end"]
        rows, chart, ok = [], {"p50 us": [], "p99 us": []}, True
        for label, _ in TIMER_ADVANCES:
            runs = got.get(label)
            if not runs:  # left out by --cells
                continue
            row = [label]
            for field, digits in (("p50_us", 0), ("p99_us", 0), ("avg_us", 1)):
                est, text = bench.summary(runs, lambda v, f=field: v[f], digits)
                ok = ok and est is not None
                if field in ("p50_us", "p99_us"):
                    chart[field.replace("_", " ")].append(est.value if est else None)
                row.append(text)
            row += [bench.ratio(runs, base, lambda v, f=f: v[f])
                    if base and label != TIMER_ADVANCES[0][0] else "" for f in ("p50_us", "p99_us")]
            row += [bench.summary(runs, lambda v, f=f: v[f], d)[1]
                    for f, d in (("late_mean_ns", 0), ("wait_ms", 2))]
            row.append("; ".join(", ".join(str(n) for n in r.value["advance_ns"])
                                 for r in runs if r.value))
            rows.append(row)
        return bench.Table(
            f"KVM's timer advance: Linux on Bochs corei7_skylake_x, 2 CPUs, one 2-vCPU VM, "
            f"`{workload}` {reps} times per boot (the first a warm-up): cyclictest's wake-up "
            "latency per setting (p50, p99, mean), the median of the boots' runs [95% CI], the "
            "ratios of the medians to off [95% CI] (lower is better); pollux's lateness per "
            "timer interrupt and the advance's waits in those runs, the advance at the end per "
            "boot and vCPU", head, rows, [r[0] for r in rows], chart, ok)
    return bench.Scenario("linux-timer", cells, table, budget_matrix(
        bench, a, budget, ("cyclictest p50 us", lambda v: v["p50_us"], 0), {}))


# ---- The matrices' budgets (issue 35; docs/linux.md, "Running a matrix"): each fits its
# sessions of 2.5 hours on the 2-core machine, two emulators at once, by tools/bench.py
# --plan's arithmetic; a claim cell keeps at least 3 boots. Wall seconds per boot, with
# another emulator beside it, from the boots measured in docs/linux.md and docs/virtio.md.
NET_CLAIM = tuple(("bochs", NET_IDLE_EXIT_US, p) for p in
                  ("`halt_poll_ns=0`", "fixed", "adaptive (default rules)"))
PIVOT_LABELS = tuple(label for label, _ in PIVOT_POLICIES)
SCALE_CLAIM = tuple((LAYOUTS[0][0], LOCKS[0][0], p) for p, _ in
                    (SPIN_POLICIES[0], SPIN_POLICIES[2], SPIN_POLICIES[3]))


def net_cut(key):
    platform, idle, label = key
    if platform == "qemu":
        return ("QEMU TCG: its guest time is the host's, so a boot measures the load beside it, "
                "and it runs alone and unseeded, once: no interval can come of it")
    if not idle and label not in ("`halt_poll_ns=0`", "fixed", "adaptive (default rules)"):
        return ("without the C-state model only what polling saves matters (no polling, fixed, "
                "adaptive); predict's, the guest's polling's and napi_tx=0's questions are the "
                "C-state rows'")
    return None


def pv_cut(key):
    _, policy = key
    if policy in (SPIN_POLICIES[1][0], SPIN_POLICIES[2][0]):
        return ("the other pivots bear on no PV question (the pivots are linux-pivot's and "
                "linux-hackbench's); the PAUSE-exit side is the default pivot against ple=off")
    return None


def scale_cut(key):
    _, _, policy = key
    if policy == SPIN_POLICIES[1][0]:
        return ("spin detection without a yield target is no candidate policy; its cost is "
                "the spinlock yield matrix's question, answered there with 10 runs")
    return None


def cyclictest_cut(key):
    _, lock, _ = key
    if lock != LOCKS[0][0]:
        return ("cyclictest's threads sleep and wake and take no contended lock: the guest's "
                "spinlock is hackbench's question, and the halt-polling policies are compared "
                "under the default lock")
    return None


CYCLICTEST_CLAIM = tuple((layout, LOCKS[0][0], p) for layout, _ in LAYOUTS
                         for p, _ in HALT_POLICIES)


BUDGETS = {
    # 10 cells, 33 boots of 230 + 3 x 90 s: about 2.3 h.
    "linux-net": Budget(reps=3, boots=3, claim_boots=4, claims=NET_CLAIM, cut=net_cut,
                        boot_s=230, rep_s=90),
    # 9 cells, 31 boots of 325 + 4 x 35 s: about 2.0 h.
    "linux-pv": Budget(reps=4, boots=3, claim_boots=5, claims=PV_CLAIM, cut=pv_cut,
                       boot_s=325, rep_s=35),
    # 6 cells, 22 boots, a guess from linux-pv's: 8 vCPUs on 2 CPUs boot like 8 on 4, and a
    # repetition at 4x takes about twice as long.
    "linux-pv-4x": Budget(reps=4, boots=3, claim_boots=4, claims=PV4X_CLAIMS,
                          cut=lambda key: None, boot_s=325, rep_s=70),
    # Linux at scale, three sessions: linux-hackbench (12 cells, 39 boots of 740 + 4 x 60 s:
    # about 5.3 h, the trace's flush included) and linux-pivot (2 cells, 20 boots of 190 +
    # 5 x 20 s: about 0.8 h) and linux-cyclictest (6 cells, 18 boots of 400 + 3 x 50 s: about
    # 1.4 h).
    "linux-hackbench": Budget(reps=4, boots=3, claim_boots=4, claims=SCALE_CLAIM,
                              cut=scale_cut, boot_s=740, rep_s=60),
    "linux-pivot": Budget(reps=5, boots=10, claim_boots=10, claims=PIVOT_LABELS,
                          cut=lambda key: None, boot_s=190, rep_s=20),
    "linux-cyclictest": Budget(reps=3, boots=3, claim_boots=3, claims=CYCLICTEST_CLAIM,
                               cut=cyclictest_cut, boot_s=400, rep_s=50),
    # 2 cells, 6 boots of 190 + 3 x 25 s (2 CPUs, one 2-vCPU VM, as linux-pivot's): about
    # 0.2 h.
    "linux-timer": Budget(reps=3, boots=3, claim_boots=3,
                          claims=tuple(label for label, _ in TIMER_ADVANCES),
                          cut=lambda key: None, boot_s=190, rep_s=25),
}


# ---- The seeds' own experiments (docs/seeds.md; tools/seeds.py sets each beside the published
# number). Each boot runs a chain of workloads, the chain's words `reps` times over; a chain
# item's counters are the difference of its two mark rounds.
SEED_KEYS = ("t", "blocked_us", "wait_us", "polling_us", "halt_exits", "halt_attempted_poll",
             "halt_successful_poll", "halt_poll_success_ns", "halt_poll_fail_ns")


def host_cost(item):
    """What a chain item's window cost the host, per second of it: halt polling in ms; the
    vCPUs' CPU (running the guest or polling) in % of one CPU; halts. The CPU is the window
    less the time halted off the CPU and waiting for one: a state's time is counted when it
    ends (vcpu_stats.c), and the marking vCPU runs at both marks, so each of its halts and
    waits lies whole inside the window (exact for a 1-vCPU VM; another vCPU's stretch in
    progress at a mark counts in the window where it ends)."""
    (a, _), (b, _) = item["start"], item["end"]
    c = {k: delta(b, a, k) for k in SEED_KEYS}
    s = c["t"] / 1e9
    if s <= 0:
        return None
    cpu_us = b.get("vcpus", 1) * c["t"] / 1e3 - c["blocked_us"] - c["wait_us"]
    return {"seconds": s,
            "poll_ms_per_s": (c["halt_poll_success_ns"] + c["halt_poll_fail_ns"]) / 1e6 / s,
            "busy_pct": cpu_us / 1e4 / s,
            "halts_per_s": c["halt_exits"] / s,
            "polls_caught": c["halt_successful_poll"] / c["halt_attempted_poll"]
            if c["halt_attempted_poll"] else 0.0}


def seed_chain(log, vm, words, reps, result):
    """The VM's chain, which must be words repeated reps times: per repetition, {word:
    result(its @bench lines by op) with `host`, host_cost of its window}; or a str, what is
    wrong."""
    items = chain(log, vm)
    if isinstance(items, str):
        return items
    got = [i["workload"] for i in items]
    if got != list(words) * reps:
        return f"{vm}: chain {got}, want {list(words)} x {reps}"
    out = []
    for r in range(reps):
        rep = {}
        for n, word in enumerate(words):
            item = items[r * len(words) + n]
            value = result(word, {e["op"]: e.body for e in item["bench"]})
            cost = host_cost(item)
            if value is None or cost is None:
                return f"{vm}: no result of {word} in repetition {r}"
            rep[word] = dict(value, host=cost)
        out.append(rep)
    return out


def seed_boot(bench, name, flags, guests, check):
    """A measure() of a seed cell: boot, then check(log) -> (value, error)."""
    def measure():
        log, rundir = bench.boot(name, flags, guests)
        stop = {e["vm"]: e["reason"] for e in log.all("vm_stop")}
        if log.returncode != 0 or not stop or set(stop.values()) != {"poweroff"}:
            return None, f"run.py exited {log.returncode}, VM stops {stop} " \
                         f"(see {os.path.relpath(rundir, ROOT)})"
        value, error = check(log)
        return value, error and f"{error} (see {os.path.relpath(rundir, ROOT)})"
    return measure


# Seed 000: halt_poll_ns_shrink 0 against 2, fio on virtio-blk. (row, fio rw, block, MiB)
FIO_ROWS = (("seq-read", "read", "128k", 16), ("seq-write", "write", "128k", 16),
            ("rand-read", "randread", "4k", 2), ("rand-write", "randwrite", "4k", 2))
FIO_DISK_MIB = 16
FIO_POLICIES = (("`halt_poll_ns_shrink=0`", "halt_poll_ns_shrink=0"),
                ("`halt_poll_ns_shrink=2` (default)", ""))
SEED_BOCHS_2 = ("--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "2", "--timeout", "1800")


def fio_words():
    return tuple(f"fio:{rw}:{bs}:{mib}" for _, rw, bs, mib in FIO_ROWS)


def fio_disk():
    """The disk the fio cells write over: FIO_DISK_MIB MiB of zeros, made once."""
    path = os.path.join(ROOT, "build", "bench", "seed-fio.disk")
    if not os.path.exists(path) or os.path.getsize(path) != FIO_DISK_MIB << 20:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.truncate(FIO_DISK_MIB << 20)
    return path


def fio_result(word, ops):
    fio = ops.get("fio")
    return fio and {k: fio[k] for k in ("mb_s", "iops", "clat_median_us", "clat_p99_us")}


def shrink_scenario(bench, a):
    """Seed 000: one 2-vCPU Linux VM on 2 CPUs of Bochs VMX with a virtio-blk disk; per
    shrink policy, each fio row (MB/s, IOPS, completion latency) and what polling cost."""
    budget = BUDGETS["linux-shrink"]
    reps = repetition_count(a, budget)
    words = fio_words()
    cells = {}
    for label, options in FIO_POLICIES:
        flags = list(SEED_BOCHS_2) + (["--args", options] if options else [])
        guests = (f"linux:name=lx:vcpus=2:disk={fio_disk()}:args=workload="
                  + ",".join(words * reps))

        def check(log):
            got = seed_chain(log, "lx", words, reps, fio_result)
            return (None, got) if isinstance(got, str) else ({"reps": got}, "")
        name = f"linux-shrink-{options.replace('=', '-') or 'default'}"
        cells[label] = budget_cell(bench, a, budget, label, flags,
                                   seed_boot(bench, name, flags, guests, check), reps)

    def table(got):
        head = ["row"] + [f"{p} MB/s" for p, _ in FIO_POLICIES] + ["shrink 2 / shrink 0"] + \
            [f"{p} polling ms/s" for p, _ in FIO_POLICIES]
        rows, chart, ok = [], {p: [] for p, _ in FIO_POLICIES}, True
        for row, rw, bs, mib in FIO_ROWS:
            word = f"fio:{rw}:{bs}:{mib}"
            line = [f"{row} ({bs}, {mib} MiB)"]
            for p, _ in FIO_POLICIES:
                est, text = bench.summary(got[p], lambda v: v[word]["mb_s"], 2)
                ok = ok and est is not None
                chart[p].append(est.value if est else None)
                line.append(text)
            line.append(bench.ratio(got[FIO_POLICIES[1][0]], got[FIO_POLICIES[0][0]],
                                    lambda v: v[word]["mb_s"]))
            line += [bench.summary(got[p], lambda v: v[word]["host"]["poll_ms_per_s"], 1)[1]
                     for p, _ in FIO_POLICIES]
            rows.append(line)
        return bench.Table(
            "Seed 000: fio (psync, O_DIRECT, queue depth 1) on virtio-blk in one 2-vCPU Linux "
            "VM on 2 CPUs of Bochs corei7_skylake_x, per `halt_poll_ns_shrink`: MB/s, the "
            f"median [95% CI] of {reps} runs per boot (the first a warm-up), the ratio (higher "
            "is better), and the host's halt polling per second of each run",
            head, rows, [r[0] for r in rows], chart, ok)
    return bench.Scenario("linux-shrink", cells, table, budget_matrix(
        bench, a, budget, ("seq-read MB/s", lambda v: v[words[0]]["mb_s"], 2), {}))


# Seed 001: what an idle guest costs the host per polling policy, ticking at 250 Hz
# (`nohz=off`, as the seed's guest did) and tickless. One 1-vCPU VM pinned to CPU 1, idle.
IDLE_SECONDS = 5
IDLE_TICKS = (("250 Hz tick (`nohz=off`)", "+nohz=off"), ("tickless (NOHZ)", ""))
IDLE_POLICIES = (("`halt_poll_ns=0`", "halt_poll_ns=0"), ("fixed", "halt_poll_mode=fixed"),
                 ("adaptive (default)", ""))


def idle_scenario(bench, a):
    """Seed 001's idle rows: per tick and polling policy (KVM's default 200 us window), the
    host CPU the idle vCPU takes (running it or polling), in % of its CPU."""
    budget = BUDGETS["linux-idle"]
    reps = repetition_count(a, budget)
    word = f"idle:{IDLE_SECONDS}"
    cells = {}
    for tick, words in IDLE_TICKS:
        for label, options in IDLE_POLICIES:
            key = (tick, label)
            flags = list(SEED_BOCHS_2) + (["--args", options] if options else [])
            guests = (f"linux:name=lx:vcpus=1:pin=1:args=workload="
                      + ",".join([word] * reps) + words)

            def check(log, ticking=bool(words)):
                # The regime, as the guest reports it: nohz=off leaves no CPU in the tickless
                # idle of high-resolution mode (docs/linux.md, "Timers").
                found = [e for e in log.all("bench") if e.vm == "lx" and e.get("op") == "found"]
                nohz = found[0].get("nohz_cpus") if found else None
                if nohz != (0 if ticking else 1):
                    return None, f"lx: nohz_cpus {nohz}, want {0 if ticking else 1}"
                got = seed_chain(log, "lx", (word,), reps,
                                 lambda w, ops: {} if "idle" in ops else None)
                if isinstance(got, str):
                    return None, got
                return {"reps": [r[word]["host"] for r in got]}, ""
            name = "-".join(["linux-idle", "hz250" if words else "nohz",
                             options.replace("=", "-") or "default"])
            cells[key] = budget_cell(bench, a, budget, key, flags,
                                     seed_boot(bench, name, flags, guests, check), reps)

    def table(got):
        head = ["tick"] + [f"{p} % CPU" for p, _ in IDLE_POLICIES] + \
            [f"{p} polling ms/s" for p, _ in IDLE_POLICIES] + ["halts/s (no polling)"]
        rows, chart, ok = [], {p: [] for p, _ in IDLE_POLICIES}, True
        for tick, _ in IDLE_TICKS:
            line = [tick]
            for p, _ in IDLE_POLICIES:
                est, text = bench.summary(got[(tick, p)], lambda v: v["busy_pct"], 2)
                ok = ok and est is not None
                chart[p].append(est.value if est else None)
                line.append(text)
            line += [bench.summary(got[(tick, p)], lambda v: v["poll_ms_per_s"], 1)[1]
                     for p, _ in IDLE_POLICIES]
            line.append(bench.summary(got[(tick, IDLE_POLICIES[0][0])],
                                      lambda v: v["halts_per_s"], 0)[1])
            rows.append(line)
        return bench.Table(
            f"Seed 001: an idle 1-vCPU Linux VM pinned to a CPU of Bochs corei7_skylake_x, "
            f"{IDLE_SECONDS} s idle {reps} times per boot (the first a warm-up): the host CPU "
            "its vCPU takes (running the guest or polling, % of the CPU), the host's halt "
            "polling, and its halts, per tick and policy, the median [95% CI]",
            head, rows, [r[0] for r in rows], chart, ok)
    return bench.Scenario("linux-idle", cells, table, budget_matrix(
        bench, a, budget, ("% CPU", lambda v: v["busy_pct"], 2), {}))


# Seed 003: the directed-yield pivot under ebizzy (records/s) and hackbench, at 1x (one 4-vCPU
# VM on 4 CPUs) and 2x (two, running the same workload at once), test-and-set spinlock.
EBIZZY_SECONDS = 5
EBIZZY_LAYOUTS = (("1x: one 4-vCPU VM", (("lx", 4),)), ("2x: two 4-vCPU VMs", LAYOUTS[1][1]))
EBIZZY_POLICIES = (SPIN_POLICIES[2], SPIN_POLICIES[3], SPIN_POLICIES[0])
EBIZZY_WORKLOADS = (f"ebizzy:{EBIZZY_SECONDS}", "hackbench:4:20")
EBIZZY_CLAIM = tuple((w, layout, p) for w in EBIZZY_WORKLOADS[:1] for layout, _ in
                     EBIZZY_LAYOUTS for p, _ in EBIZZY_POLICIES[:2])


def ebizzy_result(word, ops):
    if word.startswith("ebizzy"):
        return ops.get("ebizzy") and {"records_per_s": ops["ebizzy"]["records_per_s"]}
    return ops.get("hackbench") and {"seconds": ops["hackbench"]["seconds"]}


def ebizzy_cut(key):
    workload, _, policy = key
    if workload.startswith("hackbench") and policy == SPIN_POLICIES[0][0]:
        return "hackbench without PAUSE exits is linux-hackbench's `ple=off` column"
    return None


def ebizzy_scenario(bench, a):
    budget = BUDGETS["linux-ebizzy"]
    reps = repetition_count(a, budget)
    cells, cut = {}, {}
    for word in EBIZZY_WORKLOADS:
        for layout, vms in EBIZZY_LAYOUTS:
            for label, options in EBIZZY_POLICIES:
                key = (word, layout, label)
                if budget.cut(key):
                    cut[key] = budget.cut(key)
                    continue
                c = cell(word, (layout, vms), LOCKS[0], (label, options), 1800, reps)
                flags = list(c.flags) + ["--timeout", "1800"]

                def check(log, vms=vms, word=word):
                    per_vm = {}
                    for name, _ in vms:
                        got = seed_chain(log, name, (word,), reps, ebizzy_result)
                        if isinstance(got, str):
                            return None, got
                        per_vm[name] = [r[word] for r in got]
                    # Per repetition: ebizzy the mean of the VMs' records/s (each VM's own
                    # throughput), hackbench the slower VM's seconds.
                    out = []
                    for i in range(reps):
                        vals = [per_vm[n][i] for n, _ in vms]
                        out.append({"records_per_s": statistics.mean(
                            v["records_per_s"] for v in vals)} if "records_per_s" in vals[0]
                            else {"seconds": max(v["seconds"] for v in vals)})
                    return {"reps": out}, ""
                name = f"{c.name}-seed003"
                cells[key] = budget_cell(bench, a, budget, key, flags,
                                         seed_boot(bench, name, flags, c.guests, check), reps)

    def table(got):
        head = ["workload, layout"] + [p for p, _ in EBIZZY_POLICIES] + \
            ["vcpu_id / last_boosted"]
        rows, chart, ok = [], {p: [] for p, _ in EBIZZY_POLICIES}, True
        for word in EBIZZY_WORKLOADS:
            field = "records_per_s" if word.startswith("ebizzy") else "seconds"
            for layout, _ in EBIZZY_LAYOUTS:
                line = [f"{word} ({field}), {layout}"]
                for p, _ in EBIZZY_POLICIES:
                    runs = got.get((word, layout, p))
                    est, text = bench.summary(runs, lambda v: v[field], 1) if runs else \
                        (None, "cut")
                    ok = ok and (est is not None or runs is None)
                    chart[p].append(est.value if est else None)
                    line.append(text)
                line.append(bench.ratio(got[(word, layout, SPIN_POLICIES[3][0])],
                                        got[(word, layout, SPIN_POLICIES[2][0])],
                                        lambda v: v[field]))
                rows.append(line)
        return bench.Table(
            "Seed 003: the directed-yield pivot, Linux (`pv=none`, test-and-set virt_spin_lock) "
            "on 4 CPUs of Bochs corei7_skylake_x at 1x and 2x: ebizzy records/s (higher is "
            "better) and hackbench seconds (lower is better) per policy, the median [95% CI] "
            f"of {reps} runs per boot (the first a warm-up), and the ratio vcpu_id / "
            "last_boosted", head, rows, [r[0] for r in rows], chart, ok)
    return bench.Scenario("linux-ebizzy", cells, table, budget_matrix(
        bench, a, budget, ("ebizzy records/s", lambda v: v.get("records_per_s", 0), 1), cut))


# The seeds' budgets. Their boot and repetition times are estimates from the nearest measured
# boots (one 2-vCPU Linux VM on 2 CPUs boots like linux-pivot's 4 vCPUs on 2; a fio chain of
# four rows is guessed at 60 s, an idle 5 s at 15 s, ebizzy's 5 s like hackbench's 60 s at 2x);
# the first boots of each correct them.
BUDGETS.update({
    # Seed 000: 2 cells, 10 boots of 190 + 4 x 60 s: about 0.6 h.
    "linux-shrink": Budget(reps=4, boots=5, claim_boots=5,
                           claims=tuple(p for p, _ in FIO_POLICIES), cut=lambda key: None,
                           boot_s=190, rep_s=60),
    # Seed 001: 6 cells, 24 boots of 150 + 4 x 15 s: about 0.7 h.
    "linux-idle": Budget(reps=4, boots=4, claim_boots=4,
                         claims=tuple((t, p) for t, _ in IDLE_TICKS for p, _ in IDLE_POLICIES),
                         cut=lambda key: None, boot_s=150, rep_s=15),
    # Seed 003: 10 cells, 34 boots of 400 + 4 x 60 s: about 3.0 h, two sessions.
    "linux-ebizzy": Budget(reps=4, boots=3, claim_boots=4, claims=EBIZZY_CLAIM, cut=ebizzy_cut,
                           boot_s=400, rep_s=60),
})
SEED_SCENARIOS = (("linux-shrink", shrink_scenario), ("linux-idle", idle_scenario),
                  ("linux-ebizzy", ebizzy_scenario))

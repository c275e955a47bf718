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
             "halt_poll_fail_ns")


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


def parse_hackbench(log, vms, spinlock):
    """{"ok", "error", "vms": {name: {"spinlock", "seconds", "stop", "stats"}}}."""
    reports, errors = vm_reports(log, vms, "hackbench")
    out = {}
    for name, r in reports.items():
        result = next((e for e in r["ops"] if e["op"] == "hackbench"), None)
        out[name] = {"spinlock": r["found"] and r["found"].get("spinlock"),
                     "seconds": result and result["seconds"], "stop": r["stop"],
                     "stats": r["stats"]}
        if r["found"] and out[name]["spinlock"] != spinlock:
            errors.append(f"{name}: spinlock {out[name]['spinlock']}, want {spinlock}")
    return {"ok": not errors, "error": "; ".join(errors), "vms": out}


def parse_cyclictest(log, vms, spinlock):
    """{"ok", "error", "vms": {name: {"spinlock", "seconds", "min_us", "avg_us", "max_us",
    "samples", "overflows", "threads": [{"min_us", "avg_us", "max_us", "samples",
    "overflows"}], "log2_us": [...], "stop", "stats"}}} (docs/linux.md: the result lines)."""
    reports, errors = vm_reports(log, vms, "cyclictest")
    out = {}
    for name, r in reports.items():
        total = next((e.body for e in r["ops"] if e["op"] == "cyclictest"), {})
        threads = sorted((e.body for e in r["ops"] if e["op"] == "cyclictest_thread"),
                         key=lambda t: t["thread"])
        hist = next((e.body for e in r["ops"] if e["op"] == "cyclictest_histogram"), {})
        out[name] = {"spinlock": r["found"] and r["found"].get("spinlock"),
                     **{k: total.get(k) for k in ("seconds", "min_us", "avg_us", "max_us",
                                                  "samples", "overflows")},
                     "threads": [{k: v for k, v in t.items() if k not in ("guest", "op")}
                                 for t in threads],
                     "log2_us": hist.get("log2_us"), "stop": r["stop"], "stats": r["stats"]}
        if total and len(threads) != total["threads"]:
            errors.append(f"{name}: {len(threads)} thread lines of {total['threads']}")
        if r["found"] and out[name]["spinlock"] != spinlock:
            errors.append(f"{name}: spinlock {out[name]['spinlock']}, want {spinlock}")
    return {"ok": not errors, "error": "; ".join(errors), "vms": out}


@dataclass(frozen=True)
class Cell:
    name: str        # unique and file-name safe: the boot's run directory
    workload: str    # "hackbench" or "cyclictest"
    layout: str      # a LAYOUTS label
    lock: str        # a LOCKS label
    policy: str      # a SPIN_POLICIES or HALT_POLICIES label
    flags: tuple     # tools/run.py flags
    guests: str      # GUESTS
    vms: tuple       # ((VM name, vCPUs), ...)
    spinlock: str    # what each VM's init script must report
    timeout_s: int

    def parse(self, log):
        parser = parse_hackbench if self.workload == "hackbench" else parse_cyclictest
        return parser(log, self.vms, self.spinlock)


def cell(workload, layout, lock, policy, timeout_s):
    """One Cell: workload is `hackbench:<groups>:<loops>` or `cyclictest:<s>:<interval_us>`."""
    kind = workload.split(":")[0]
    layout_label, vms = layout
    lock_label, vm_words, words, spinlock = lock
    policy_label, options = policy
    guests = " ".join(f"linux:name={name}:vcpus={vcpus}:mem={VM_MEM}{vm_words}:args=workload="
                      f"{workload}{words}" for name, vcpus in vms)
    flags = PLATFORM + (("--args", options) if options else ())
    name = "-".join(["linux", kind, f"{len(vms)}x{vms[0][1]}",
                     "nopvspin" if words else "pvspin", options.replace("=", "-") or "default"])
    return Cell(name, kind, layout_label, lock_label, policy_label, flags, guests, vms,
                spinlock, timeout_s)


def linux_cells(hackbench=(4, 20), cyclictest=(5, 1000), timeout_s=1800):
    """Every Linux cell: hackbench -g G -l L per spin policy, cyclictest for S seconds at an
    interval of I us per halt-polling policy, each in both layouts and with both locks."""
    hb = f"hackbench:{hackbench[0]}:{hackbench[1]}"
    ct = f"cyclictest:{cyclictest[0]}:{cyclictest[1]}"
    return ([cell(hb, layout, lock, policy, timeout_s)
             for layout in LAYOUTS for lock in LOCKS for policy in SPIN_POLICIES] +
            [cell(ct, layout, lock, policy, timeout_s)
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


def scenarios(bench):
    """The Linux scenarios for tools/bench.py --full: each cell of linux_cells() as a bench
    Cell with --runs seeded runs; tables of the medians [95% CI] and the ratios."""
    def make(workload, policies, baseline, lower_better_note):
        def scenario(a):
            cells, meta = {}, {}
            for c in linux_cells(timeout_s=1800):
                if c.workload != workload:
                    continue
                flags = list(c.flags) + ["--timeout", str(c.timeout_s)]
                if workload == "hackbench":
                    flags = bench.with_hv_args(flags, HACKBENCH_TRACE)

                def measure(c=c, flags=flags):
                    log, rundir = bench.boot(c.name, flags, c.guests)
                    got = c.parse(log)
                    if not got["ok"]:
                        return None, f"{got['error']} (see {os.path.relpath(rundir, ROOT)})"
                    vms = got["vms"]
                    value = {"seconds": max(v["seconds"] for v in vms.values())
                             if workload == "hackbench" else None,
                             "avg_us": max(v["avg_us"] for v in vms.values())
                             if workload == "cyclictest" else None,
                             "max_us": max(v["max_us"] for v in vms.values())
                             if workload == "cyclictest" else None,
                             "vms": vms}
                    if workload == "hackbench":
                        value["window"] = window_report(log, c.vms)
                    return value, ""
                key = (c.layout, c.lock, c.policy)
                cells[key] = bench.Cell(flags, measure, bench.seeded(a.runs, a))
                meta[key] = c

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
                            est, text = bench.summary(got[(layout, lock, p)],
                                                      lambda v: v[field], 2)
                            ok = ok and est is not None
                            chart[p].append(est.value if est else None)
                            row.append(text)
                        base = got[(layout, lock, baseline)]
                        row += [bench.ratio(got[(layout, lock, p)], base, lambda v: v[field])
                                for p, _ in policies if p != baseline]
                        if workload == "hackbench":
                            row.append(bench.ratio(got[(layout, lock, SPIN_POLICIES[3][0])],
                                                   got[(layout, lock, SPIN_POLICIES[2][0])],
                                                   lambda v: v[field]))
                        rows.append(row)
                return bench.Table(
                    f"Linux on Bochs corei7_skylake_x, 4 CPUs, 8 vCPUs (2x), `{workload}`: "
                    f"{field} per policy, the median of the runs [95% CI], and the ratios of the "
                    f"medians [95% CI] ({lower_better_note})", head, rows,
                    [r[0] for r in rows], chart, ok)
            return bench.Scenario(f"linux-{workload}", cells, table)
        return scenario
    return [("linux-pivot", lambda a: pivot_scenario(bench, a)),
            ("linux-hackbench", make("hackbench", SPIN_POLICIES, SPIN_POLICIES[0][0],
                                     "seconds: lower is better")),
            ("linux-cyclictest", make("cyclictest", HALT_POLICIES, HALT_POLICIES[0][0],
                                      "mean wake-up latency in us: lower is better"))]


# The hackbench question (docs/directed_yield.md): the configuration where QEMU once showed
# last_boosted ahead of vcpu_id, now on Bochs: 4 vCPUs on 2 CPUs, hackbench, each pivot.
PIVOT_PLATFORM = ("--emu", "bochs", "--cpu", "corei7_skylake_x", "--smp", "2")
PIVOT_POLICIES = (SPIN_POLICIES[2], SPIN_POLICIES[3])


def pivot_scenario(bench, a):
    cells = {}
    for label, options in PIVOT_POLICIES:
        # The default ring of 4096 records: the window's last records, a sample (dropped says
        # how much is missing), at half the console time of HACKBENCH_TRACE's.
        flags = bench.with_hv_args(list(PIVOT_PLATFORM) + ["--timeout", "1800"],
                                   f"{options} trace=sched trace_window=marker".strip())
        c = cell("hackbench:4:20", ("one 4-vCPU VM", (("lx", 4),)), LOCKS[0],
                 (label, options), 1800)

        def measure(c=c, flags=flags):
            log, rundir = bench.boot(c.name + "-2cpu", flags, c.guests)
            got = c.parse(log)
            if not got["ok"]:
                return None, f"{got['error']} (see {os.path.relpath(rundir, ROOT)})"
            return {"seconds": got["vms"]["lx"]["seconds"],
                    "window": window_report(log, c.vms)["lx"]}, ""
        cells[label] = bench.Cell(flags, measure, bench.seeded(a.runs, a))

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
            "the median [95% CI], the ratio (lower is better), and per run, from the workload's "
            "trace window (tools/yield_report.py), the medians of spins, boosts, boosts of the "
            "target the same spinner boosted last (repeat) or the VM boosted last, takes from "
            "another CPU, hand-offs that ended within 1 ms, and records dropped",
            head, rows, [r[0] for r in rows[:-1]], chart, ok)
    return bench.Scenario("linux-pivot", cells, table)

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
from dataclasses import dataclass

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
# (label, kernel command line words, the spinlock the init script must report)
LOCKS = (
    ("virt_spin_lock (default)", "", "virt_spin_lock"),
    ("qspinlock (`nopvspin`)", "+nopvspin", "qspinlock"),
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
    lock_label, words, spinlock = lock
    policy_label, options = policy
    guests = " ".join(f"linux:name={name}:vcpus={vcpus}:mem={VM_MEM}:args=workload={workload}"
                      f"{words}" for name, vcpus in vms)
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

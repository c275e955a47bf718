#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What each halt-polling policy would have done over a recorded workload.

    tools/haltreplay.py LOG [--vm VM] [--max NS] [--block-ns NS] [--compare LIVE_LOG ...]

LOG is a console log of a run with `trace=halt` (docs/console.md): one
`kvm_vcpu_wakeup` line per halt, with its length and the window its policy
had. build/haltreplay (tools/haltreplay.c, built here with make) replays the
halts through sched/halt_poll.c's policies (none, fixed, KVM's adaptive with
shrink 0 and 2, predict) at the maximum --max (default: the recording's
halt_poll_ns, or KVM's 200000 where it was 0), with the recording's grow and
grow_start, and a table per VM shows, per policy: the polls, the wake-ups
they caught, the halts that still blocked, the time polled and the time
wasted in polls that caught nothing; with --block-ns, the time each saved
(a block's cost for each wake-up caught, less the time wasted). The row of
the recorded policy is marked: its replay must choose every window the live
run chose.

--compare puts beside each policy the live run of it (its @vm_start names
the policy, its @stats give KVM's counters), on the same workload, for the
same VM: docs/halt_polling.md ("Replaying halts") says how close it comes
and why it cannot be exact.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from consolelog import ConsoleLog, EVENT_RE  # noqa: E402

BINARY = os.path.join(ROOT, "build", "haltreplay")
# What it is built from (the Makefile's HALTREPLAY_SRCS and their headers).
SOURCES = [os.path.join(ROOT, f) for f in ("tools/haltreplay.c", "tools/halt_replay.c",
                                           "tools/halt_replay.h", "sched/halt_poll.c",
                                           "sched/halt_poll.h")]
KVM_MAX_NS = 200000  # halt_poll_ns's default
POLICIES = ["none", "fixed", "adaptive-shrink0", "adaptive", "predict"]
HALT_RE = re.compile(r"^vcpu (\d+): (wait|poll) time (\d+) ns, polling (valid|invalid): "
                     r"by (\S+), window (\d+)(, guest opted out|, cpu wanted)?$")


def halts(log, vm):
    """The halts of one VM, in the order recorded: a dict per kvm_vcpu_wakeup line."""
    got = []
    for t in log.traces:
        if t.vm != vm or t.event != "kvm_vcpu_wakeup":
            continue
        m = HALT_RE.match(t.details)
        if not m:
            raise ValueError(f"not a kvm_vcpu_wakeup line: {t.details!r}")
        got.append({"start": t.ns, "vcpu": int(m[1]), "waited": m[2] == "wait", "ns": int(m[3]),
                    "valid": m[4] == "valid", "source": m[5], "window": int(m[6]),
                    "opted_out": m[7] == ", guest opted out", "cpu_wanted": m[7] == ", cpu wanted"})
    return got


def records_text(recorded):
    """The records as build/haltreplay reads them: `vcpu ns window valid opted_out cpu_wanted`."""
    return "".join(f"{h['vcpu']} {h['ns']} {h['window']} {int(h['valid'])} "
                   f"{int(h['opted_out'])} {int(h['cpu_wanted'])}\n" for h in recorded)


def policy(log, vm):
    """The halt-polling part of a VM's @vm_start policy."""
    for e in log.all("vm_start"):
        if e["vm"] == vm:
            return e["policy"]
    raise ValueError(f"no @vm_start for {vm}")


def policy_name(p):
    """The name build/haltreplay gives the policy a VM ran (None: one it does not replay)."""
    if p["halt_poll_ns"] == 0:
        return "none"
    mode = p["halt_poll_mode"]
    if mode == "adaptive":
        return {0: "adaptive-shrink0", 2: "adaptive"}.get(p["halt_poll_ns_shrink"])
    return mode


def replay(recorded, max_ns, grow, grow_start, binary=BINARY):
    """build/haltreplay's @haltreplay rows, by policy."""
    res = subprocess.run([binary, str(max_ns), str(grow), str(grow_start)],
                         input=records_text(recorded), stdout=subprocess.PIPE, text=True,
                         check=True)
    rows = {}
    for ln in res.stdout.splitlines():
        m = EVENT_RE.match(ln)
        if m and m[1] == "haltreplay":
            row = json.loads(m[2])
            rows[row["policy"]] = row
    return rows


def live(log, vm):
    """A live run's counters for a VM, summed over its vCPUs, as the replay names them."""
    stats = log.stats("vcpu", vm).values()
    total = {k: sum(e[k] for e in stats) for k in (
        "halts", "halt_attempted_poll", "halt_successful_poll", "halt_poll_success_ns",
        "halt_poll_fail_ns")}
    return {"halts": total["halts"], "polls": total["halt_attempted_poll"],
            "caught": total["halt_successful_poll"],
            "blocked": total["halts"] - total["halt_successful_poll"],
            "poll_ns": total["halt_poll_success_ns"] + total["halt_poll_fail_ns"],
            "wasted_ns": total["halt_poll_fail_ns"]}


def stale(target, sources):
    """Whether target is missing or older than one of its sources (make would rebuild it; make
    itself first checks every tool the build needs, which takes seconds)."""
    if not os.path.exists(target):
        return True
    built = os.path.getmtime(target)
    return any(os.path.getmtime(f) > built for f in sources)


def us(ns):
    return f"{ns / 1000:.1f}"


def saved_ns(row, block_ns):
    """What a policy's polls saved: each caught wake-up spared a block costing block_ns, each
    failed poll cost its polling."""
    return row["caught"] * block_ns - row["wasted_ns"]


def table(vm, recorded, rows, recorded_policy, lives, block_ns=None):
    """The markdown table for one VM: a row per policy, with the live run's numbers if any, and
    the time saved if a block's cost is given."""
    sources = {}
    for h in recorded:
        sources[h["source"]] = sources.get(h["source"], 0) + 1
    vcpus = len({h["vcpu"] for h in recorded})
    out = [f"{vm}: {len(recorded)} halts of {vcpus} vCPUs, woken by " +
           ", ".join(f"{k} {v}" for k, v in sorted(sources.items())) +
           f"; recorded under {recorded_policy or 'a policy not replayed'}, replayed at a "
           f"maximum of {rows['fixed']['max_ns']} ns", ""]
    heads = ["polls", "caught", "blocked", "polling us", "wasted us"]
    if block_ns is not None:
        heads.append(f"saved us at {block_ns} ns/block")
    live = " (live)" if lives else ""
    out += ["| policy | " + " | ".join(h + live for h in heads) + " | same windows |",
            "|---|" + "---:|" * (len(heads) + 1)]
    for name in POLICIES:
        r = rows[name]
        lv = lives.get(name)
        cells = []
        for key, fmt in (("polls", str), ("caught", str), ("blocked", str), ("poll_ns", us),
                         ("wasted_ns", us)):
            cells.append(fmt(r[key]) + (f" ({fmt(lv[key])})" if lv else ""))
        if block_ns is not None:
            cells.append(us(saved_ns(r, block_ns)) +
                         (f" ({us(saved_ns(lv, block_ns))})" if lv else ""))
        label = name + (" (recorded)" if name == recorded_policy else "")
        out.append(f"| {label} | " + " | ".join(cells) +
                   f" | {r['same_window']} of {r['compared']} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", help="console log of a run with trace=halt")
    ap.add_argument("--vm", help="only this VM (default: each VM with halts)")
    ap.add_argument("--max", type=int, help="the maximum (halt_poll_ns) to replay at")
    ap.add_argument("--compare", nargs="*", default=[],
                    help="console logs of live runs of the same workload under other policies")
    ap.add_argument("--block-ns", type=int,
                    help="what a blocked halt costs over a caught one (its block, the wake-up's "
                    "IPI and switch, a C-state exit): adds the time each policy saved")
    a = ap.parse_args()
    if stale(BINARY, SOURCES):
        subprocess.run(["make", "-s", "-C", ROOT, "build/haltreplay"], check=True,
                       stdout=subprocess.DEVNULL)
    with open(a.log, errors="replace") as f:
        log = ConsoleLog(f.read())
    compare = []
    for path in a.compare:
        with open(path, errors="replace") as f:
            compare.append(ConsoleLog(f.read()))
    vms = [a.vm] if a.vm else sorted({t.vm for t in log.traces if t.event == "kvm_vcpu_wakeup"})
    if not vms:
        sys.exit("haltreplay: no kvm_vcpu_wakeup lines: record with trace=halt")
    for e in log.all("trace_flush"):
        if e["vm"] in vms and e["dropped"]:
            print(f"haltreplay: {e['vm']}'s ring dropped its first {e['dropped']} records "
                  "(a larger trace_records= keeps them)", file=sys.stderr)
    for vm in vms:
        recorded = halts(log, vm)
        p = policy(log, vm)
        max_ns = a.max or p["halt_poll_ns"] or KVM_MAX_NS
        rows = replay(recorded, max_ns, p["halt_poll_ns_grow"], p["halt_poll_ns_grow_start"])
        lives = {policy_name(policy(c, vm)): live(c, vm) for c in compare}
        print(table(vm, recorded, rows, policy_name(p), lives, a.block_ns))
        print()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What a timeline says about directed yields: `tools/yield_report.py LOG [VM]`.

From the `trace=sched` lines of a console log (tools/timeline.py reads
them), per VM, as one JSON object per line:
- spins: spins detected inside the trace window (with `trace_window=marker`,
  only inside the workload's window);
- yields, boosts: directed-yield decisions, and those that ran a target;
- repeat_boosts: boosts of the very vCPU the same spinner boosted last time;
  vm_repeat_boosts: of the VM's previous boost target (what last_boosted
  makes likely);
- cross_cpu_takes: boosts whose target was moved from another CPU's queue;
- handoffs_under_1ms: boosted targets whose run, from the hand-off, ended
  within 1 ms (handoffs_measured: those whose run the trace shows end);
  handoff_run_us_median: the median of those runs.
"""
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from consolelog import ConsoleLog  # noqa: E402
from timeline import Timeline  # noqa: E402

BOOSTED = "runs it now"  # docs/console.md: the directed_yield decision that ran a target
SHORT_NS = 1000000


def target_run(intervals, target, since):
    """The target's first running interval starting at or after since: its length in ns."""
    for state, _, start, end in intervals.get(target, []):
        if state == "running" and start >= since:
            return end - start
    return None


def report(vm):
    """The yield summary of one VM of a Timeline."""
    out = {"spins": 0, "yields": 0, "boosts": 0, "repeat_boosts": 0, "vm_repeat_boosts": 0,
           "cross_cpu_takes": 0, "handoffs_measured": 0, "handoffs_under_1ms": 0}
    last_by_spinner, last_in_vm, runs = {}, None, []
    previous = None  # the VM's previous instant: a take's move comes just before its yield line
    for ns, vcpu, kind, args in vm["instants"]:
        if kind == "spin":
            out["spins"] += 1
        elif kind == "yield":
            out["yields"] += 1
            if args["outcome"] == BOOSTED:
                target = int(args["target"])
                out["boosts"] += 1
                out["repeat_boosts"] += last_by_spinner.get(vcpu) == target
                out["vm_repeat_boosts"] += last_in_vm == target
                last_by_spinner[vcpu], last_in_vm = target, target
                if previous and previous[2] == "migrate" and previous[1] == target:
                    out["cross_cpu_takes"] += 1
                run = target_run(vm["intervals"], target, ns)
                if run is not None:
                    runs.append(run)
        previous = (ns, vcpu, kind, args)
    out["handoffs_measured"] = len(runs)
    out["handoffs_under_1ms"] = sum(r < SHORT_NS for r in runs)
    out["handoff_run_us_median"] = round(statistics.median(runs) / 1000, 1) if runs else None
    return out


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    with open(argv[1], errors="replace") as f:
        tl = Timeline(ConsoleLog(f.read()))
    names = [argv[2]] if len(argv) == 3 else list(tl.vms)
    missing = [n for n in names if n not in tl.vms]
    if missing:
        print(f"yield_report: no trace lines for {', '.join(missing)}", file=sys.stderr)
        return 1
    for name in names:
        print(json.dumps({"vm": name, **report(tl.vms[name])}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Charts from a pollux console log: `tools/plot.py LOG OUTDIR` writes PNG files.

`tools/plot.py --bench RESULTS OUTDIR` draws each table of `make bench`'s
results.json (its medians) as a bar chart, <scenario>.png. From a log:

- halt_poll_ns.png: each vCPU's halt-polling window over time, from the
  `kvm_halt_poll_ns` trace lines (`trace=halt_poll`), as steps;
- exits.png: exits by reason per VM, from the last `@stats` record of scope
  `vm` of each VM (its totals);
- bench.png: the guests' `@bench` measurements, one bar per VM and operation, a panel
  (its own labelled axis) per unit: round trips in cycles, tick counts, ...
A chart is skipped when the log has nothing for it. Uses matplotlib, Debian's python3-matplotlib (`make deps`).
"""
import json
import os
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from consolelog import ConsoleLog  # noqa: E402
from pyplot import pyplot  # noqa: E402

plt = pyplot()

HALT_POLL_TRACE = "kvm_halt_poll_ns"


def halt_poll_series(log):
    """(vm, vcpu) -> [(ms since boot, halt_poll_ns)] from the trace lines."""
    series = {}
    for t in log.traces:
        if t.event != HALT_POLL_TRACE:
            continue
        # "vcpu <id>: halt_poll_ns <new> (grow|shrink <old>)"
        words = t.details.replace(":", "").split()
        vcpu, new, old = int(words[1]), int(words[3]), int(words[5].rstrip(")"))
        points = series.setdefault((t.vm, vcpu), [])
        if not points:
            points.append((t.ns / 1e6, old))
        points.append((t.ns / 1e6, new))
    return series


def plot_halt_poll(log, outdir):
    series = halt_poll_series(log)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for (vm, vcpu), points in sorted(series.items()):
        xs, ys = zip(*points)
        ax.step(xs, [y / 1000 for y in ys], where="post", label=f"{vm} vCPU {vcpu}")
    ax.set_xlabel("time since boot (ms)")
    ax.set_ylabel("halt_poll_ns (us)")
    ax.set_title("halt-polling window per vCPU (kvm_halt_poll_ns)")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return save(fig, outdir, "halt_poll_ns.png")


def last_vm_records(log):
    last = {}
    for e in log.all("stats"):
        if e.get("scope") == "vm":
            last[e["vm"]] = e
    return last


def plot_exits(log, outdir):
    records = last_vm_records(log)
    if not records:
        return None
    reasons = sorted({r for e in records.values() for r in e["exits"]})
    vms = sorted(records)
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.45 * len(reasons) * max(1, len(vms)) / 2))
    height = 0.8 / len(vms)
    for i, vm in enumerate(vms):
        counts = [records[vm]["exits"].get(r, 0) for r in reasons]
        ax.barh([j + i * height for j in range(len(reasons))], counts, height=height, label=vm)
    ax.set_yticks([j + 0.4 - height / 2 for j in range(len(reasons))], reasons)
    ax.set_xscale("symlog")
    ax.set_xlabel("exits")
    ax.set_title("exits by reason per VM")
    ax.legend(fontsize="small")
    return save(fig, outdir, "exits.png")


# What a @bench value counts, by op, where docs/console.md says (else the panel says "value").
VALUE_UNITS = {"ticks": "timer ticks taken", "periodic": "us to the last tick"}


def guest_bench_panels(log):
    """The guests' @bench measurements, one panel per unit: {y label: [(bar label, value)]}.
    Round trips in guest TSC cycles share a panel; each op's `value` has its own."""
    panels = {}
    for e in log.all("bench"):
        label = f"{e.vm} {e['op']}" + (f" vcpu {e['vcpu']}" if "vcpu" in e.body else "")
        if "cycles" in e.body:
            unit = "guest TSC cycles per round trip"
            value = e["cycles"]
        elif "value" in e.body:
            unit = f"{e['op']}: {VALUE_UNITS.get(e['op'], 'value')}"
            value = e["value"]
        else:
            continue
        panels.setdefault(unit, []).append((label, value))
    return panels


def plot_guest_bench(log, outdir):
    panels = guest_bench_panels(log)
    if not panels:
        return None
    widest = max(len(bars) for bars in panels.values())
    fig, axes = plt.subplots(1, len(panels), squeeze=False,
                             figsize=(max(6, 2 + 1.3 * widest * len(panels)), 4.5),
                             gridspec_kw={"width_ratios": [len(b) for b in panels.values()]})
    for ax, (unit, bars) in zip(axes[0], panels.items()):
        ax.bar(range(len(bars)), [v for _, v in bars], width=0.6)
        ax.set_xticks(range(len(bars)), [label for label, _ in bars], rotation=20, ha="right",
                      fontsize="small")
        ax.set_ylabel(unit)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("guest measurements (@bench), one axis per unit", fontsize="medium")
    return save(fig, outdir, "bench.png")


def bench_chart(title, rows, columns, outdir, name):
    """A bar chart of a table: a group per row, a bar per column (label -> values by row)."""
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows) * max(1, len(columns))), 4.5))
    width = 0.8 / max(1, len(columns))
    for i, (label, values) in enumerate(columns.items()):
        xs = [j + i * width for j in range(len(rows))]
        ax.bar(xs, [v or 0 for v in values], width=width, label=label or None)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))], rows, rotation=20,
                  ha="right", fontsize="small")
    # Wrapped to the figure, never cut.
    chars = int(fig.get_figwidth() * 100 / 8.5)
    ax.set_title(textwrap.fill(title, chars), fontsize="medium")
    if any(columns):
        ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return save(fig, outdir, name)


def save(fig, outdir, name):
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_bench_results(path, outdir):
    with open(path) as f:
        tables = json.load(f)["tables"]
    for name, t in tables.items():
        print("plot: wrote " + bench_chart(t["title"], t["chart"]["rows"], t["chart"]["columns"],
                                           outdir, f"{name}.png"))
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--bench":
        return plot_bench_results(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 3:
        sys.exit("usage: tools/plot.py LOG OUTDIR, or tools/plot.py --bench RESULTS OUTDIR")
    with open(sys.argv[1], errors="replace") as f:
        log = ConsoleLog(f.read())
    made = [p for p in (plot_halt_poll(log, sys.argv[2]), plot_exits(log, sys.argv[2]),
                        plot_guest_bench(log, sys.argv[2])) if p]
    for p in made:
        print(f"plot: wrote {p}")
    if not made:
        print("plot: nothing to chart in this log (no traces, @stats or @bench)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

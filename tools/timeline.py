#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The vCPU timeline of a pollux console log: `tools/timeline.py LOG OUT`.

Reads the `trace=sched` lines (docs/console.md, docs/timeline.md) and writes
- OUT.json: Chrome trace-event JSON, which Perfetto's UI (ui.perfetto.dev)
  and chrome://tracing open: one process per VM with a track (tid) per vCPU,
  one process "host" with a track per host CPU; "X" complete events for the
  intervals a vCPU spends in each state (and, on its CPU's track, running
  there), "i" instant events for spins, directed yields, migrations,
  wake-ups (with their source) and the guest's window marks, with their
  details in args;
- OUT.png: a Gantt chart, a row per vCPU coloured by state, and a row per
  host CPU showing which vCPU runs there.
A vCPU's interval runs from one state change to its next; its last ends at
the VM's last record. Times are ns since boot (the trace's), shown in us.
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from consolelog import ConsoleLog  # noqa: E402

# The vCPU states as trace=sched names them (vcpu_state_names), and their colours.
STATES = {"running": "#2ca02c", "runnable": "#ff7f0e", "polling": "#17becf",
          "blocked": "#c7c7c7", "wait-sipi": "#9467bd", "stopped": "#000000"}
HOST_PID = 0  # the host CPUs' process; VMs are 1, 2, ... in order of appearance

STATE_RE = re.compile(r"^vcpu (\d+) cpu (\d+): (\S+) -> (\S+)$")
MIGRATE_RE = re.compile(r"^vcpu (\d+) from cpu (\d+) to cpu (\d+)$")
WAKEUP_RE = re.compile(r"^vcpu (\d+) cpu (\d+): by (\w+)(?: from vcpu (\d+))?$")
SPIN_RE = re.compile(r"^vcpu (\d+) cpu (\d+)$")
YIELD_RE = re.compile(r"^vcpu (\d+) pivot (\w+) target (\w+): ([^(]+) \((.*)\)$")
MARKER_RE = re.compile(r"^vcpu (\d+): window (start|end)$")


def us(ns):
    return ns / 1000.0


class Timeline:
    """Per VM: each vCPU's intervals (state, cpu, start ns, end ns) and events."""

    def __init__(self, log):
        self.vms = {}  # vm -> {"intervals": {vcpu: [...]}, "instants": [...], "end": ns}
        self.flush = {e["vm"]: e.body for e in log.all("trace_flush")}
        open_state = {}  # (vm, vcpu) -> (state, cpu, since)
        for t in log.traces:
            vm = self.vms.setdefault(t.vm, {"intervals": {}, "instants": [], "end": t.ns})
            vm["end"] = max(vm["end"], t.ns)
            ev = self.event(t)
            if ev is None:
                continue
            vcpu, kind, args = ev
            if kind == "state":
                key = (t.vm, vcpu)
                if key in open_state:
                    state, cpu, since = open_state[key]
                    vm["intervals"].setdefault(vcpu, []).append((state, cpu, since, t.ns))
                open_state[key] = (args["to"], args["cpu"], t.ns)
                vm["intervals"].setdefault(vcpu, [])
            else:
                vm["instants"].append((t.ns, vcpu, kind, args))
        for (vm, vcpu), (state, cpu, since) in open_state.items():
            end = self.vms[vm]["end"]
            if end > since:
                self.vms[vm]["intervals"][vcpu].append((state, cpu, since, end))

    @staticmethod
    def event(t):
        """(vcpu, kind, args) of a trace line this tool reads, or None."""
        d = t.details
        if t.event == "sched_state":
            m = STATE_RE.match(d)
            return m and (int(m[1]), "state", {"cpu": int(m[2]), "from": m[3], "to": m[4]})
        if t.event == "sched_migrate":
            m = MIGRATE_RE.match(d)
            return m and (int(m[1]), "migrate", {"from_cpu": int(m[2]), "to_cpu": int(m[3])})
        if t.event == "sched_wakeup":
            m = WAKEUP_RE.match(d)
            if not m:
                return None
            args = {"cpu": int(m[2]), "source": m[3]}
            if m[4] is not None:
                args["from_vcpu"] = int(m[4])
            return int(m[1]), "wakeup", args
        if t.event == "sched_spin":
            m = SPIN_RE.match(d)
            return m and (int(m[1]), "spin", {"cpu": int(m[2])})
        if t.event == "directed_yield":
            m = YIELD_RE.match(d)
            return m and (int(m[1]), "yield", {"pivot": m[2], "target": m[3],
                                                "outcome": m[4].strip(), "scan": m[5]})
        if t.event == "trace_marker":
            m = MARKER_RE.match(d)
            return m and (int(m[1]), "window_" + m[2], {})
        return None

    def host_cpus(self):
        return sorted({cpu for vm in self.vms.values() for iv in vm["intervals"].values()
                       for _, cpu, _, _ in iv})

    def chrome(self):
        """The Chrome trace-event JSON object."""
        events = [{"ph": "M", "pid": HOST_PID, "tid": 0, "name": "process_name",
                   "args": {"name": "host CPUs"}}]
        for cpu in self.host_cpus():
            events.append({"ph": "M", "pid": HOST_PID, "tid": cpu, "name": "thread_name",
                           "args": {"name": f"cpu {cpu}"}})
        for pid, (name, vm) in enumerate(self.vms.items(), start=1):
            events.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name",
                           "args": {"name": f"vm {name}"}})
            for vcpu in sorted(vm["intervals"]):
                events.append({"ph": "M", "pid": pid, "tid": vcpu, "name": "thread_name",
                               "args": {"name": f"vcpu {vcpu}"}})
                for state, cpu, start, end in vm["intervals"][vcpu]:
                    events.append({"ph": "X", "pid": pid, "tid": vcpu, "name": state,
                                   "cat": "state", "ts": us(start), "dur": us(end - start),
                                   "args": {"cpu": cpu}})
                    if state in ("running", "polling"):
                        events.append({"ph": "X", "pid": HOST_PID, "tid": cpu,
                                       "name": f"{name}/{vcpu} {state}", "cat": "cpu",
                                       "ts": us(start), "dur": us(end - start),
                                       "args": {"vm": name, "vcpu": vcpu, "state": state}})
            for ns, vcpu, kind, args in vm["instants"]:
                events.append({"ph": "i", "s": "t", "pid": pid, "tid": vcpu, "name": kind,
                               "cat": "event", "ts": us(ns), "args": args})
        meta = {"vms": {name: self.flush.get(name, {}) for name in self.vms}}
        return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": meta}

    def gantt(self, path):
        from pyplot import pyplot
        plt = pyplot()
        rows = [(name, vcpu) for name, vm in self.vms.items() for vcpu in sorted(vm["intervals"])]
        cpus = self.host_cpus()
        starts = [iv[2] for vm in self.vms.values() for ivs in vm["intervals"].values()
                  for iv in ivs]
        t0 = min(starts) if starts else 0
        fig, ax = plt.subplots(figsize=(12, 1.2 + 0.45 * (len(rows) + len(cpus))))
        labels = []
        palette = plt.get_cmap("Set3")  # the CPU rows' vCPU colours: none of the states'
        ran = {}
        for y, (name, vcpu) in enumerate(rows):
            labels.append(f"{name}/{vcpu}")
            for state, cpu, start, end in self.vms[name]["intervals"][vcpu]:
                ax.broken_barh([((start - t0) / 1e6, (end - start) / 1e6)], (y - 0.4, 0.8),
                               color=STATES.get(state, "#ff00ff"), linewidth=0)
                if state in ("running", "polling") and cpu in cpus:
                    cy = len(rows) + cpus.index(cpu)
                    ran[f"{name}/{vcpu}"] = palette(y % 12)
                    ax.broken_barh([((start - t0) / 1e6, (end - start) / 1e6)],
                                   (cy - 0.4, 0.8), color=palette(y % 12), linewidth=0)
            spins = [(ns - t0) / 1e6 for ns, v, kind, _ in self.vms[name]["instants"]
                     if v == vcpu and kind == "spin"]
            ax.plot(spins, [y] * len(spins), "|", color="#d62728", markersize=9)
        labels += [f"cpu {c}" for c in cpus]
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.set_xlabel("ms from the first record")
        handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in STATES.values()]
        handles.append(plt.Line2D([], [], marker="|", color="#d62728", linestyle="", markersize=9))
        states = ax.legend(handles, list(STATES) + ["spin"], loc="upper center",
                           ncol=len(STATES) + 1, bbox_to_anchor=(0.5, 1.02 + 0.3 / len(labels)),
                           fontsize=8, frameon=False)
        ax.add_artist(states)
        ax.legend([plt.Rectangle((0, 0), 1, 1, color=c) for c in ran.values()], list(ran),
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False,
                  title="CPU rows", title_fontsize=8)
        ax.set_title("vCPU timeline (trace=sched); CPU rows: which vCPU runs there", pad=22)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    with open(argv[1], errors="replace") as f:
        log = ConsoleLog(f.read())
    tl = Timeline(log)
    if not any(vm["intervals"] for vm in tl.vms.values()):
        print("timeline: no trace=sched lines in this log", file=sys.stderr)
        return 1
    with open(argv[2] + ".json", "w") as f:
        json.dump(tl.chrome(), f)
    tl.gantt(argv[2] + ".png")
    print(f"timeline: wrote {argv[2]}.json and {argv[2]}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

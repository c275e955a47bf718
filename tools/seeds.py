#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""`make seeds`: docs/seeds.md, each seed's published result beside pollux's, from the
matrices' results files (bench-results/<matrix>.json, tools/bench.py --full).

A claim row compares two cells of a matrix as the seed compared two configurations: the
seed's ratio (its two published numbers, hard-coded from the thread) against pollux's ratio
of the two cells' medians with its 95% interval (tools/benchstats.py's two-level cluster
bootstrap, the boots paired by seed), and a verdict: "no difference detected" when pollux's
interval holds 1, else "same direction" when pollux's ratio lies on the seed's side of 1,
else "opposite". A row whose cells have no boots yet says "not run yet" with the command that
fills it. An info row shows a measured value the seed has no number for.
"""
import argparse
import json
import os
import re
import sys
import textwrap
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import bench_linux  # noqa: E402
from bench import measured  # noqa: E402
from benchstats import (NO_DIFFERENCE, cluster_median_estimate,  # noqa: E402
                        cluster_ratio_estimate, format_estimate)

RESULTS_DIR = os.path.join(ROOT, "bench-results")
OUT = os.path.join(ROOT, "docs", "seeds.md")

NOT_RUN = "not run yet"
SAME, OPPOSITE = "same direction", "opposite"
NO_INTERVAL = "no interval (one boot per cell, or a base of 0)"


@dataclass(frozen=True)
class Claim:
    """A seed's comparison: what (the row's words), published (new, base) from the thread,
    and pollux's matrix, its cells (new, base) as the results file writes their keys, and
    pick(repetition value) -> the number compared; digits of pollux's medians."""
    what: str
    published: tuple
    matrix: str
    new: tuple
    base: tuple
    pick: object
    digits: int = 1


@dataclass(frozen=True)
class Info:
    """What pollux measures where the seed has no number: pick of a cell of a matrix, or with
    base, the ratio of the cell's median to base's."""
    what: str
    matrix: str
    cell: tuple
    pick: object
    digits: int = 1
    base: tuple = None


def load(results_dir):
    """matrix -> {cell key tuple: [(seed, [measured repetitions])]} of the boots that gave a
    value, the last record of each (cell, seed) winning, as tools/bench.py reads them."""
    out = {}
    if not os.path.isdir(results_dir):
        return out
    for name in sorted(os.listdir(results_dir)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(results_dir, name)) as f:
            data = json.load(f)
        latest = {(tuple(b["cell"]), b["seed"]): b for b in data["boots"]}
        cells = out.setdefault(data["matrix"], {})
        for (cell, seed), b in sorted(latest.items(), key=lambda kv: str(kv[0])):
            if b["value"] is not None:
                cells.setdefault(cell, []).append((seed, measured(b["value"])))
    return out


def boots(results, matrix, cell, pick):
    """(per boot, pick of each measured repetition; the boots' seeds), or None if none ran."""
    runs = results.get(matrix, {}).get(tuple(cell))
    if not runs:
        return None
    return [[pick(v) for v in reps] for _, reps in runs], [seed for seed, _ in runs]


def verdict(published_ratio, est):
    """The row's verdict from the seed's ratio and pollux's ratio Estimate (None: no ratio)."""
    if est is None or est.low is None:
        return NO_INTERVAL
    if est.holds(1.0):
        return NO_DIFFERENCE
    return SAME if (est.value > 1) == (published_ratio > 1) else OPPOSITE


def claim_row(claim, results):
    """[what, seed's numbers and ratio, pollux's medians, pollux's ratio [CI], verdict]."""
    new, base = claim.published
    seed = f"{new:g} vs {base:g}: {new / base:.3f}"
    a = boots(results, claim.matrix, claim.new, claim.pick)
    b = boots(results, claim.matrix, claim.base, claim.pick)
    if a is None or b is None:
        return [claim.what, seed, "", "", f"{NOT_RUN}: `make bench-full B={claim.matrix}`"]
    est = cluster_ratio_estimate(a[0], b[0], a[1], b[1])
    medians = " vs ".join(format_estimate(cluster_median_estimate(x[0]), claim.digits)
                          for x in (a, b))
    return [claim.what, seed, medians, format_estimate(est, 2) if est else "", verdict(new / base, est)]


def info_row(info, results):
    got = boots(results, info.matrix, info.cell, info.pick)
    base = info.base and boots(results, info.matrix, info.base, info.pick)
    if got is None or (info.base and base is None):
        return [info.what, "", "", "", f"{NOT_RUN}: `make bench-full B={info.matrix}`"]
    medians = [format_estimate(cluster_median_estimate(x[0]), info.digits)
               for x in (got, base) if x]
    est = base and cluster_ratio_estimate(got[0], base[0], got[1], base[1])
    ratio = format_estimate(est, 2) if est else ""
    return [info.what, "(no number)", " vs ".join(medians), ratio, "information"]


def table(rows, results):
    head = ["claim", "the seed (new vs base: ratio)", "pollux's medians [95% CI] (new vs base)",
            "pollux's ratio [95% CI]", "verdict"]
    lines = ["| " + " | ".join(head) + " |", "|---|---:|---:|---:|---|"]
    for r in rows:
        cols = claim_row(r, results) if isinstance(r, Claim) else info_row(r, results)
        lines.append("| " + " | ".join(cols) + " |")
    return lines


# ---- The seeds (their threads in /work/shared/seeds when this was written; cited by subject).
# The cells, as tools/bench_linux.py names them.
PUBLISHED_FIO = {"seq-read": (747, 727), "seq-write": (343, 331), "rand-read": (732, 690),
                 "rand-write": (300, 299)}
FIO_ROWS = tuple((row, word, *PUBLISHED_FIO[row])
                 for (row, *_), word in zip(bench_linux.FIO_ROWS, bench_linux.fio_words()))
SHRINK0, SHRINK2 = ((label,) for label, _ in bench_linux.FIO_POLICIES)
NET = ("bochs", str(bench_linux.NET_IDLE_EXIT_US))
NET_OFF, NET_FIXED, NET_ADAPTIVE, _, NET_GUEST, NET_IDLEPOLL, _ = \
    (NET + (label,) for label, _, _ in bench_linux.NET_POLICIES)
(HZ250, _), (NOHZ, _) = bench_linux.IDLE_TICKS
(IDLE_OFF, _), (IDLE_FIXED, _), (IDLE_ADAPTIVE, _) = bench_linux.IDLE_POLICIES
EBIZZY, HACKBENCH = bench_linux.EBIZZY_WORKLOADS
(X1, _), (X2, _) = bench_linux.EBIZZY_LAYOUTS
(LAST, _), (VCPU_ID, _), _ = bench_linux.EBIZZY_POLICIES


def tcp(v):
    return v["tcp"]["median_us"]


def udp(v):
    return v["udp"]["median_us"]


def busy(v):
    return v["busy_pct"]


def records(v):
    return v["records_per_s"]


def seconds(v):
    return v["seconds"]


SEEDS = [
    ("Seed 000: `halt_poll_ns_shrink` 0 against 2",
     "\"[PATCH 0/2] KVM: enable halt poll shrink parameter\" (Parshuram Sangle, 2 Nov 2023; "
     "applied to kvm-x86 as aeb1b22a3ac8): an Android VM on Alder Lake (i7-1255U), host "
     "5.15, scores with shrink 2 against 0, higher is better. pollux: `make bench-full "
     "B=linux-shrink`, fio (psync, O_DIRECT, queue depth 1) on virtio-blk in one 2-vCPU Linux "
     "VM on 2 CPUs of Bochs VMX; sequential rows in 128 KiB blocks over 16 MiB, random ones in "
     "4 KiB blocks over 2 MiB; MB/s.",
     [Claim(f"fio {row}, MB/s, shrink 2 / shrink 0", (new, base), "linux-shrink", SHRINK2,
            SHRINK0, lambda v, w=word: v[w]["mb_s"], 2) for row, word, new, base in FIO_ROWS] +
     [Info(f"fio {row}, host polling ms/s, shrink {n}", "linux-shrink", cell,
           lambda v, w=word: v[w]["host"]["poll_ms_per_s"])
      for row, word, _, _ in FIO_ROWS[2:3] for n, cell in (("0", SHRINK0), ("2", SHRINK2))],
     ["pollux answers a virtio-blk request inside the notify exit that carries it (the disk "
      "is host RAM, docs/virtio.md): no request waits on storage, as the seed's did on its "
      "host's. QEMU's proof boot still took about one halt per request (68 halts/s at 76 "
      "IOPS in the random-read row, both vCPUs together); where in the guest they fall is not "
      "measured. The information rows show the polling each policy spends on them.",
      "Out of reach: GeekBench multi-core (+2%), 3DMark Slingshot (+3%), Stream (+5%) and the "
      "Steam games' frame rates (+1% to +9%) need Android or a GPU in the guest; the power "
      "rows (CPU and memory rails, -0.8% to +0.3%) need a DAQ on real hardware. None is "
      "reproduced."]),
    ("Seed 001: dynamic halt polling",
     "\"[PATCH v7 0/3] KVM: Dynamic Halt-Polling\" (Wanpeng Li, Sept 2015; the table quoted "
     "by Christian Borntraeger): TCP_RR latency 34 us without polling, 27 us always polling, "
     "26.7 us dynamic; an idle vCPU's host CPU (% c0 over 60 s, pinned) ticking at 250 Hz "
     "1.1% none, 4.6-14% always, 1.2% dynamic, and tickless 0.15%, 0.3%, 0.2%. pollux: the "
     "round trip from `make bench-full B=linux-net` (two 1-vCPU VMs, sockperf TCP ping-pong, "
     "Bochs VMX with the C-state model, a 2 ms window: docs/virtio.md); the idle rows from "
     "`make bench-full B=linux-idle` (one idle 1-vCPU VM pinned to a CPU, KVM's 200 us "
     "window; `nohz=off` as the seed's guest, and the tickless guest pollux's Linux runs by "
     "default since ARAT, docs/linux.md \"Timers\"): the % of its CPU the vCPU takes, "
     "running the guest or polling.",
     [Claim("TCP round trip, dynamic / none", (26.7, 34), "linux-net", NET_ADAPTIVE, NET_OFF,
            tcp),
      Claim("TCP round trip, always / none", (27, 34), "linux-net", NET_FIXED, NET_OFF, tcp),
      Claim("TCP round trip, dynamic / always", (26.7, 27), "linux-net", NET_ADAPTIVE,
            NET_FIXED, tcp),
      Claim("idle at 250 Hz, host CPU, dynamic / always (the seed: 4.6%, the low end)",
            (1.2, 4.6), "linux-idle", (HZ250, IDLE_ADAPTIVE), (HZ250, IDLE_FIXED), busy, 2),
      Claim("idle at 250 Hz, host CPU, dynamic / none", (1.2, 1.1), "linux-idle",
            (HZ250, IDLE_ADAPTIVE), (HZ250, IDLE_OFF), busy, 2),
      Claim("idle at 250 Hz, host CPU, always / none", (4.6, 1.1), "linux-idle",
            (HZ250, IDLE_FIXED), (HZ250, IDLE_OFF), busy, 2),
      Claim("idle tickless, host CPU, dynamic / always", (0.2, 0.3), "linux-idle",
            (NOHZ, IDLE_ADAPTIVE), (NOHZ, IDLE_FIXED), busy, 2),
      Claim("idle tickless, host CPU, dynamic / none", (0.2, 0.15), "linux-idle",
            (NOHZ, IDLE_ADAPTIVE), (NOHZ, IDLE_OFF), busy, 2),
      Claim("idle: 250 Hz / tickless, host CPU, no polling", (1.1, 0.15), "linux-idle",
            (HZ250, IDLE_OFF), (NOHZ, IDLE_OFF), busy, 2)],
     ["The seed's % c0 counts every cycle the physical CPU was out of C-states; pollux's "
      "counts the time its vCPU held the CPU, running the guest or polling: the window less "
      "the vCPU's time halted off the CPU and waiting for it (`blocked_us`, `wait_us`, whole "
      "inside the window since the vCPU runs at both marks), not the host's own idle-loop "
      "work, so the absolute percentages differ and the ratios are what is compared. The "
      "cells check the regime the guest reports: `nohz_cpus` 0 under `nohz=off` (a QEMU "
      "boot, `workload=idle:2+nohz=off`: `hres_cpus` 1, `nohz_cpus` 0, 151 halts/s) and 1 "
      "tickless."]),
    ("Seed 002: guest polling (cpuidle-haltpoll) against host polling",
     "\"cpuidle haltpoll driver and governor (v4)\" (Marcelo Tosatti, 2019): a small packet "
     "ping-ponged between server and client, 33.40 with the host's `halt_poll_ns=300000`, "
     "32.73 with the guest's `guest_halt_poll_ns=300000` and no host polling (31.33 on the "
     "host itself; lower is better). pollux: `make bench-full B=linux-net`, the UDP round "
     "trip's median.",
     [Claim("round trip, guest polling / host polling", (32.73, 33.40), "linux-net",
            NET_GUEST, NET_FIXED, udp),
      Info("round trip, guest polling / no polling", "linux-net", NET_GUEST, udp,
           base=NET_OFF),
      Info("round trip, guest `idle=poll` / no polling (the control)", "linux-net",
           NET_IDLEPOLL, udp, base=NET_OFF),
      Info("guest POLL state entries per round trip, cpuidle-haltpoll", "linux-net",
           NET_GUEST, lambda v: v["guest_poll"]["entries_per_rt"], 3)],
     ["**Why the guest's cpuidle-haltpoll did not shorten the round trip** (docs/virtio.md: "
      "776 us against no polling's 772). A hypothesis from the sources, tested by the rows "
      "above once linux-net runs at this commit:",
      "1. Debian 12's cloud kernel builds the driver (`CONFIG_HALTPOLL_CPUIDLE=y`) but not "
      "its governor (`# CONFIG_CPU_IDLE_GOV_HALTPOLL is not set`; `build/linux/config`). "
      "Linux 6.1's drivers/cpuidle/cpuidle-haltpoll.c asks for the governor by name "
      "(`.governor = \"haltpoll\"`); when none of that name is registered the cpuidle core "
      "keeps its default, menu (ladder and menu are the ones built).",
      "2. The driver's states are POLL (`cpuidle_poll_state_init`: exit latency and target "
      "residency 0) and HALT (exit latency and target residency 1 us). Menu picks the "
      "deepest state whose target residency fits the idle it predicts, so POLL only where it "
      "predicts under 1 us; and without the governor's `poll_limit_ns` a POLL lasts at most "
      "`cpuidle_poll_time()`'s default, TICK_NSEC / 16 (250 us at the kernel's 250 Hz; HALT's "
      "1 us is under its 10 us floor). The haltpoll governor instead polls at every idle and "
      "grows its window from 50 us to `guest_halt_poll_ns` while the wake-ups come inside it. "
      "A round trip's wait under Bochs is some 400 us: menu halts for it.",
      "   Seen in the QEMU proof boot (`workload=ebizzy:3,...+cpuidle_haltpoll.force=1`): "
      "the found line's `cpuidle` is `haltpoll`, the `cpuidle` lines' governor `menu`; after "
      "the first workload, 129 POLL entries since boot against 1184 HALT ones (the POLL "
      "time, 3.4 s for 129, is QEMU's: the loop reads the clock every 200 PAUSEs, and each "
      "PAUSE exits to pollux there).",
      "3. `haltpoll.guest_halt_poll_ns=2000000` is a parameter of the missing governor "
      "(drivers/cpuidle/governors/haltpoll.c, default 200 us, grown from "
      "`guest_halt_poll_grow_start` 50 us): with no module of that name it is ignored.",
      "4. The driver still does its other half: `arch_haltpoll_enable()` writes 0 to "
      "MSR_KVM_POLL_CONTROL on every CPU (pollux offers KVM_FEATURE_POLL_CONTROL), and "
      "pollux stops polling for that vCPU (docs/halt_polling.md, the guest opt-out). So "
      "neither side polls: the cell measures no polling, 776 against 772 us.",
      "The test: the init script now prints each cpuidle state's entries and time with the "
      "governor after every workload (`@bench` op `cpuidle`); the explanation predicts "
      "governor `menu` and about 0 POLL entries per round trip in the cpuidle-haltpoll cell "
      "(the information row), while the control, a guest that polls at every idle "
      "(`idle=poll`, which also keeps cpuidle-haltpoll from loading), shortens the round trip "
      "against no polling as host polling does. A kernel with the haltpoll governor built "
      "in (`CONFIG_CPU_IDLE_GOV_HALTPOLL=y`) would be the direct test of the seed's claim; "
      "the Debian cloud kernel has none."]),
    ("Seed 003: the vcpu_id pivot of directed yield",
     "\"[PATCH RFC 1/1] kvm: Use vcpu_id as pivot instead of last boosted vcpu in PLE "
     "handler\" (Raghavendra K T, Aug-Sept 2012): ebizzy records/s in a 32-vCPU guest on a "
     "32-core PLE machine, vcpu_id against last_boosted: 1863.4 vs 1955.6 at 1x (-4.7%), "
     "3078.9 vs 2475.4 at 2x (+24.4%); on a second machine (16 cores, HT) -0.4% at 1x and "
     "+12.3% at 2x. pollux: `make bench-full B=linux-ebizzy`, one 4-vCPU VM on 4 CPUs of "
     "Bochs VMX (1x) and two (2x), `pv=none` with the test-and-set spinlock, the "
     "ebizzy-shaped workload of guest-tests/linux/ebizzy.c (each VM's records/s; the mean of "
     "the VMs at 2x) and hackbench beside it.",
     [Claim("ebizzy records/s at 1x, vcpu_id / last_boosted", (1863.375, 1955.625),
            "linux-ebizzy", (EBIZZY, X1, VCPU_ID), (EBIZZY, X1, LAST), records),
      Claim("ebizzy records/s at 2x, vcpu_id / last_boosted", (3078.875, 2475.375),
            "linux-ebizzy", (EBIZZY, X2, VCPU_ID), (EBIZZY, X2, LAST), records)] +
     [Info(f"hackbench s at {x[:2]}, {p}", "linux-ebizzy", (HACKBENCH, x, p), seconds, 2)
      for x in (X1, X2) for p in (LAST, VCPU_ID)],
     ["ebizzy is not packaged in Debian; guest-tests/linux/ebizzy.c has its shape: threads "
      "(one per CPU) that map a chunk, copy a source chunk into it, bsearch it for a record "
      "and unmap it, counting records per second (its chunks are always mmap'ed, as "
      "`ebizzy -m`: every record takes page faults and a TLB shootdown under the mm's "
      "lock)."]),
]

SEED_004 = [
    "## Seed 004: Idle HLT (HLT exits 262080 to 0)",
    "",
    "\"Re: [PATCH v3 0/5] Add support for the Idle HLT intercept feature\" (Manali Shukla, 28 "
    "May 2024): kvm-unit-tests' vmexit.flat idle-HLT test (`cli; self-IPI; safe_halt`) "
    "took 262080 HLT exits without the feature and none with it, on AMD hardware that has "
    "it.",
    "",
    "No emulator here has Idle HLT (QEMU 7.2 and Bochs 2.7 offer no such intercept), so no "
    "row of pollux's can be set beside it. What is shown:",
    "",
    "- the choice of intercept, both sides: `tests/unit/test_hlt_intercept.c` (Idle HLT only "
    "where the CPU has it and `idle_hlt=auto`, and what the backend is told);",
    "- the fallback, booted: `qemu-selfipi` and `bochs-ryzen-selfipi` (tests/boot/suite.py) "
    "run `selfipi`, N times `cli; self-IPI; sti; hlt`, and check that every HLT exits "
    "(`hlt_exits` N, less those in the STI shadow) and every IPI is handled once;",
    "- the decision in the benchmark: `make bench B=selfipi` per `idle_hlt` mode.",
    "",
    "The command for a host that has it (bare-metal AMD Zen 5):",
    "",
    "```sh",
    "make all",
    "python3 tools/run.py --iso-only build/selfipi.iso --guests \"selfipi:args=1000\"",
    "python3 tools/run.py --iso-only build/selfipi-off.iso --args idle_hlt=off \\",
    "    --guests \"selfipi:args=1000\"",
    "```",
    "",
    "then boot each ISO on the Zen 5 machine (a USB stick, or its BMC's virtual CD), the "
    "console on COM1 at 115200 baud (README.md's `GUESTS` and `ARGS` are these): `@boot` "
    "says `\"hlt_intercept\":\"idle_hlt\"` and `selfipi`'s `@bench` line "
    "`\"hlt_exits\":0` with the first, `\"hlt_intercept\":\"hlt\"` and 1000 with the second: "
    "the seed's 262080 to 0 at pollux's scale.",
]


def wrap(paragraph):
    """A paragraph at the docs' width, a list item's lines under its text."""
    marker = re.match(r"(\d+\. |- | +)", paragraph)
    indent = " " * len(marker.group(1)) if marker else ""
    first = indent if paragraph.startswith(" ") else ""
    return textwrap.fill(paragraph.lstrip(" ") if first else paragraph, 92,
                         initial_indent=first, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False).split("\n")


def render(results):
    lines = ["# The seeds beside pollux", ""] + wrap(
             "Generated by `make seeds` (tools/seeds.py) from bench-results/*.json; do not "
             "edit. Each claim row: the seed's two published numbers and their ratio, "
             "pollux's medians of the two cells and the ratio of the medians with its 95% "
             "interval (the two-level cluster bootstrap of tools/benchstats.py over boots and "
             "repetitions, the boots paired by seed), and the verdict: \"no difference "
             "detected\" when the interval holds 1, \"same direction\" when pollux's ratio is "
             "on the seed's side of 1, \"opposite\" otherwise. \"not run yet\" names the "
             "matrix that fills the row (docs/linux.md, \"Running a matrix\"; RESUME=1 "
             "continues one across sessions).") + [""]
    for title, source, rows, notes in SEEDS:
        lines += [f"## {title}", ""] + wrap(source) + [""] + table(rows, results) + [""]
        for note in notes:
            lines += wrap(note) + [""]
    lines += [w for line in SEED_004 for w in (wrap(line) if line and not line.startswith(
        ("#", "```", "make", "python3", "    ")) else [line])]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", default=RESULTS_DIR, help="the results files' folder")
    p.add_argument("--out", default=OUT, help="the document to write")
    a = p.parse_args()
    text = render(load(a.results))
    with open(a.out, "w") as f:
        f.write(text)
    print(f"seeds: wrote {os.path.relpath(a.out, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
